import { groupSorted, mean, ratio } from './numeric.ts';
import { countUnpaired, pairRows, pairedDelta, type Pair, type UnpairedCounts } from './pairs.ts';
import type { StatsRow } from './schema.ts';

export interface StageShare {
  stage: string;
  /** Pairs in this stage. */
  n: number;
  /** The stage's share of all pairs. */
  weight: number;
  mean_a: number;
  mean_b: number;
  /** Stage mean difference B − A. */
  gap: number;
  /** weight × gap; the weighted gaps sum to the aggregate gap. */
  weighted_gap: number;
  /** weighted_gap ÷ aggregate gap; null when the aggregate gap is 0. */
  share: number | null;
}

export interface StageContribution {
  metric: string;
  defense_a: string;
  defense_b: string;
  n: number;
  /** All-stage means over the paired rows; null without pairs. */
  mean_a: number | null;
  mean_b: number | null;
  /** All-stage gap B − A (= the paired delta); null without pairs. */
  aggregate_gap: number | null;
  stages: StageShare[];
  /** Keys left out because a row is missing or the metric is N/A on a side. */
  unpaired: UnpairedCounts;
}

/**
 * Decompose an all-stage gap by stage (paper Table 13): weight = the stage's
 * share of the applicable rows, gap = the stage's mean difference, weighted
 * gap = weight × gap, share = weighted gap ÷ aggregate gap. Computed over
 * rows where the metric applies under both defenses (the pairs), so both
 * defenses have the same rows per stage and the weighted gaps add up to the
 * aggregate gap exactly (up to rounding); unpaired keys are reported.
 * The sign is B − A like every delta here; the paper's Table 13 prints A − B
 * (shares are the same either way).
 */
export function stageContribution(rows: readonly StatsRow[], metric: string, defenseA: string, defenseB: string): StageContribution {
  const paired = pairRows(rows, metric, defenseA, defenseB);
  const { pairs } = paired;
  const total = pairs.length;
  const aggregate = pairedDelta(pairs);
  const stages = groupSorted(pairs, (p) => [p.stage]).map(([[stage = ''], group]): StageShare => {
    const meanA = sideMean(group, 'a');
    const meanB = sideMean(group, 'b');
    const weight = group.length / total;
    const weighted = weight * (meanB - meanA);
    return {
      stage,
      n: group.length,
      weight,
      mean_a: meanA,
      mean_b: meanB,
      gap: meanB - meanA,
      weighted_gap: weighted,
      share: aggregate === null ? null : ratio(weighted, aggregate),
    };
  });
  return {
    metric,
    defense_a: defenseA,
    defense_b: defenseB,
    n: total,
    mean_a: total === 0 ? null : sideMean(pairs, 'a'),
    mean_b: total === 0 ? null : sideMean(pairs, 'b'),
    aggregate_gap: aggregate,
    stages,
    unpaired: countUnpaired(paired.unpaired),
  };
}

function sideMean(pairs: readonly Pair[], side: 'a' | 'b'): number {
  return mean(pairs.map((p) => p[side])) as number;
}
