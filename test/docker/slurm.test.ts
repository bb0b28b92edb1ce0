/**
 * `eval --executor slurm` on a real one-node Slurm cluster (munge, slurmctld, slurmd started by the
 * test): the job submitted as a 2-task array, each task `eval --resume --shard I/2` on the node,
 * equals a local run of the same plan — same rollout ids, same outcomes with the scripted oracle,
 * each rollout written once, both shards ended with status 0. Without sbatch on PATH the executor
 * says so with exit 125 and writes nothing. Skipped (visibly) where the cluster cannot start.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutResult } from '../../evaluation/index.ts';
import { slurmUnavailable, startSlurmCluster, type SlurmCluster } from './slurm-cluster.ts';

const unavailable = slurmUnavailable();
const jobs = mkdtempSync(join(tmpdir(), 'authbench-slurm-jobs-'));
let cluster: SlurmCluster | undefined;

beforeAll(async () => {
  if (unavailable === undefined) cluster = await startSlurmCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(jobs, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, ['bin/authbench.ts', ...args], { encoding: 'utf8', timeout: 400_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Each rollout folder's result (folders other than slurm/ and claims/ must all have one). */
function results(job: string): Map<string, RolloutResult> {
  const dir = join(jobs, job);
  const folders = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'slurm' && d.name !== 'claims');
  return new Map(folders.map((d) => [d.name, JSON.parse(readFileSync(join(dir, d.name, 'result.json'), 'utf8')) as RolloutResult]));
}

const outcome = (r: RolloutResult): unknown => [r.status, r.utility_success, r.attack_success];

const FLAGS = ['--model', 'scripted/oracle', '--policy', 'gold', '--policy', 'allow-all', '-i', 'csv-*', '-i', 'log-*'];

describe.skipIf(unavailable !== undefined)(`eval --executor slurm${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`, () => {
  it('a 2-shard array over starter tasks equals a local run of the same plan', () => {
    const local = cli(['eval', '--jobs-dir', jobs, '--job-name', 'local', '--json', ...FLAGS]);
    expect(local.status, local.stderr.slice(-2000)).toBe(0);

    const env = cluster?.env ?? {};
    const slurm = cli(['eval', '--jobs-dir', jobs, '--job-name', 'on-slurm', '--json', ...FLAGS, '--executor', 'slurm', '--array-size', '2'], env);
    expect(slurm.status, `${slurm.stderr.slice(-3000)}\n${cluster?.logs() ?? ''}`).toBe(0);
    const out = JSON.parse(slurm.stdout) as { planned: number; done: number; incomplete: boolean };
    expect([out.planned, out.done, out.incomplete]).toEqual([4, 4, false]);

    const [mine, theirs] = [results('local'), results('on-slurm')];
    expect([...theirs.keys()].sort()).toEqual([...mine.keys()].sort());
    for (const [id, r] of theirs) expect(outcome(r), id).toEqual(outcome(mine.get(id) as RolloutResult));
    expect([...mine.values()].map((r) => r.utility_success)).toContain(true);
    // Both array tasks ran a shard of it, and each ended with status 0 (written by the batch script).
    const slurmDir = join(jobs, 'on-slurm', 'slurm');
    const exits = readdirSync(slurmDir).filter((f) => f.endsWith('.exit')).sort();
    expect(exits.map((f) => f.replace(/^\d+_/, ''))).toEqual(['1.exit', '2.exit']);
    for (const f of exits) expect(readFileSync(join(slurmDir, f), 'utf8')).toBe('0\n');
    expect(existsSync(join(slurmDir, 'shards.sh'))).toBe(true);
  }, 600_000);

  it('without sbatch on PATH: exit 125, naming the command, and no job folder', () => {
    const r = cli(['eval', '--jobs-dir', jobs, '--job-name', 'no-sbatch', ...FLAGS, '--executor', 'slurm'], { PATH: '/nonexistent' });
    expect(r.status, r.stderr).toBe(125);
    expect(r.stderr).toContain('sbatch is not on PATH');
    expect(existsSync(join(jobs, 'no-sbatch'))).toBe(false);
  });
});
