/**
 * Execute: the pending rollouts through a bounded pool, each into its own
 * folder with result.json written last and atomically. A rollout that could
 * not start (its image did not build, its policy could not be generated)
 * still gets a result: an infra_error, which no rate counts.
 */
import { mapPool } from '../core/index.ts';
import type { AuthbenchError } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import type { ReplayEntry } from '../agent/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { rolloutDir, writeResult } from './jobdir.ts';
import type { PreparedJob, Unstartable } from './prepare.ts';
import type { RolloutResult } from './result.ts';
import { runRollout } from './rollout.ts';

/** One rollout, given its inputs and folder (default runRollout: a container, the episode, the validators). */
export type RolloutRunner = typeof runRollout;

export interface ExecuteOptions {
  engine: Engine;
  config: EvalConfig;
  /** The job's folder. */
  dir: string;
  jobId: string;
  concurrency: number;
  replay?: readonly ReplayEntry[];
  /** Aborting stops new rollouts from starting; running ones finish and are kept. */
  signal?: AbortSignal;
  onStart?: (spec: RolloutSpec) => void;
  onDone?: (spec: RolloutSpec, result: RolloutResult) => void;
  runRollout?: RolloutRunner;
}

export interface Execution {
  results: Map<string, RolloutResult>;
  /** Some pending rollout was not started because the signal was aborted. */
  interrupted: boolean;
}

export async function executeJob(pending: readonly RolloutSpec[], prepared: PreparedJob, options: ExecuteOptions): Promise<Execution> {
  const run = options.runRollout ?? runRollout;
  const results = new Map<string, RolloutResult>();
  let interrupted = false;
  await mapPool(pending, options.concurrency, async (spec) => {
    if (options.signal?.aborted === true) {
      interrupted = true;
      return;
    }
    const dir = await rolloutDir(options.dir, spec);
    options.onStart?.(spec);
    const inputs = await prepared.inputsFor(spec);
    const result =
      'failure' in inputs
        ? unstartedResult(spec, options.config, inputs)
        : await run(spec, {
            ...inputs,
            engine: options.engine,
            config: options.config,
            ...(options.replay === undefined ? {} : { replay: options.replay }),
            jobId: options.jobId,
            dir,
          });
    await writeResult(dir, result);
    results.set(spec.id, result);
    options.onDone?.(spec, result);
  });
  return { results, interrupted };
}

/** The result of a rollout that never started: an infrastructure error of its preparation. Pure. */
export function unstartedResult(spec: RolloutSpec, config: Pick<EvalConfig, 'model'>, why: Unstartable): RolloutResult {
  const { task } = why;
  const error: AuthbenchError = why.failure;
  return {
    schema_version: 1,
    rollout_id: spec.id,
    task_id: task.id,
    dataset: task.dataset,
    stage: task.authbench.stage,
    family: task.authbench.family ?? null,
    cluster: task.authbench.cluster,
    model: config.model,
    policy_source: spec.policy,
    policy_sha256: null,
    defense: { name: spec.defense, version: 'none' },
    attempt: spec.attempt,
    seed: spec.seed,
    status: 'infra_error',
    infra_error: { source: why.source, code: error.code, message: error.message },
    utility_success: null,
    attack_success: null,
    metrics: null,
    static_score: null,
    end_reason: null,
    enforcement: null,
    totals: null,
    image: null,
    duration_ms: 0,
  };
}
