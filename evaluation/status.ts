/**
 * Where a job stands, for `authbench status`: its plan re-made from the saved config and the
 * tasks its lock recorded, against the results and claims in its folder, per shard and in total.
 * Reads only; the counting is pure.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { DEFAULT_STALE_MS, HERE, judgeClaim, readClaims, type ClaimHere, type FoundClaim } from './claims.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { readJobConfig, readResults } from './jobdir.ts';
import { planJob, shardAssignment } from './plan.ts';
import type { RolloutResult } from './result.ts';

/** One rollout's state, the first that holds: a complete result, a live claim, a stale claim, an infrastructure error, nothing yet. */
export type RolloutState = 'done' | 'claimed' | 'stale' | 'failed' | 'pending';

export interface StatusCounts {
  /** `I/N`, or `total`. */
  shard: string;
  planned: number;
  done: number;
  claimed: number;
  stale: number;
  failed: number;
  pending: number;
}

export interface StatusClaim {
  rollout: string;
  shard: string | null;
  host: string | null;
  pid: number | null;
  heartbeatAgeMs: number;
  stale: boolean;
}

export interface JobStatus {
  /** The shard count the per-shard rows use (given, or the one the job's claims and results name); undefined: no rows. */
  shards: number | undefined;
  rows: StatusCounts[];
  total: StatusCounts;
  /** Every claim, live or stale, by rollout id. */
  claims: StatusClaim[];
}

/** The shard count results and claims agree on, if they name exactly one. Pure. */
export function shardCountOf(labels: readonly (string | null | undefined)[]): number | undefined {
  const counts = new Set(labels.flatMap((l) => (l === null || l === undefined ? [] : [Number(l.split('/')[1])])));
  return counts.size === 1 ? [...counts][0] : undefined;
}

const empty = (shard: string): StatusCounts => ({ shard, planned: 0, done: 0, claimed: 0, stale: 0, failed: 0, pending: 0 });

/** Count a job's rollouts by state, per shard (when a shard count is given or found) and in total. Pure. */
export function countStatus(
  plan: { rollouts: readonly Pick<RolloutSpec, 'id' | 'taskId' | 'policy' | 'attempt'>[]; complete: ReadonlySet<string> },
  results: ReadonlyMap<string, RolloutResult>,
  claims: ReadonlyMap<string, FoundClaim>,
  options: { nowMs: number; staleMs: number; shards?: number; here?: ClaimHere },
): JobStatus {
  const shards = options.shards ?? shardCountOf([...[...results.values()].map((r) => r.shard), ...[...claims.values()].map((c) => c.claim?.shard)]);
  const ids = plan.rollouts.map((r) => r.id);
  const assigned = shards === undefined ? undefined : shardAssignment(plan.rollouts, shards);
  const rows = new Map<number, StatusCounts>();
  for (let i = 1; i <= (shards ?? 0); i++) rows.set(i, empty(`${i}/${shards ?? 0}`));
  const total = empty('total');
  for (const id of ids) {
    const claim = claims.get(id);
    const state: RolloutState = plan.complete.has(id)
      ? 'done'
      : claim !== undefined
        ? judgeClaim(claim, options.nowMs, options.staleMs, options.here) === 'live'
          ? 'claimed'
          : 'stale'
        : results.get(id)?.status === 'infra_error'
          ? 'failed'
          : 'pending';
    for (const row of [total, rows.get(assigned?.get(id) ?? 0)]) {
      if (row === undefined) continue;
      row.planned += 1;
      row[state] += 1;
    }
  }
  const claimList = [...claims]
    .filter(([id]) => ids.includes(id))
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([rollout, c]) => ({
      rollout,
      shard: c.claim?.shard ?? null,
      host: c.claim?.host ?? null,
      pid: c.claim?.pid ?? null,
      heartbeatAgeMs: Math.max(0, options.nowMs - c.heartbeatMs),
      stale: judgeClaim(c, options.nowMs, options.staleMs, options.here) === 'stale',
    }));
  return { shards, rows: [...rows.values()], total, claims: claimList };
}

/** The tasks a job selected, as its lock.json recorded them (no need for the tasks folder to be here). */
async function lockedTaskIds(dir: string): Promise<string[]> {
  let lock: { tasks?: Record<string, unknown> } | undefined;
  try {
    lock = JSON.parse(await readFile(join(dir, 'lock.json'), 'utf8')) as { tasks?: Record<string, unknown> };
  } catch {
    lock = undefined;
  }
  if (lock?.tasks === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `${dir} is not an eval job folder (no readable lock.json)`, { file: dir, hint: 'authbench status <jobs-dir>/<name>' });
  return Object.keys(lock.tasks).sort(compareStrings);
}

/** A job folder's status: its saved config re-planned over its locked tasks, its results and claims. */
export async function readJobStatus(dir: string, options: { nowMs?: number; staleMs?: number; shards?: number } = {}): Promise<JobStatus & { config: EvalConfig }> {
  const taskIds = await lockedTaskIds(dir);
  const config = await readJobConfig(dir, dir);
  const results = await readResults(dir);
  const plan = planJob(taskIds, config, results);
  const status = countStatus(
    { rollouts: plan.rollouts, complete: new Set(plan.reused.keys()) },
    results,
    await readClaims(dir),
    { nowMs: options.nowMs ?? Date.now(), staleMs: options.staleMs ?? DEFAULT_STALE_MS, here: HERE, ...(options.shards === undefined ? {} : { shards: options.shards }) },
  );
  return { ...status, config };
}
