import { compareStrings } from '../core/index.ts';
import { groupSorted } from './numeric.ts';
import { metricValue, type StatsRow } from './schema.ts';

export interface StratumMean {
  defense: string;
  stage: string;
  /** Rows where the metric applies (a number). */
  n: number;
  /** Rows where it is N/A; they are counted, never averaged in as 0. */
  n_na: number;
  /** Mean over the applicable rows; null when there are none. */
  mean: number | null;
}

/**
 * Stage-stratified means (paper eq. 7): for each (defense, stage), the mean
 * of the metric over the rollouts where it applies. Stages are never pooled,
 * because a stage mix can flip an aggregate ranking (paper §7.3).
 * Sorted by defense, then stage.
 */
export function stratifiedMeans(rows: readonly StatsRow[], metric: string): StratumMean[] {
  const strata = groupSorted(rows, (r) => [r.defense, r.stage]);
  return strata.map(([[defense = '', stage = ''], group]) => {
    const values = applicableValues(group, metric);
    const sum = values.reduce((s, v) => s + v, 0);
    return {
      defense,
      stage,
      n: values.length,
      n_na: group.length - values.length,
      mean: values.length === 0 ? null : sum / values.length,
    };
  });
}

/** The metric's values over the rows where it applies, in row order. */
export function applicableValues(rows: readonly StatsRow[], metric: string): number[] {
  const out: number[] = [];
  for (const row of rows) {
    const v = metricValue(row, metric);
    if (v !== null) out.push(v);
  }
  return out;
}

/** The distinct stages of `rows`, in string order. */
export function stagesOf(rows: readonly StatsRow[]): string[] {
  return [...new Set(rows.map((r) => r.stage))].sort(compareStrings);
}
