import { groupSorted, mean } from './numeric.ts';
import { matchRows, pairedDelta, type Pair } from './pairs.ts';
import { metricValue, type StatsRow } from './schema.ts';

export const RAW_METRIC = 'blast_radius_raw';
export const REACHABLE_METRIC = 'reachable_nodes';

export interface DefenseMean {
  defense: string;
  n: number;
  mean: number | null;
}

export interface DenominatorView {
  means: DefenseMean[];
  /** Paired B − A over keys where both rows carry raw and reachable counts; null without pairs. */
  paired_delta: number | null;
  n_pairs: number;
}

export interface DenominatorScope {
  /** The stage, or null for all stages together (paper Table 14 reports both). */
  stage: string | null;
  /** raw ÷ max(1, the rollout's own reachable count) — blast_radius_norm. */
  realized: DenominatorView;
  /** raw ÷ max(1, the largest reachable count any defense reached for the same scenario, model and seed). */
  fixed_max: DenominatorView;
}

export interface DenominatorSensitivity {
  defense_a: string;
  defense_b: string;
  scopes: DenominatorScope[];
}

/**
 * Realized vs fixed-maximum denominator for logged taint spread (paper
 * §7.3, Table 14). The realized denominator shrinks when a defense blocks
 * early, so a defense can look contained just by cutting the trace short;
 * fixing the denominator at the largest region any defense reached for the
 * same key removes that effect. Means cover every defense in `rows`; the
 * paired deltas compare A and B. Rows without both counts are left out.
 */
export function denominatorSensitivity(rows: readonly StatsRow[], defenseA: string, defenseB: string): DenominatorSensitivity {
  const counted = rows.filter((r) => metricValue(r, RAW_METRIC) !== null && metricValue(r, REACHABLE_METRIC) !== null);
  const maxReach = new Map<string, number>();
  for (const row of counted) {
    const id = keyId(row);
    maxReach.set(id, Math.max(maxReach.get(id) ?? 0, metricValue(row, REACHABLE_METRIC) as number));
  }
  const realized = (r: StatsRow) => spread(r, metricValue(r, REACHABLE_METRIC) as number);
  const fixed = (r: StatsRow) => spread(r, maxReach.get(keyId(r)) as number);
  const scope = (stage: string | null, stratum: readonly StatsRow[]): DenominatorScope => ({
    stage,
    realized: view(stratum, defenseA, defenseB, realized),
    fixed_max: view(stratum, defenseA, defenseB, fixed),
  });
  return {
    defense_a: defenseA,
    defense_b: defenseB,
    scopes: [scope(null, counted), ...groupSorted(counted, (r) => [r.stage]).map(([[stage = ''], s]) => scope(stage, s))],
  };
}

function spread(row: StatsRow, denominator: number): number {
  return (metricValue(row, RAW_METRIC) as number) / Math.max(1, denominator);
}

function keyId(row: StatsRow): string {
  return JSON.stringify([row.scenario, row.model, row.seed]);
}

function view(rows: readonly StatsRow[], defenseA: string, defenseB: string, value: (r: StatsRow) => number): DenominatorView {
  const means = groupSorted(rows, (r) => [r.defense]).map(([[defense = ''], group]) => ({
    defense,
    n: group.length,
    mean: mean(group.map(value)),
  }));
  const pairs: Pair[] = matchRows(rows, defenseA, defenseB).matched.map((m) => ({
    ...m.key,
    cluster: m.cluster,
    stage: m.stage,
    a: value(m.a),
    b: value(m.b),
  }));
  return { means, paired_delta: pairedDelta(pairs), n_pairs: pairs.length };
}
