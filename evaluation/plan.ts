/**
 * Plan: which rollouts a job has and which of them are already done. Pure —
 * from the config, the selected task ids and the results found in the job's
 * folder — so resume is decided in one place that reads nothing.
 */
import { planRollouts, type EvalConfig, type RolloutSpec } from './config.ts';
import { compareStrings } from '../core/index.ts';
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

/** Shard `index` of `count` (1-based): `eval --shard I/N`. Not part of the job's config: every shard shares it. */
export interface Shard {
  index: number;
  count: number;
}

/** `I/N`, as the flag, the claims and result.json write it. */
export function shardLabel(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/**
 * Which shard runs each rollout: the k-th rollout (0-based) of the job's full plan sorted by id
 * goes to shard `k mod N + 1`. By id rather than plan order so the rule needs nothing but the plan,
 * and round-robin so every shard gets a share of each task (ids group by task). One exception:
 * the `generated` rollouts of one task and attempt share one generated policy (one model call,
 * used by every defense), so they count as one unit, placed by its first id. Pure.
 */
export function shardAssignment(rollouts: readonly Pick<RolloutSpec, 'id' | 'taskId' | 'policy' | 'attempt'>[], count: number): Map<string, number> {
  const units = new Map<string, string[]>();
  for (const r of [...rollouts].sort((a, b) => compareStrings(a.id, b.id))) {
    const unit = r.policy === 'generated' ? `${r.taskId}\u0000generated\u0000${r.attempt}` : r.id;
    units.set(unit, [...(units.get(unit) ?? []), r.id]);
  }
  // Units in order of their first id: members were added in id order, so Map order is that order.
  return new Map([...units.values()].flatMap((ids, k) => ids.map((id) => [id, (k % count) + 1] as const)));
}

/** The shard's slice of a plan: its rollouts, those of them already complete, and those to run. Pure. */
export function shardPlan(plan: JobPlan, shard: Shard | undefined): JobPlan {
  if (shard === undefined) return plan;
  const assigned = shardAssignment(plan.rollouts, shard.count);
  const mine = (id: string): boolean => assigned.get(id) === shard.index;
  return {
    rollouts: plan.rollouts.filter((r) => mine(r.id)),
    reused: new Map([...plan.reused].filter(([id]) => mine(id))),
    pending: plan.pending.filter((r) => mine(r.id)),
  };
}
