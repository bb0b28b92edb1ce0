import { AuthbenchError } from '../core/index.ts';
import { clusterBootstrapCi, type BootstrapOptions, type ConfidenceInterval } from './bootstrap.ts';
import { ratio } from './numeric.ts';
import { matchRows, type MatchedRows } from './pairs.ts';
import { metricValue, type StatsRow } from './schema.ts';

/** The outcome a divergence test conditions on (paper eq. 5, stored as committed_harm). */
export const OUTCOME_METRIC = 'committed_harm';

/**
 * The defense-invariant trajectory projection: derived trace fields every
 * defense produces the same way (the paper's §6.5 tuple, in authbench's
 * metric names: br_agent, br_message, br_memory, br_tool and br_side_effect are
 * tainted_agent_step_nodes, tainted_message_nodes, tainted_memory_nodes,
 * tainted_proposal_nodes and tainted_commit_nodes; the process, file and
 * network counts are authbench's own finer split). Policy hashes, rule ids and other policy-specific
 * provenance stay out, or every cross-defense pair would "diverge".
 */
export const DEFAULT_PROJECTION: readonly string[] = [
  'blast_radius_norm',
  'blast_radius_raw',
  'tainted_process_nodes',
  'tainted_file_nodes',
  'tainted_network_nodes',
  'tainted_memory_nodes',
  'tainted_proposal_nodes',
  'tainted_agent_step_nodes',
  'tainted_message_nodes',
  'tainted_commit_nodes',
  'privilege_jump_rate',
  'cascade_depth',
  'taint_to_commit_rate',
  'memory_reinfection',
  'recovery_success',
];

export interface FieldDivergence {
  field: string;
  /** Equal-outcome pairs that differ on this field. */
  n_differ: number;
  rate: number | null;
}

export interface TrajectoryDivergence {
  defense_a: string;
  defense_b: string;
  projection: string[];
  /** Keys where the outcome applies under both defenses. */
  n_pairs: number;
  /** Of those, pairs with the same outcome — the divergence denominator. */
  n_equal_outcome: number;
  /** Equal-outcome pairs that differ on at least one projected field. */
  n_diverged: number;
  rate: number | null;
  /** Scenario-cluster bootstrap CI of the rate; null without equal-outcome pairs. */
  ci: ConfidenceInterval | null;
  per_field: FieldDivergence[];
}

/**
 * Outcome-conditioned trajectory divergence (paper Table 10): among pairs
 * keyed by (scenario, model, seed) whose `committed_harm` is equal, the share
 * that differ on at least one field of the projection — equal endpoints can
 * hide different trajectories. Fields compare exactly (they are derived from
 * counts by the same code for every defense); N/A on one side only counts as
 * a difference, N/A on both as equal.
 */
export function trajectoryDivergence(
  rows: readonly StatsRow[],
  defenseA: string,
  defenseB: string,
  projection: readonly string[] = DEFAULT_PROJECTION,
  options: BootstrapOptions = {},
): TrajectoryDivergence {
  if (projection.length === 0)
    throw new AuthbenchError('INVALID_ARGUMENT', 'the trajectory projection names no metric', { field: 'projection' });
  const withOutcome = matchRows(rows, defenseA, defenseB).matched.filter(
    (m) => metricValue(m.a, OUTCOME_METRIC) !== null && metricValue(m.b, OUTCOME_METRIC) !== null,
  );
  const equal = withOutcome.filter((m) => metricValue(m.a, OUTCOME_METRIC) === metricValue(m.b, OUTCOME_METRIC));
  const differs = projection.map((field) => equal.map((m) => metricValue(m.a, field) !== metricValue(m.b, field)));
  const diverged = Float64Array.from(equal, (_, i) => (differs.some((d) => d[i] === true) ? 1 : 0));
  const nDiverged = diverged.reduce((s, v) => s + v, 0);
  const rate = (k: number) => ratio(k, equal.length);
  return {
    defense_a: defenseA,
    defense_b: defenseB,
    projection: [...projection],
    n_pairs: withOutcome.length,
    n_equal_outcome: equal.length,
    n_diverged: nDiverged,
    rate: rate(nDiverged),
    ci: clusterBootstrapCi(diverged, clustersOf(equal), options),
    per_field: projection.map((field, f) => {
      const n = (differs[f] ?? []).filter(Boolean).length;
      return { field, n_differ: n, rate: rate(n) };
    }),
  };
}

function clustersOf(matched: readonly MatchedRows[]): string[] {
  return matched.map((m) => m.cluster);
}
