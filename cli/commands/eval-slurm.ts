/**
 * `eval --executor slurm`: the job's folder is written here (config and
 * lock), its pending rollouts go to one Slurm array job whose tasks are
 * `eval --resume --shard I/N`, and this process follows the folder until the
 * array has left the queue; it then returns the job's outcome as a local run
 * would, so eval prints the same summary. No Docker is needed here.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ArraySubmission } from '../../cluster/index.ts';
import type { EvalConfig, JobOutcome } from '../../evaluation/index.ts';

/** Shards when `--array-size` is not given: one per pending rollout, at most this many. */
export const DEFAULT_ARRAY_SIZE = 4;

export interface SlurmEvalOptions {
  config: EvalConfig;
  jobsDir: string;
  name: string;
  resume: boolean;
  arraySize: number | undefined;
  partition: string | undefined;
  sbatchArgs: readonly string[];
  /** Flags every shard gets (concurrency, claims, daemon waits), as argv. */
  shardArgs: readonly string[];
  signal: AbortSignal;
  log: (line: string) => void;
  progress: (done: number, total: number, status: string) => void;
}

/** Shards for a plan: `--array-size` as given (at most one per pending rollout), else DEFAULT_ARRAY_SIZE. Pure. */
export function arraySizeFor(pending: number, given: number | undefined): number {
  return Math.max(1, Math.min(pending, given ?? DEFAULT_ARRAY_SIZE));
}

export async function runOnSlurm(o: SlurmEvalOptions): Promise<JobOutcome> {
  const [{ createJob, everyRolloutInfra, readJobStatus, readResults }, { runArrayJob }] = await Promise.all([import('../../evaluation/index.ts'), import('../../cluster/index.ts')]);
  const base = { config: o.config, jobsDir: o.jobsDir, name: o.name };
  const fresh = !existsSync(join(o.jobsDir, o.name));
  const created = await createJob({ ...base, resume: o.resume });
  const total = created.plan.rollouts.length;
  const reusedBefore = created.plan.reused.size;
  let interrupted = false;
  if (created.plan.pending.length > 0) {
    const submission: ArraySubmission = {
      name: o.name,
      jobsDir: resolve(o.jobsDir),
      shards: arraySizeFor(created.plan.pending.length, o.arraySize),
      // The program running now, at the paths a node sees on a shared filesystem.
      authbench: { node: process.execPath, entry: resolve(process.argv[1] ?? 'bin/authbench.js') },
      cwd: process.cwd(),
      shardArgs: o.shardArgs,
      ...(o.partition === undefined ? {} : { partition: o.partition }),
      sbatchArgs: o.sbatchArgs,
    };
    let submitted = false;
    const run = await runArrayJob(submission, {
      signal: o.signal,
      onSubmitted: (id, script) => {
        submitted = true;
        o.log(`submitted Slurm job ${id}: ${submission.shards} shard(s) of ${created.plan.pending.length} rollout(s) (${script})`);
      },
      onPoll: async (queued) => {
        const status = await readJobStatus(created.dir);
        const running = queued.filter((q) => q.state === 'RUNNING').length;
        o.progress(status.total.done, total, `${running} shard(s) running, ${queued.length - running} queued`);
      },
    }).catch(async (e: unknown) => {
      // A new job Slurm never took leaves nothing behind, so the same --job-name can be used again.
      if (fresh && !submitted) await rm(created.dir, { recursive: true, force: true });
      throw e;
    });
    interrupted = run.interrupted;
    for (const s of run.shards) {
      if (s.exit === 0) continue;
      o.log(`shard ${s.shard}/${submission.shards} (Slurm ${run.slurmJobId}_${s.shard}) ${s.exit === undefined ? 'never finished' : `exited ${s.exit}`}; its output: ${s.output}`);
    }
  }
  // The folder as the shards left it: every planned rollout with a result, infrastructure errors included.
  const written = await readResults(created.dir);
  const results = created.plan.rollouts.flatMap((s) => {
    const r = written.get(s.id);
    return r === undefined ? [] : [r];
  });
  return {
    dir: created.dir,
    results,
    planned: total,
    reused: reusedBefore,
    busy: 0,
    interrupted,
    incomplete: results.length < total || results.some((r) => r.status === 'infra_error'),
    allInfra: everyRolloutInfra(results),
  };
}
