/**
 * `eval --shard I/N` and `authbench status` at the CLI, without Docker: bad shards exit 1 naming
 * the flag, a shard's dry run prints its slice (the slices together are the unsharded plan), and
 * status reads a job folder several shards wrote.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeEngine } from '../../docker/test-support.ts';
import { configFromFlags, runJob } from '../../evaluation/index.ts';
import { fakeResult } from '../../evaluation/test-support.ts';
import { runCli } from '../../test/cli.ts';

const TASKS = fileURLToPath(new URL('../../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../../oracle-traces', import.meta.url));

let dir = '';
const dockerHost = process.env['DOCKER_HOST'];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-shard-cli-'));
  // No daemon: every refusal here comes before Docker is touched.
  process.env['DOCKER_HOST'] = `unix://${join(dir, 'no-docker.sock')}`;
});
afterAll(async () => {
  if (dockerHost === undefined) delete process.env['DOCKER_HOST'];
  else process.env['DOCKER_HOST'] = dockerHost;
  await rm(dir, { recursive: true, force: true });
});

const local = (...args: string[]) => runCli('eval', '--jobs-dir', join(dir, 'jobs'), '--tasks', TASKS, '--oracle-traces', TRACES, ...args);
const ids = (out: string): string[] => (JSON.parse(out) as { rollouts: { id: string }[] }).rollouts.map((r) => r.id);

describe('eval --shard', () => {
  it.each(['3/2', '0/2', 'a/b', '1/0', '1', '1/2/3', '2/1', ''])('exits 1 naming --shard for %j', async (value) => {
    const r = await local('--model', 'scripted/oracle', '--job-name', 'bad', '--shard', value, 'log-triage', '--dry-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`authbench: --shard ${value}: expected I/N with 1 ≤ I ≤ N`);
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });

  it('needs --job-name, the job every shard shares', async () => {
    const r = await local('--model', 'scripted/oracle', '--shard', '1/2', 'log-triage', '--dry-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain('--shard needs --job-name');
  });

  it('dry-runs the shard\'s slice; the slices together are the unsharded plan, each rollout in one', async () => {
    const flags = ['--model', 'scripted/oracle', '--job-name', 'split', 'log-triage', 'csv-sales-report', '--policy', 'gold', '--policy', 'allow-all', '-k', '2', '--dry-run', '--json'];
    const whole = await local(...flags);
    expect(whole.code, whole.err).toBe(0);
    // One at a time: runCli captures the process's stdout.
    const slices = [];
    for (const s of ['1/3', '2/3', '3/3']) slices.push(await local(...flags, '--shard', s));
    for (const s of slices) expect(s.code, s.err).toBe(0);
    const parts = slices.map((s) => ids(s.out));
    expect(parts.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(parts.flat().sort()).toEqual(ids(whole.out).sort());
    expect((JSON.parse(slices[1]?.out ?? '{}') as { shard?: string }).shard).toBe('2/3');
    const text = await local(...flags.filter((f) => f !== '--json'), '--shard', '1/3');
    expect(text.out).toMatch(/dry run of .*split shard 1\/3 \(scripted\/oracle\): 2 task\(s\), 3 rollout\(s\), 3 to run/);
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });
});

describe('status', () => {
  it('counts a job two shards ran part of, per shard and in total', async () => {
    const config = configFromFlags({ model: 'scripted/oracle', tasks_dir: TASKS, oracle_traces_dir: TRACES, include: ['log-triage'], policies: ['gold', 'allow-all'], attempts: 2 });
    const jobsDir = join(dir, 'status-jobs');
    // Shard 1 of 2 only: shard 2's rollouts stay pending.
    await runJob(fakeEngine(), { config, jobsDir, name: 'half', resume: false, concurrency: 1, shard: { index: 1, count: 2 } }, { runRollout: (spec) => Promise.resolve(fakeResult(spec)) });
    const r = await runCli('status', join(jobsDir, 'half'), '--json');
    expect(r.code, r.err).toBe(0);
    const s = JSON.parse(r.out) as { shards: number; rows: { shard: string; planned: number; done: number; pending: number }[]; total: { planned: number; done: number; pending: number } };
    expect(s.shards).toBe(2);
    expect(s.total).toMatchObject({ planned: 4, done: 2, pending: 2 });
    expect(s.rows).toMatchObject([
      { shard: '1/2', planned: 2, done: 2, pending: 0 },
      { shard: '2/2', planned: 2, done: 0, pending: 2 },
    ]);
    const text = await runCli('status', join(jobsDir, 'half'));
    expect(text.out).toMatch(/^1\/2\s+2\s+2\s/m);
    expect(text.out).toMatch(/^total\s+4\s+2\s/m);
  });

  it('exits 1 for a folder that is not a job', async () => {
    const r = await runCli('status', join(dir, 'nothing-here'));
    expect(r.code).toBe(1);
    expect(r.err).toContain('is not an eval job folder');
  });
});
