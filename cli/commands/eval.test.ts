/**
 * `authbench eval` input checks that happen before Docker is touched: the
 * scripted/replay model and its --replay file. Each bad input exits 1 and
 * names the flag or the file (and, for an element, its index and field).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/cli.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-eval-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const evalCli = (...args: string[]) => runCli('eval', '--jobs-dir', join(dir, 'jobs'), ...args);

describe('eval --model scripted/replay', () => {
  it('needs --replay', async () => {
    const r = await evalCli('--model', 'scripted/replay');
    expect(r.code).toBe(1);
    expect(r.err).toContain('authbench: INVALID_ARGUMENT: --model scripted/replay needs --replay FILE');
  });

  it('refuses --replay with any other model', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '["ls"]');
    for (const model of ['scripted/oracle', 'gpt-5']) {
      const r = await evalCli('--model', model, '--replay', file);
      expect(r.code, model).toBe(1);
      expect(r.err, model).toContain(`authbench: INVALID_ARGUMENT: --replay is only for --model scripted/replay, not ${model}`);
    }
  });

  it('refuses a repeated --replay', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '["ls"]');
    const r = await evalCli('--model', 'scripted/replay', '--replay', file, '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain('authbench: INVALID_ARGUMENT: --replay given more than once');
  });

  it.each([
    ['an invalid element', '["ls", "make", "true", {"command": "sleep 1", "timeout_sec": 0}]', ': [3].timeout_sec: must be positive'],
    ['an unknown key', '[{"command": "ls", "timout_sec": 5}]', ': [0]: Unrecognized key: "timout_sec"'],
    ['not an array', '{"commands": ["ls"]}', ': must be a JSON array of commands'],
    ['not JSON', '["ls",', ': invalid JSON: '],
  ])('exits 1 naming the file on %s', async (_name, text, expected) => {
    const file = join(dir, 'replay.json');
    await writeFile(file, text);
    const r = await evalCli('--model', 'scripted/replay', '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`authbench: INVALID_CONFIG ${file}${expected}`);
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });

  it('exits 1 naming a missing file', async () => {
    const file = join(dir, 'missing.json');
    const r = await evalCli('--model', 'scripted/replay', '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`authbench: INVALID_CONFIG ${file}: cannot read replay file: `);
  });
});
