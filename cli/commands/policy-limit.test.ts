/**
 * The *Safety* bullet "a 50 MB policy is accepted and takes 600 MB to score", at the CLI: every
 * command that reads a policy file refuses one over the limit, naming the limit, before any work.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_POLICY_BYTES } from '../../sandbox/policy/index.ts';
import { runCli } from '../../test/cli.ts';

const TASKS = fileURLToPath(new URL('../../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../../oracle-traces', import.meta.url));
let dir = '';
let big = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-policy-limit-'));
  big = join(dir, 'big.json');
  // Valid JSON, one byte over the limit.
  const head = '{"read": [], "write": [], "execute": [], "notes": "';
  await writeFile(big, `${head}${'x'.repeat(MAX_POLICY_BYTES + 1 - head.length - 2)}"}`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a policy file over the size limit', () => {
  it('eval refuses it naming the limit, and writes nothing', async () => {
    const jobs = join(dir, 'jobs');
    const r = await runCli('eval', '--jobs-dir', jobs, '--tasks', TASKS, '--oracle-traces', TRACES, '--model', 'scripted/oracle', '--policy', big, 'log-triage', '--dry-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`over the limit of ${MAX_POLICY_BYTES} bytes`);
    expect(existsSync(jobs)).toBe(false);
  });

  it('score refuses it naming the limit', async () => {
    const r = await runCli('score', '--tasks', TASKS, '--oracle-traces', TRACES, '--task', 'log-triage', '--policy', big);
    expect(r.code).toBe(1);
    expect(r.err + r.out).toContain(`over the limit of ${MAX_POLICY_BYTES} bytes`);
  });
});
