/**
 * `eval --executor slurm`: one Slurm array job whose tasks are the shards of
 * an eval job (`authbench eval --resume --shard $SLURM_ARRAY_TASK_ID/N`),
 * followed from the submitting process by reading the job folder and the
 * queue. The shards need nothing from this process: the job's config is in
 * its folder before anything is submitted, rollouts are claimed there
 * (evaluation/claims.ts), and each node builds or reuses images by content
 * hash on its own engine.
 *
 * What a node needs: the job folder, the tasks and authbench itself at the
 * same paths as here (a shared filesystem, as usual on a cluster: the
 * batch script names absolute paths), Node 24 and a Docker engine — the
 * node-local daemon by default, or whatever DOCKER_HOST the job's
 * environment names (sbatch exports the submitting environment).
 *
 * The builders and parsers are pure; `SlurmCli` runs the three commands
 * (sbatch, squeue, scancel) through an injectable runner.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { AuthbenchError } from '../core/index.ts';

/** Where a job's Slurm files go: the batch script, each shard's output and exit status. */
export const SLURM_DIR = 'slurm';

export interface ArraySubmission {
  /** The eval job's name and the absolute jobs folder. */
  name: string;
  jobsDir: string;
  /** Shards (array tasks 1..shards). */
  shards: number;
  /** The program the shards run: `node` and authbench's entry, absolute. */
  authbench: { node: string; entry: string };
  /** The working directory the job's relative paths are relative to (the submitting one). */
  cwd: string;
  /** Flags passed to every shard after `eval --job-name … --resume --shard I/N` (concurrency, claims). */
  shardArgs: readonly string[];
  partition?: string;
  /** Extra `sbatch` arguments, as given (`--sbatch-arg=--time=60`), after ours so they win. */
  sbatchArgs: readonly string[];
}

/** POSIX shell single quotes: the one quoting that needs no escapes but its own. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The job folder of a submission. */
export const jobDirOf = (s: Pick<ArraySubmission, 'jobsDir' | 'name'>): string => join(s.jobsDir, s.name);

/** A shard's exit-status file: written by the batch script once its eval has ended. */
export const exitFileOf = (jobDir: string, slurmJobId: string, shard: number): string => join(jobDir, SLURM_DIR, `${slurmJobId}_${shard}.exit`);

/** A shard's output (sbatch's `%A_%a`). */
export const outputFileOf = (jobDir: string, slurmJobId: string, shard: number): string => join(jobDir, SLURM_DIR, `${slurmJobId}_${shard}.out`);

/**
 * The batch script. The shard index comes from Slurm, the rest is fixed
 * here; the exit status goes to a file written atomically (rename), so the
 * follower can tell a shard that failed from one that never ended (killed
 * with its node, cancelled) without Slurm accounting. Pure.
 */
export function batchScript(s: ArraySubmission): string {
  const dir = jobDirOf(s);
  const slurm = join(dir, SLURM_DIR);
  const shardRun = [
    shellQuote(s.authbench.node),
    shellQuote(s.authbench.entry),
    'eval',
    '--job-name',
    shellQuote(s.name),
    '--jobs-dir',
    shellQuote(s.jobsDir),
    '--resume',
    '--shard',
    `"$SLURM_ARRAY_TASK_ID/${s.shards}"`,
    ...s.shardArgs.map(shellQuote),
  ].join(' ');
  const exitFile = `${shellQuote(slurm)}/"$SLURM_ARRAY_JOB_ID"_"$SLURM_ARRAY_TASK_ID"`;
  return [
    '#!/bin/sh',
    `# A shard of authbench eval job ${s.name}, written by \`authbench eval --executor slurm\`.`,
    `#SBATCH --job-name=${`authbench-${s.name}`.replace(/\s/g, '_')}`,
    `#SBATCH --array=1-${s.shards}`,
    `cd ${shellQuote(s.cwd)} || exit 125`,
    shardRun,
    'rc=$?',
    `printf '%s\\n' "$rc" > ${exitFile}.exit.tmp && mv ${exitFile}.exit.tmp ${exitFile}.exit`,
    'exit "$rc"',
    '',
  ].join('\n');
}

/**
 * `sbatch` argv for the script: parsable output (the job id alone), each
 * shard's output in the job folder (an argument, not a directive: directives
 * do not quote), then the user's partition and arguments. Pure.
 */
export function sbatchArgv(s: Pick<ArraySubmission, 'jobsDir' | 'name' | 'partition' | 'sbatchArgs'>, scriptPath: string): string[] {
  const output = join(jobDirOf(s), SLURM_DIR, '%A_%a.out');
  return ['--parsable', `--output=${output}`, ...(s.partition === undefined ? [] : [`--partition=${s.partition}`]), ...s.sbatchArgs, scriptPath];
}

/** The job id of `sbatch --parsable` output (`123` or `123;cluster`). Pure; undefined when it is not one. */
export function parseSbatchId(stdout: string): string | undefined {
  const first = stdout.trim().split('\n').at(-1)?.split(';')[0]?.trim() ?? '';
  return /^\d+$/.test(first) ? first : undefined;
}

export interface QueuedTask {
  /** The array task index, or undefined for the job's pending remainder (`123_[1-4]`). */
  shard: number | undefined;
  /** Slurm's long state name: PENDING, RUNNING, COMPLETING… */
  state: string;
}

/**
 * `squeue -h -r -j ID -o '%i|%T'` lines: `123_2|RUNNING`, `123_[3-4]|PENDING`
 * (`-r` lists every task, but a pending remainder may still show as a range). Pure.
 */
export function parseSqueue(stdout: string, slurmJobId: string): QueuedTask[] {
  const out: QueuedTask[] = [];
  for (const line of stdout.split('\n')) {
    const [id, state] = line.trim().split('|');
    if (id === undefined || state === undefined || (id !== slurmJobId && !id.startsWith(`${slurmJobId}_`))) continue;
    const task = /^\d+_(\d+)$/.exec(id)?.[1];
    out.push({ shard: task === undefined ? undefined : Number(task), state });
  }
  return out;
}

/** How a shard ended, read from its exit file: the status, or undefined when it never wrote one. Pure. */
export function parseExitFile(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text.trim());
  return Number.isInteger(n) && text.trim() !== '' ? n : undefined;
}

export type Runner = (file: string, args: readonly string[]) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

const run: Runner = async (file, args) => {
  const r = await execa(file, [...args], { reject: false, timeout: 60_000 });
  if (r.failed && r.exitCode === undefined) {
    const missing = (r as { code?: string }).code === 'ENOENT';
    if (missing) {
      throw new AuthbenchError('CLUSTER_UNAVAILABLE', `${file} is not on PATH`, {
        hint: 'eval --executor slurm runs on a Slurm submit host (sbatch, squeue, scancel on PATH); --executor local runs here',
      });
    }
    throw new AuthbenchError('CLUSTER_UNAVAILABLE', `${file} could not run: ${r.shortMessage}`);
  }
  return { exitCode: r.exitCode ?? 1, stdout: String(r.stdout), stderr: String(r.stderr) };
};

/** The scheduler commands, each an infrastructure error (exit 125) when it fails: the cluster, not the job, is at fault. */
export class SlurmCli {
  readonly #run: Runner;
  constructor(runner: Runner = run) {
    this.#run = runner;
  }

  /** Submit the script; its job id. */
  async submit(s: Pick<ArraySubmission, 'jobsDir' | 'name' | 'partition' | 'sbatchArgs'>, scriptPath: string): Promise<string> {
    const r = await this.#run('sbatch', sbatchArgv(s, scriptPath));
    const id = r.exitCode === 0 ? parseSbatchId(r.stdout) : undefined;
    if (id === undefined) {
      throw new AuthbenchError('CLUSTER_UNAVAILABLE', `sbatch refused the job (exit ${r.exitCode})`, {
        file: scriptPath,
        details: [r.stderr.trim() || r.stdout.trim()].filter((l) => l !== ''),
        hint: 'check --partition and --sbatch-arg; `sinfo` lists partitions',
      });
    }
    return id;
  }

  /** The job's tasks still in the queue (empty once every shard has ended). */
  async queued(slurmJobId: string): Promise<QueuedTask[]> {
    const r = await this.#run('squeue', ['-h', '-r', '-j', slurmJobId, '-o', '%i|%T']);
    // Once a job has left the queue some Slurm versions answer "Invalid job id" instead of nothing.
    if (r.exitCode !== 0 && /invalid job id/i.test(r.stderr)) return [];
    if (r.exitCode !== 0) throw new AuthbenchError('CLUSTER_UNAVAILABLE', `squeue failed (exit ${r.exitCode})`, { details: [r.stderr.trim()].filter((l) => l !== '') });
    return parseSqueue(r.stdout, slurmJobId);
  }

  async cancel(slurmJobId: string): Promise<void> {
    const r = await this.#run('scancel', [slurmJobId]);
    if (r.exitCode !== 0) throw new AuthbenchError('CLUSTER_UNAVAILABLE', `scancel ${slurmJobId} failed (exit ${r.exitCode})`, { details: [r.stderr.trim()].filter((l) => l !== '') });
  }
}
