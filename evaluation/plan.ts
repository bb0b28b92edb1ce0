/**
 * Plan: which rollouts a job has and which of them are already done. Pure —
 * from the config, the selected task ids and the results found in the job's
 * folder — so resume is decided in one place that reads nothing.
 */
import { planRollouts, type EvalConfig, type RolloutSpec } from './config.ts';
import type { RolloutResult } from './result.ts';

export interface JobPlan {
  /** Every rollout of the job, in a stable order. */
  rollouts: RolloutSpec[];
  /** Rollouts with a complete result from an earlier run, kept as they are. */
  reused: ReadonlyMap<string, RolloutResult>;
  /** Rollouts to run now: exactly the others. */
  pending: RolloutSpec[];
}

/**
 * A rollout is complete when its result is `completed` (whatever its outcome):
 * an infrastructure error says nothing about the agent, so resume runs it again.
 * A result whose id is not the rollout's own (a folder copied by hand) is not its result.
 */
export function isComplete(spec: RolloutSpec, result: RolloutResult | undefined): result is RolloutResult {
  return result !== undefined && result.status === 'completed' && result.rollout_id === spec.id;
}

export function planJob(
  taskIds: readonly string[],
  config: Pick<EvalConfig, 'policies' | 'defenses' | 'attempts' | 'seed'>,
  existing: ReadonlyMap<string, RolloutResult>,
): JobPlan {
  const rollouts = planRollouts(taskIds, config);
  const reused = new Map<string, RolloutResult>();
  const pending: RolloutSpec[] = [];
  for (const spec of rollouts) {
    const found = existing.get(spec.id);
    if (isComplete(spec, found)) reused.set(spec.id, found);
    else pending.push(spec);
  }
  return { rollouts, reused, pending };
}
