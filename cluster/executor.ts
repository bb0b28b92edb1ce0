/**
 * Submit an eval job's shards as one Slurm array and follow it to the end:
 * the batch script goes into the job folder, the queue is polled until no
 * task of the array is left, and each shard's end is read from the exit file
 * its script wrote. Cancelling (the signal) cancels the Slurm job and waits
 * for its tasks to leave the queue, so no shard outlives the command that
 * started it.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuthbenchError, writeFileAtomic } from '../core/index.ts';
import { batchScript, exitFileOf, jobDirOf, outputFileOf, parseExitFile, SLURM_DIR, SlurmCli, type ArraySubmission, type QueuedTask } from './slurm.ts';

export interface ShardEnd {
  shard: number;
  /** The shard's exit status; undefined when it never wrote one (cancelled, killed with its node). */
  exit: number | undefined;
  /** Its output file (sbatch's `--output`). */
  output: string;
}

export interface ArrayRun {
  slurmJobId: string;
  script: string;
  interrupted: boolean;
  shards: ShardEnd[];
}

export interface FollowOptions {
  /** Between two looks at the queue. */
  pollMs?: number;
  /** How long a cancelled job may take to leave the queue. */
  cancelWaitMs?: number;
  signal?: AbortSignal;
  cli?: SlurmCli;
  onSubmitted?: (slurmJobId: string, script: string) => void;
  /** After every look at the queue (the caller reads the job folder for its own progress). */
  onPoll?: (queued: readonly QueuedTask[]) => Promise<void> | void;
}

const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
}

export async function runArrayJob(submission: ArraySubmission, options: FollowOptions = {}): Promise<ArrayRun> {
  const cli = options.cli ?? new SlurmCli();
  const pollMs = options.pollMs ?? 2000;
  const dir = jobDirOf(submission);
  await mkdir(join(dir, SLURM_DIR), { recursive: true });
  const script = join(dir, SLURM_DIR, 'shards.sh');
  await writeFileAtomic(script, batchScript(submission));
  const slurmJobId = await cli.submit(submission, script);
  options.onSubmitted?.(slurmJobId, script);

  let interrupted = false;
  for (;;) {
    if (aborted(options.signal) && !interrupted) {
      interrupted = true;
      await cli.cancel(slurmJobId);
      const deadline = Date.now() + (options.cancelWaitMs ?? 60_000);
      while ((await cli.queued(slurmJobId)).length > 0) {
        if (Date.now() > deadline) throw new AuthbenchError('CLUSTER_UNAVAILABLE', `Slurm job ${slurmJobId} was cancelled but its tasks are still queued`, { hint: `scancel ${slurmJobId}; squeue -j ${slurmJobId}` });
        await sleep(Math.min(pollMs, 500));
      }
      break;
    }
    const queued = await cli.queued(slurmJobId);
    await options.onPoll?.(queued);
    if (queued.length === 0) break;
    await pause(pollMs, options.signal);
  }

  const shards: ShardEnd[] = [];
  for (let shard = 1; shard <= submission.shards; shard++) {
    const text = await readFile(exitFileOf(dir, slurmJobId, shard), 'utf8').catch(() => undefined);
    shards.push({ shard, exit: parseExitFile(text), output: outputFileOf(dir, slurmJobId, shard) });
  }
  return { slurmJobId, script, interrupted, shards };
}
