import { execa } from 'execa';
import { mkdtemp, readFile, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAuthbenchError } from '../core/index.ts';
import { runArrayJob } from './executor.ts';
import { batchScript, parseExitFile, parseSbatchId, parseSqueue, sbatchArgv, shellQuote, SlurmCli, type ArraySubmission, type QueuedTask, type Runner } from './slurm.ts';

let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'authbench-slurm-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const submission = (over: Partial<ArraySubmission> = {}): ArraySubmission => ({
  name: 'big',
  jobsDir: join(scratch, "jobs dir's"),
  shards: 3,
  authbench: { node: '/usr/bin/node', entry: '/opt/authbench/bin/authbench.js' },
  cwd: scratch,
  shardArgs: ['--concurrency', '2'],
  sbatchArgs: [],
  ...over,
});

describe('shellQuote', () => {
  it('survives single quotes, spaces and $ through a real shell', async () => {
    const nasty = `it's $HOME "x" \`id\``;
    const r = await execa('sh', ['-c', `printf %s ${shellQuote(nasty)}`]);
    expect(r.stdout).toBe(nasty);
  });
});

describe('batchScript', () => {
  it('runs the shard Slurm names with the fixed flags, and records its exit status atomically', async () => {
    // `node` is a stand-in that prints its argv and fails: the script must pass both through.
    const fake = join(scratch, 'fake-node');
    await execa('sh', ['-c', `printf '#!/bin/sh\\nprintf "%%s\\\\n" "$@" > "$AB_ARGS"; exit 3\\n' > ${shellQuote(fake)}; chmod +x ${shellQuote(fake)}`]);
    const s = submission({ authbench: { node: fake, entry: '/x/authbench.js' } });
    await mkdir(join(s.jobsDir, s.name, 'slurm'), { recursive: true });
    const args = join(scratch, 'args.txt');
    const r = await execa('sh', ['-c', batchScript(s)], { reject: false, env: { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_JOB_ID: '77', AB_ARGS: args } });
    expect(r.exitCode).toBe(3);
    expect((await readFile(args, 'utf8')).trim().split('\n')).toEqual(['/x/authbench.js', 'eval', '--job-name', 'big', '--jobs-dir', s.jobsDir, '--resume', '--shard', '2/3', '--concurrency', '2']);
    expect(await readFile(join(s.jobsDir, 'big', 'slurm', '77_2.exit'), 'utf8')).toBe('3\n');
  });

  it('declares the array and the job name; starts with #!', () => {
    const text = batchScript(submission());
    expect(text.startsWith('#!/bin/sh\n')).toBe(true);
    expect(text).toContain('#SBATCH --array=1-3\n');
    expect(text).toContain('#SBATCH --job-name=authbench-big\n');
  });
});

describe('sbatch argv and output parsing', () => {
  it('puts the output in the job folder, then the partition, then the user arguments (theirs win)', () => {
    const s = submission({ partition: 'gpu', sbatchArgs: ['--time=60'] });
    expect(sbatchArgv(s, '/j/shards.sh')).toEqual(['--parsable', `--output=${join(s.jobsDir, 'big', 'slurm', '%A_%a.out')}`, '--partition=gpu', '--time=60', '/j/shards.sh']);
  });

  it.each([
    ['123\n', '123'],
    ['123;cluster\n', '123'],
    ['sbatch: warning: x\n456\n', '456'],
    ['Submitted batch job 9\n', undefined],
    ['', undefined],
  ])('parseSbatchId(%j) = %s', (text, id) => {
    expect(parseSbatchId(text)).toBe(id);
  });

  it('reads array tasks and a pending remainder, ignores other jobs', () => {
    const out = '123_2|RUNNING\n123_[3-4]|PENDING\n1234_1|RUNNING\n99_1|RUNNING\n\n';
    expect(parseSqueue(out, '123')).toEqual([
      { shard: 2, state: 'RUNNING' },
      { shard: undefined, state: 'PENDING' },
    ]);
  });

  it.each([
    ['0\n', 0],
    ['125\n', 125],
    ['', undefined],
    ['x', undefined],
    [undefined, undefined],
  ])('parseExitFile(%j) = %s', (text, exit) => {
    expect(parseExitFile(text)).toBe(exit);
  });
});

/** A scripted scheduler: each squeue answers the next listing; commands are recorded. */
function fakeSlurm(listings: string[], sbatch = { exitCode: 0, stdout: '42\n', stderr: '' }): { runner: Runner; calls: string[][] } {
  const calls: string[][] = [];
  const runner: Runner = (file, args) => {
    calls.push([file, ...args]);
    if (file === 'sbatch') return Promise.resolve(sbatch);
    if (file === 'squeue') return Promise.resolve({ exitCode: 0, stdout: listings.shift() ?? '', stderr: '' });
    return Promise.resolve({ exitCode: 0, stdout: '', stderr: '' });
  };
  return { runner, calls };
}

describe('SlurmCli', () => {
  it('a refused submission is CLUSTER_UNAVAILABLE with sbatch own words', async () => {
    const { runner } = fakeSlurm([], { exitCode: 1, stdout: '', stderr: 'sbatch: error: invalid partition specified: gpu' });
    const e = await new SlurmCli(runner).submit(submission(), '/j/shards.sh').catch((x: unknown) => x);
    expect(isAuthbenchError(e) && e.code === 'CLUSTER_UNAVAILABLE' && e.isInfrastructure).toBe(true);
    expect(isAuthbenchError(e) ? e.details : []).toEqual(['sbatch: error: invalid partition specified: gpu']);
  });

  it('a missing sbatch says so, naming the command', async () => {
    const e = await new SlurmCli().submit(submission(), '/nonexistent').catch((x: unknown) => x);
    // Only meaningful where Slurm is not installed; where it is, the submission of a missing script fails instead.
    expect(isAuthbenchError(e) && e.code === 'CLUSTER_UNAVAILABLE').toBe(true);
  });
});

describe('runArrayJob', () => {
  it('polls until the array has left the queue, then reads each shard end', async () => {
    const s = submission({ shards: 2 });
    const { runner, calls } = fakeSlurm(['42_1|RUNNING\n42_2|RUNNING\n', '42_2|RUNNING\n', '']);
    const seen: QueuedTask[][] = [];
    // Shard 1 wrote its status; shard 2 never did (killed with its node).
    await mkdir(join(s.jobsDir, s.name, 'slurm'), { recursive: true });
    await execa('sh', ['-c', `echo 0 > ${shellQuote(join(s.jobsDir, s.name, 'slurm', '42_1.exit'))}`]);
    const run = await runArrayJob(s, { cli: new SlurmCli(runner), pollMs: 1, onPoll: (q) => void seen.push([...q]) });
    expect(run.slurmJobId).toBe('42');
    expect(run.interrupted).toBe(false);
    expect(seen.map((q) => q.length)).toEqual([2, 1, 0]);
    expect(run.shards.map((x) => [x.shard, x.exit])).toEqual([
      [1, 0],
      [2, undefined],
    ]);
    expect(calls.filter((c) => c[0] === 'scancel')).toEqual([]);
    expect(await readFile(run.script, 'utf8')).toBe(batchScript(s));
  });

  it('a cancelled run cancels the Slurm job and waits for its tasks to leave', async () => {
    const controller = new AbortController();
    const { runner, calls } = fakeSlurm(['42_1|RUNNING\n', '42_1|COMPLETING\n', '']);
    const run = await runArrayJob(submission({ shards: 1, name: 'cancelled' }), {
      cli: new SlurmCli(runner),
      pollMs: 1,
      signal: controller.signal,
      onPoll: () => controller.abort(),
    });
    expect(run.interrupted).toBe(true);
    expect(calls.filter((c) => c[0] === 'scancel')).toEqual([['scancel', '42']]);
    expect(calls.filter((c) => c[0] === 'squeue').length).toBe(3);
  });
});
