import { AuthbenchError } from '../core/index.ts';
import { applicableValues } from './means.ts';
import { groupSorted } from './numeric.ts';
import { metricValue, type StatsRow } from './schema.ts';

export interface ZeroEventBound {
  n_clusters: number;
  level: number;
  /** Exact one-sided binomial (Clopper–Pearson) upper bound with 0 events: 1 − (1 − level)^(1/n). */
  exact: number;
  /** The rule of three, 3/n (the 95% approximation, capped at 1). */
  rule_of_three: number;
}

/**
 * One-sided upper bound on the per-cluster event probability when none of
 * `nClusters` independent clusters showed an event. Clusters, not rollouts,
 * are the independent units (paper §7.2: 3/504 ≈ 0.60%, 3/192 ≈ 1.56%).
 * The bound quantifies unobserved risk; it does not prove zero risk.
 */
export function zeroEventUpperBound(nClusters: number, level = 0.95): ZeroEventBound {
  if (!Number.isInteger(nClusters) || nClusters < 1)
    throw new AuthbenchError('INVALID_ARGUMENT', `a zero-event bound needs at least one cluster, got ${nClusters}`, { field: 'n_clusters' });
  if (!(level > 0 && level < 1))
    throw new AuthbenchError('INVALID_ARGUMENT', `confidence level must lie strictly between 0 and 1, got ${level}`, { field: 'level' });
  return {
    n_clusters: nClusters,
    level,
    exact: 1 - (1 - level) ** (1 / nClusters),
    rule_of_three: Math.min(1, 3 / nClusters),
  };
}

/** A zero-event bound applies when the metric applies somewhere and is 0 wherever it applies. */
export function isZeroEvent(values: readonly number[]): boolean {
  return values.length > 0 && values.every((v) => v === 0);
}

export interface ZeroEventEntry {
  defense: string;
  /** The stage, or null for all stages together (an all-stage endpoint, paper §7.2). */
  stage: string | null;
  /** Applicable rollouts, all 0. */
  n: number;
  bound: ZeroEventBound;
}

/**
 * Zero-event bounds for every (defense, stage) — and every defense over all
 * stages — whose applicable values of `metric` are all 0. Strata with any
 * event or with no applicable rollout are left out: a bound would be wrong or
 * meaningless there.
 */
export function zeroEventBounds(rows: readonly StatsRow[], metric: string, level = 0.95): ZeroEventEntry[] {
  const out: ZeroEventEntry[] = [];
  for (const [[defense = ''], defenseRows] of groupSorted(rows, (r) => [r.defense])) {
    const entry = (stage: string | null, stratum: readonly StatsRow[]): void => {
      const applicable = stratum.filter((r) => metricValue(r, metric) !== null);
      if (!isZeroEvent(applicableValues(applicable, metric))) return;
      const clusters = new Set(applicable.map((r) => r.cluster)).size;
      out.push({ defense, stage, n: applicable.length, bound: zeroEventUpperBound(clusters, level) });
    };
    entry(null, defenseRows);
    for (const [[stage = ''], stageRows] of groupSorted(defenseRows, (r) => [r.stage])) entry(stage, stageRows);
  }
  return out;
}
