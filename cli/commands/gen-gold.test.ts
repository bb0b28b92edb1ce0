/**
 * `authbench gen-gold --tracer` input checks that happen before Docker is
 * touched (a refusal must never turn into DOCKER_UNREACHABLE, exit 125).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/cli.ts';

let dir = '';
const dockerHost = process.env['DOCKER_HOST'];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-gen-gold-cli-'));
  process.env['DOCKER_HOST'] = `unix://${join(dir, 'no-docker.sock')}`;
});
afterAll(async () => {
  if (dockerHost === undefined) delete process.env['DOCKER_HOST'];
  else process.env['DOCKER_HOST'] = dockerHost;
  await rm(dir, { recursive: true, force: true });
});

describe('gen-gold --tracer', () => {
  it('refuses --tracer-fallback without --tracer ebpf', async () => {
    const r = await runCli('gen-gold', 'log-triage', '--tracer-fallback');
    expect(r.code).toBe(1);
    expect(r.err).toContain('INVALID_ARGUMENT: --tracer-fallback only applies to --tracer ebpf');
  });

  it('refuses --ebpf-backend without --tracer ebpf, and a backend it does not know', async () => {
    const without = await runCli('gen-gold', 'log-triage', '--ebpf-backend', 'bpftrace');
    expect(without.code).toBe(1);
    expect(without.err).toContain('INVALID_ARGUMENT: --ebpf-backend only applies to --tracer ebpf');
    const unknown = await runCli('gen-gold', 'log-triage', '--tracer', 'ebpf', '--ebpf-backend', 'dtrace');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toMatch(/ebpf-backend/);
    expect(unknown.err).toMatch(/bpftrace/);
  });

  it('accepts only strace and ebpf', async () => {
    const r = await runCli('gen-gold', 'log-triage', '--tracer', 'dtrace');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/tracer/);
    expect(r.err).toMatch(/strace/);
  });
});
