import { AuthbenchError, compareStrings } from '../core/index.ts';
import {
  clusterBootstrapCi,
  pairBootstrapCi,
  resolveBootstrapOptions,
  verdict,
  type BootstrapOptions,
  type ConfidenceInterval,
  type Verdict,
} from './bootstrap.ts';
import { denominatorSensitivity, RAW_METRIC, REACHABLE_METRIC, type DenominatorSensitivity } from './denominator.ts';
import { DEFAULT_PROJECTION, OUTCOME_METRIC, trajectoryDivergence, type TrajectoryDivergence } from './divergence.ts';
import { stagesOf, stratifiedMeans, type StratumMean } from './means.ts';
import { byTuple, mean } from './numeric.ts';
import { countUnpaired, pairDifferences, pairRows, pairedDelta, pairedWinRate, type UnpairedCounts, type WinRate } from './pairs.ts';
import { metricValue, type StatsRow } from './schema.ts';
import { seedVariance, type SeedVariance } from './seed-variance.ts';
import { stageContribution, type StageContribution } from './stage-contribution.ts';
import { zeroEventBounds, type ZeroEventEntry } from './zero-event.ts';

export interface CompareOptions extends BootstrapOptions {
  defenseA: string;
  defenseB: string;
  metrics: readonly string[];
  /** Fields of the trajectory-divergence projection; default DEFAULT_PROJECTION. */
  projection?: readonly string[];
}

export interface StageComparison {
  stage: string;
  n_pairs: number;
  unpaired: UnpairedCounts;
  /** Means over the pairs; null without pairs. */
  mean_a: number | null;
  mean_b: number | null;
  /** Paired delta B − A. */
  delta: number | null;
  pair_ci: ConfidenceInterval | null;
  cluster_ci: ConfidenceInterval | null;
  /** From the scenario-cluster CI, the one claims rest on (paper §6.5); null without pairs. */
  verdict: Verdict | null;
  win_rate: WinRate;
}

export interface MetricComparison {
  metric: string;
  /** Stage-stratified means of A and B over all their applicable rows. */
  means: StratumMean[];
  /** Paired comparison per stage where the metric applies; stages are never pooled here. */
  stages: StageComparison[];
  zero_event: ZeroEventEntry[];
  seed_variance: SeedVariance[];
  stage_contribution: StageContribution;
}

export interface DivergenceReport {
  all: TrajectoryDivergence;
  by_stage: (TrajectoryDivergence & { stage: string })[];
}

export interface Comparison {
  defense_a: string;
  defense_b: string;
  bootstrap: Required<BootstrapOptions>;
  /** Rows of A and B; every other defense only feeds the fixed-maximum denominator. */
  n_rows_a: number;
  n_rows_b: number;
  metrics: MetricComparison[];
  /** Null when no row of A or B carries committed_harm. */
  trajectory_divergence: DivergenceReport | null;
  /** Null when no row carries both blast_radius_raw and reachable_nodes. */
  denominator_sensitivity: DenominatorSensitivity | null;
}

/**
 * Every statistic of this module for defenses A and B, as one plain JSON
 * value for the report to render. Pure and seeded: identical rows and
 * options give an identical result, whatever the row order.
 */
export function compare(rows: readonly StatsRow[], options: CompareOptions): Comparison {
  const { defenseA, defenseB } = options;
  const bootstrap = resolveBootstrapOptions(options);
  // Floating-point sums depend on order; a canonical order makes the output independent of how rows were read.
  const all = [...rows].sort(canonicalOrder);
  const ab = all.filter((r) => r.defense === defenseA || r.defense === defenseB);
  for (const defense of [defenseA, defenseB]) {
    if (!ab.some((r) => r.defense === defense))
      throw new AuthbenchError('INVALID_ARGUMENT', `no rows for defense ${defense}`, {
        field: 'defense',
        hint: `defenses in the rows: ${[...new Set(all.map((r) => r.defense))].sort(compareStrings).join(', ') || 'none'}`,
      });
  }
  return {
    defense_a: defenseA,
    defense_b: defenseB,
    bootstrap,
    n_rows_a: ab.filter((r) => r.defense === defenseA).length,
    n_rows_b: ab.filter((r) => r.defense === defenseB).length,
    metrics: options.metrics.map((metric) => compareMetric(ab, metric, defenseA, defenseB, bootstrap)),
    trajectory_divergence: ab.some((r) => metricValue(r, OUTCOME_METRIC) !== null)
      ? divergenceReport(ab, defenseA, defenseB, options.projection ?? DEFAULT_PROJECTION, bootstrap)
      : null,
    denominator_sensitivity: all.some((r) => metricValue(r, RAW_METRIC) !== null && metricValue(r, REACHABLE_METRIC) !== null)
      ? denominatorSensitivity(all, defenseA, defenseB)
      : null,
  };
}

function canonicalOrder(x: StatsRow, y: StatsRow): number {
  return (
    byTuple([x.defense, x.stage, x.scenario, x.model], [y.defense, y.stage, y.scenario, y.model]) ||
    x.seed - y.seed ||
    compareStrings(x.rollout_id, y.rollout_id)
  );
}

function compareMetric(
  ab: readonly StatsRow[],
  metric: string,
  defenseA: string,
  defenseB: string,
  bootstrap: Required<BootstrapOptions>,
): MetricComparison {
  const applicable = ab.filter((r) => metricValue(r, metric) !== null);
  return {
    metric,
    means: stratifiedMeans(ab, metric),
    stages: stagesOf(applicable).map((stage) =>
      compareStage(
        ab.filter((r) => r.stage === stage),
        metric,
        defenseA,
        defenseB,
        bootstrap,
      ),
    ),
    zero_event: zeroEventBounds(ab, metric, bootstrap.level),
    seed_variance: seedVariance(ab, metric),
    stage_contribution: stageContribution(ab, metric, defenseA, defenseB),
  };
}

function compareStage(
  stageRows: readonly StatsRow[],
  metric: string,
  defenseA: string,
  defenseB: string,
  bootstrap: Required<BootstrapOptions>,
): StageComparison {
  const paired = pairRows(stageRows, metric, defenseA, defenseB);
  const { pairs } = paired;
  const differences = pairDifferences(pairs);
  const clusterCi = clusterBootstrapCi(
    differences,
    pairs.map((p) => p.cluster),
    bootstrap,
  );
  return {
    stage: stageRows[0]?.stage ?? '',
    n_pairs: pairs.length,
    unpaired: countUnpaired(paired.unpaired),
    mean_a: mean(pairs.map((p) => p.a)),
    mean_b: mean(pairs.map((p) => p.b)),
    delta: pairedDelta(pairs),
    pair_ci: pairBootstrapCi(differences, bootstrap),
    cluster_ci: clusterCi,
    verdict: clusterCi === null ? null : verdict(clusterCi),
    win_rate: pairedWinRate(pairs),
  };
}

function divergenceReport(
  ab: readonly StatsRow[],
  defenseA: string,
  defenseB: string,
  projection: readonly string[],
  bootstrap: Required<BootstrapOptions>,
): DivergenceReport {
  return {
    all: trajectoryDivergence(ab, defenseA, defenseB, projection, bootstrap),
    by_stage: stagesOf(ab).map((stage) => ({
      stage,
      ...trajectoryDivergence(
        ab.filter((r) => r.stage === stage),
        defenseA,
        defenseB,
        projection,
        bootstrap,
      ),
    })),
  };
}
