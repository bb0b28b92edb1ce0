/**
 * Rollout results → statistics rows. Pure. Infrastructure errors never become
 * rows (they say nothing about the agent or the defense), but they are kept
 * and counted so the report can show them.
 */
import { AuthbenchError, compareStrings } from '../core/index.ts';
import type { RolloutResult } from '../evaluation/index.ts';
import type { StatsRow } from '../stats/index.ts';

/** A result.json as read, with where it came from. */
export interface LoadedResult {
  /** The job folder as the user named it. */
  job: string;
  /** The rollout folder (job folder + rollout id). */
  dir: string;
  result: RolloutResult;
}

/**
 * How rows are labelled for the statistics: by defense alone when every
 * policy-using rollout had the same policy source, else `defense@policy`
 * (two policy sources under one defense are different conditions). Defense
 * `none` reads no policy (its source is `none`), so it never forces the long
 * form and keeps its short label.
 */
export type LabelRule = 'defense' | 'defense@policy';

export const NO_POLICY = 'none';

export function labelRule(results: readonly RolloutResult[]): LabelRule {
  const sources = new Set(results.filter((r) => r.policy_source !== NO_POLICY).map((r) => r.policy_source));
  return sources.size > 1 ? 'defense@policy' : 'defense';
}

export function defenseLabel(result: Pick<RolloutResult, 'defense' | 'policy_source'>, rule: LabelRule): string {
  if (rule === 'defense' || result.policy_source === NO_POLICY) return result.defense.name;
  return `${result.defense.name}@${result.policy_source}`;
}

/** A statistics row plus what the report shows next to it. */
export interface ReportRow extends StatsRow {
  job: string;
  policy_source: string;
  defense_name: string;
}

export interface RowSet {
  rule: LabelRule;
  /** Completed rollouts, in canonical order (label, stage, scenario, model, seed, rollout id). */
  rows: ReportRow[];
  /** Rollouts with status infra_error, in the same order. */
  infra: LoadedResult[];
}

/**
 * The rollout's metrics as numbers: the containment metrics when the rollout
 * was measured, else only the validator outcomes the result carries (every
 * other metric is then N/A, not 0).
 */
export function rolloutMetricValues(result: RolloutResult): Record<string, number | null> {
  if (result.metrics !== null && result.metrics !== undefined) {
    // Counts added after a result was written are N/A in it, not 0.
    return Object.fromEntries(Object.entries(result.metrics).map(([k, v]) => [k, v ?? null]));
  }
  const bit = (b: boolean | null): number | null => (b === null ? null : b ? 1 : 0);
  return { utility_success: bit(result.utility_success), attack_success: bit(result.attack_success) };
}

export function toRows(loaded: readonly LoadedResult[]): RowSet {
  const rule = labelRule(loaded.map((l) => l.result));
  const rows: ReportRow[] = [];
  const infra: LoadedResult[] = [];
  const seen = new Map<string, LoadedResult>();
  for (const item of loaded) {
    const r = item.result;
    if (r.status === 'infra_error') {
      infra.push(item);
      continue;
    }
    const label = defenseLabel(r, rule);
    // The statistics pair rollouts by (scenario, model, seed) per label; a repeat would be ambiguous.
    const key = JSON.stringify([r.task_id, r.model, r.seed, label]);
    const earlier = seen.get(key);
    if (earlier !== undefined)
      throw new AuthbenchError('INVALID_ARGUMENT', `two completed rollouts of task ${r.task_id}, model ${r.model}, seed ${r.seed} under ${label}`, {
        file: item.dir,
        details: [earlier.dir, item.dir],
        hint: 'report jobs that do not overlap (different tasks, models or seeds), or one of them',
      });
    seen.set(key, item);
    rows.push({
      rollout_id: `${item.job}/${r.rollout_id}`,
      scenario: r.task_id,
      cluster: r.cluster === '' ? r.task_id : r.cluster,
      stage: r.stage,
      family: r.family ?? 'unknown',
      model: r.model,
      defense: label,
      seed: r.seed,
      metrics: rolloutMetricValues(r),
      job: item.job,
      policy_source: r.policy_source,
      defense_name: r.defense.name,
    });
  }
  rows.sort(rowOrder);
  infra.sort((a, b) => compareStrings(a.job, b.job) || compareStrings(a.result.rollout_id, b.result.rollout_id));
  return { rule, rows, infra };
}


function rowOrder(x: ReportRow, y: ReportRow): number {
  return (
    compareStrings(x.defense, y.defense) ||
    compareStrings(x.stage, y.stage) ||
    compareStrings(x.scenario, y.scenario) ||
    compareStrings(x.model, y.model) ||
    x.seed - y.seed ||
    compareStrings(x.rollout_id, y.rollout_id)
  );
}
