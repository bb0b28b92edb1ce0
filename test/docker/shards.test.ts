/**
 * Shards of one job through the real CLI and Docker: two `eval --shard I/N` processes started at
 * once on one new job run every rollout of the unsharded plan exactly once; a shard killed
 * (SIGKILL) in the middle of a rollout leaves a claim that goes stale, and a resume of that shard
 * takes it over, so every rollout still ends exactly once. Scripted oracle on starter tasks.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanManaged, connectDocker } from '../../docker/index.ts';
import { shardAssignment, type RolloutResult, type RolloutSpec } from '../../evaluation/index.ts';

const jobs = mkdtempSync(join(tmpdir(), 'authbench-shards-'));
afterAll(() => rmSync(jobs, { recursive: true, force: true }));

const CLI = ['bin/authbench.ts'];

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cliAsync(args: string[]): { done: Promise<Run>; kill: () => void } {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<Run>((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
  return { done, kill: () => child.kill('SIGKILL') };
}

function cli(args: string[]): Run {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every result.json of the job, and the rollout folders (anything but claims/). */
function onDisk(job: string): { results: RolloutResult[]; folders: string[] } {
  const dir = join(jobs, job);
  const folders = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'claims')
    .map((d) => d.name);
  const results = folders.flatMap((f) => (existsSync(join(dir, f, 'result.json')) ? [JSON.parse(readFileSync(join(dir, f, 'result.json'), 'utf8')) as RolloutResult] : []));
  return { results, folders };
}

const claimsOf = (job: string): string[] => (existsSync(join(jobs, job, 'claims')) ? readdirSync(join(jobs, job, 'claims')).filter((n) => n.endsWith('.json')) : []);

function dryRun(flags: string[]): RolloutSpec[] {
  const r = cli(['eval', '--jobs-dir', jobs, ...flags, '--dry-run', '--json']);
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { rollouts: RolloutSpec[] }).rollouts;
}
const dryRunIds = (flags: string[]): string[] => dryRun(flags).map((x) => x.id).sort();

async function cleanJob(name: string): Promise<void> {
  const engine = await connectDocker();
  await cleanManaged(engine, { labels: { 'authbench.run': `job-${name}` } });
}

describe('eval --shard', () => {
  it('two shards started at once run the unsharded plan, every rollout exactly once', async () => {
    const name = 'two-shards';
    const flags = ['--model', 'scripted/oracle', '--policy', 'gold', '--policy', 'allow-all', '-i', 'csv-*', '-i', 'log-*', '-i', 'ini-*', '--job-name', name];
    const plan = dryRun(flags);
    const planned = plan.map((x) => x.id).sort();
    expect(planned).toHaveLength(6);

    const shards = ['1/2', '2/2'].map((s) => cliAsync(['eval', '--jobs-dir', jobs, '--json', ...flags, '--shard', s, '-n', '1']));
    const runs = await Promise.all(shards.map((s) => s.done));
    for (const r of runs) expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const outputs = runs.map((r) => JSON.parse(r.stdout) as { shard: string; planned: number; done: number; busy: number });
    expect(outputs.map((o) => [o.shard, o.planned, o.done, o.busy])).toEqual([
      ['1/2', 3, 3, 0],
      ['2/2', 3, 3, 0],
    ]);

    const { results, folders } = onDisk(name);
    expect(folders.sort()).toEqual(planned);
    expect(results.map((r) => r.rollout_id).sort()).toEqual(planned);
    const assigned = shardAssignment(plan, 2);
    for (const r of results) {
      expect(r.shard, r.rollout_id).toBe(`${assigned.get(r.rollout_id) ?? 0}/2`);
      expect(r.status, r.rollout_id).toBe('completed');
    }
    expect(claimsOf(name)).toEqual([]);

    const status = cli(['status', join(jobs, name), '--json']);
    expect(status.status, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { total: object }).total).toMatchObject({ planned: 6, done: 6, claimed: 0, stale: 0, pending: 0 });
    // report reads the sharded job like any other: every rollout, nothing unfinished.
    const report = cli(['report', join(jobs, name), '--json', '--out', join(jobs, 'two-shards-report')]);
    expect(report.status, report.stderr).toBe(0);
    const [reported] = (JSON.parse(report.stdout) as { jobs: { results: number; unfinished: number }[] }).jobs;
    expect(reported).toMatchObject({ results: 6, unfinished: 0 });
    await cleanJob(name);
  });

  it('a shard killed mid-rollout leaves a stale claim that its resume takes over: each rollout ends exactly once', async () => {
    const name = 'killed-shard';
    const flags = ['--model', 'scripted/oracle', '--policy', 'gold', '-i', 'csv-*', '-i', 'log-*', '--job-name', name];
    const planned = dryRunIds(flags);
    expect(planned).toHaveLength(2);
    const staleSec = 3;

    // Kill hard as soon as shard 1 claims its rollout: the claim stays behind, its heartbeat stops.
    const shard = cliAsync(['eval', '--jobs-dir', jobs, ...flags, '--shard', '1/2', '-n', '1', '--claim-stale', String(staleSec)]);
    const claimed = await new Promise<string>((resolve, reject) => {
      const deadline = Date.now() + 180_000;
      const poll = setInterval(() => {
        const [first] = claimsOf(name);
        if (first !== undefined || Date.now() > deadline) {
          clearInterval(poll);
          shard.kill();
          if (first === undefined) reject(new Error('shard 1/2 claimed nothing in time'));
          else resolve(first.slice(0, -'.json'.length));
        }
      }, 100);
    });
    await shard.done;
    expect(onDisk(name).results.map((r) => r.rollout_id)).not.toContain(claimed);
    expect(claimsOf(name)).toEqual([`${claimed}.json`]);

    // While the dead shard's claim is fresh, status says so; once it is older than the limit, stale.
    const claimFile = join(jobs, name, 'claims', `${claimed}.json`);
    while (Date.now() - statSync(claimFile).mtimeMs <= (staleSec + 0.5) * 1000) await new Promise((r) => setTimeout(r, 200));
    const stale = cli(['status', join(jobs, name), '--json', '--claim-stale', String(staleSec)]);
    expect((JSON.parse(stale.stdout) as { total: object }).total).toMatchObject({ planned: 2, stale: 1, done: 0 });

    const resumed = cli(['eval', '--jobs-dir', jobs, '--json', '--job-name', name, '--resume', '--shard', '1/2', '--claim-stale', String(staleSec)]);
    expect(resumed.status, resumed.stderr.slice(-2000)).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ shard: '1/2', planned: 1, done: 1, busy: 0 });
    // Shard 2 never ran: an unsharded resume finishes the job without touching shard 1's result.
    const rest = cli(['eval', '--jobs-dir', jobs, '--json', '--job-name', name, '--resume']);
    expect(rest.status, rest.stderr.slice(-2000)).toBe(0);
    expect(JSON.parse(rest.stdout)).toMatchObject({ planned: 2, done: 2, reused: 1 });

    const { results, folders } = onDisk(name);
    expect(folders.sort()).toEqual(planned);
    expect(results.map((r) => r.rollout_id).sort()).toEqual(planned);
    expect(results.every((r) => r.status === 'completed' && r.utility_success === true)).toBe(true);
    expect(results.find((r) => r.rollout_id === claimed)?.shard).toBe('1/2');
    expect(claimsOf(name)).toEqual([]);
    await cleanJob(name);
  });
});
