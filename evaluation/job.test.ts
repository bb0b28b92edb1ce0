/**
 * A scripted/replay job's replay file: read and checked before anything is
 * built, its digest recorded in config.json and lock.json, and a changed file
 * refused on --resume. The engine here is a stand-in that fails on first use,
 * so these tests stop where Docker would begin.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { fakeEngine } from '../docker/test-support.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { fakeResult } from './test-support.ts';
import { loadJobReplay, runJob } from './job.ts';

const NO_ENGINE = 'unit test: no Docker engine';
/** Every use of the engine fails with NO_ENGINE (a plain Error, so runJob rethrows it). */
const engine = new Proxy({}, { get: (_t, key) => (key === 'then' ? undefined : () => Promise.reject(new Error(NO_ENGINE))) }) as Engine;

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-job-replay-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function replayFile(name: string, text: string): Promise<{ path: string; sha256: string }> {
  const path = join(dir, name);
  await writeFile(path, text);
  return { path, sha256: sha256(text) };
}

function config(replay: EvalConfig['replay'], model = 'scripted/replay'): EvalConfig {
  return {
    schema_version: 1,
    model,
    ...(replay === undefined ? {} : { replay }),
    tasks_dir: fileURLToPath(new URL('../tasks', import.meta.url)),
    oracle_traces_dir: fileURLToPath(new URL('../oracle-traces', import.meta.url)),
    include: ['log-triage'],
    exclude: [],
    policies: ['deny-all'],
    defenses: ['tool-boundary'],
    attempts: 1,
    seed: 0,
    max_turns: 5,
    cache: 'off',
    model_timeout_sec: 10,
    model_retries: 0,
  };
}

describe('loadJobReplay', () => {
  it('reads the commands of the file the config names', async () => {
    const replay = await replayFile('ok.json', '["ls", {"command": "make", "timeout_sec": 5}]');
    expect(await loadJobReplay(config(replay))).toEqual(['ls', { command: 'make', timeout_sec: 5 }]);
    expect(await loadJobReplay(config(undefined, 'scripted/oracle'))).toBeUndefined();
  });

  it('refuses a file whose content no longer matches the recorded digest', async () => {
    const replay = await replayFile('drift.json', '["ls"]');
    await writeFile(replay.path, '["ls", "rm -rf /app"]');
    await expect(loadJobReplay(config(replay))).rejects.toMatchObject({ code: 'CHECK_FAILED', file: replay.path, message: expect.stringContaining('changed') as unknown });
  });

  it('refuses scripted/replay without a file, and a file with another model', async () => {
    await expect(loadJobReplay(config(undefined))).rejects.toMatchObject({ code: 'INVALID_CONFIG', field: 'replay' });
    const replay = await replayFile('other.json', '["ls"]');
    await expect(loadJobReplay(config(replay, 'scripted/oracle'))).rejects.toMatchObject({ code: 'INVALID_CONFIG', field: 'replay' });
  });

  it('names the file and field of an invalid file', async () => {
    const replay = await replayFile('bad.json', '["ls", {"command": "make", "timeout_sec": 0}]');
    await expect(loadJobReplay(config(replay))).rejects.toMatchObject({ code: 'INVALID_CONFIG', file: replay.path, field: '[1].timeout_sec', message: 'must be positive' });
  });
});

describe('runJob with a replay file', () => {
  it('fails on an invalid file before anything is built or written', async () => {
    const jobs = join(dir, 'jobs-invalid');
    const replay = await replayFile('invalid.json', '{"commands": []}');
    await expect(runJob(engine, { config: config(replay), jobsDir: jobs, name: 'j', resume: false, concurrency: 1 })).rejects.toMatchObject({ code: 'INVALID_CONFIG', file: replay.path });
    expect(existsSync(jobs)).toBe(false);
  });

  it('records the file and its digest, and --resume refuses a changed file', async () => {
    const jobs = join(dir, 'jobs-resume');
    const first = await replayFile('trajectory.json', '["cat /app/logs/app.log"]');
    const deps = { runRollout: (spec: RolloutSpec) => Promise.resolve(fakeResult(spec)) };
    await runJob(fakeEngine(), { config: config(first), jobsDir: jobs, name: 'j', resume: false, concurrency: 1 }, deps);
    const written = JSON.parse(await readFile(join(jobs, 'j', 'config.json'), 'utf8')) as EvalConfig;
    expect(written.replay).toEqual(first);
    const lock = JSON.parse(await readFile(join(jobs, 'j', 'lock.json'), 'utf8')) as { config: EvalConfig };
    expect(lock.config.replay).toEqual(first);

    // Unchanged: the lock matches, so the resumed run reuses the result.
    expect((await runJob(fakeEngine(), { config: config(first), jobsDir: jobs, name: 'j', resume: true, concurrency: 1 }, deps)).reused).toBe(1);

    // Changed (as the CLI sees it: the config carries the new digest): refused before any build.
    const changed = await replayFile('trajectory.json', '["cat /app/logs/app.log", "rm -rf /app/logs"]');
    await expect(runJob(engine, { config: config(changed), jobsDir: jobs, name: 'j', resume: true, concurrency: 1 })).rejects.toMatchObject({
      code: 'CHECK_FAILED',
      message: expect.stringMatching(/inputs changed since it started \(the replay file\)/) as unknown,
    });
    // Changed behind a config that still carries the old digest: refused too.
    await expect(runJob(engine, { config: config(first), jobsDir: jobs, name: 'j', resume: true, concurrency: 1 })).rejects.toMatchObject({ code: 'CHECK_FAILED' });
  });

  it('a start refused after the checks (here: the build) leaves no job folder behind, so the name can be used again', async () => {
    const jobs = join(dir, 'jobs-refused');
    const replay = await replayFile('refused.json', '["ls"]');
    await expect(runJob(engine, { config: config(replay), jobsDir: jobs, name: 'j', resume: false, concurrency: 1 })).rejects.toThrow(NO_ENGINE);
    expect(existsSync(join(jobs, 'j'))).toBe(false);
    await expect(runJob(engine, { config: config(replay), jobsDir: jobs, name: 'j', resume: false, concurrency: 1 })).rejects.toThrow(NO_ENGINE);
  });
});
