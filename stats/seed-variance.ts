import { mean, sampleVariance, groupSorted } from './numeric.ts';
import { metricValue, type StatsRow } from './schema.ts';

export interface SeedVariance {
  defense: string;
  stage: string;
  /** Scenario units (scenario × model) with an applicable value. */
  n_scenarios: number;
  /** Of those, the units with at least two applicable seeds, which the within-scenario variance averages over. */
  n_scenarios_multi_seed: number;
  /** Mean over scenarios of the sample variance across that scenario's seeds; null without a multi-seed scenario. */
  within_scenario_variance: number | null;
  /** Sample variance of the per-scenario means (each scenario's mean over its seeds); null below two scenarios. */
  between_scenario_variance: number | null;
  /** The spread of per-seed means over scenarios (paper Table 26: seeds, mean, std, range). */
  seed_means: {
    n_seeds: number;
    mean: number | null;
    /** Sample standard deviation of the per-seed means; null below two seeds. */
    std: number | null;
    range: number | null;
  };
}

/**
 * How much rollout seeds add, per (defense, stage): for each scenario unit
 * (scenario × model) the sample variance of the metric across its seeds, then
 * the mean of those variances; next to it the variance between scenario
 * means. A within-scenario variance that is small beside the between-scenario
 * one means the result is not carried by a single seed. N/A values are skipped.
 */
export function seedVariance(rows: readonly StatsRow[], metric: string): SeedVariance[] {
  const applicable = rows.flatMap((row) => {
    const value = metricValue(row, metric);
    return value === null ? [] : [{ row, value }];
  });
  return groupSorted(applicable, ({ row }) => [row.defense, row.stage]).map(([[defense = '', stage = ''], stratum]) => {
    const units = groupSorted(stratum, ({ row }) => [row.scenario, row.model]).map(([, unit]) => unit.map((u) => u.value));
    const withinVariances = units.flatMap((values) => {
      const v = sampleVariance(values);
      return v === null ? [] : [v];
    });
    const seedMeans = groupSorted(stratum, ({ row }) => [String(row.seed)]).map(([, s]) => mean(s.map((u) => u.value)) as number);
    const std = sampleVariance(seedMeans);
    return {
      defense,
      stage,
      n_scenarios: units.length,
      n_scenarios_multi_seed: withinVariances.length,
      within_scenario_variance: mean(withinVariances),
      between_scenario_variance: sampleVariance(units.map((values) => mean(values) as number)),
      seed_means: {
        n_seeds: seedMeans.length,
        mean: mean(seedMeans),
        std: std === null ? null : Math.sqrt(std),
        range: seedMeans.length === 0 ? null : Math.max(...seedMeans) - Math.min(...seedMeans),
      },
    };
  });
}
