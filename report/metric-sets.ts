/**
 * Which metrics the report leads with on each evidence stage (paper Table 3
 * and product.md "Evidence stages"). The JSON carries every metric that
 * applies somewhere; these lists only choose what the tables and plots show,
 * so a stage's utility metric is never shown on (or pooled into) another.
 */
import { METRIC_NAMES } from '../containment/index.ts';

export const ENDPOINT_METRICS = ['committed_harm', 'secret_leakage', 'wrong_target_rate', 'attack_success'] as const;

export const PROPAGATION_METRICS = ['blast_radius_norm', 'taint_to_commit_rate', 'cascade_depth', 'privilege_jump_rate'] as const;

/**
 * The exact-goal funnel (paper §6.3, Tables 18–19; containment/funnel.ts): the monotone target
 * path, then off-target commits and authorized completion beside it (neither is a funnel stage).
 * Per rollout with an attack goal; rates over those rollouts, per stage, never pooled.
 */
export const FUNNEL_METRICS = ['goal_exact_proposal', 'goal_policy_pass', 'goal_matched_commit', 'goal_completed', 'off_target_commit', 'authorized_completion'] as const;
export const FUNNEL_COUNTS = ['goal_exact_proposals', 'goal_passed_proposals', 'goal_matched_commits', 'off_target_commits'] as const;

const STAGE_METRICS: Readonly<Record<string, readonly string[]>> = {
  security: ['committed_harm', 'secret_leakage', 'wrong_target_rate', 'attack_success', 'utility_success', 'false_positive_block_rate'],
  'active-tainted': ['authorized_tainted_action_success', 'false_positive_block_rate', 'unjudged_stopped_proposals', 'utility_success', 'committed_harm'],
  clean: ['clean_benign_completion', 'false_positive_block_rate', 'unjudged_stopped_proposals', 'utility_success', 'committed_harm'],
  'memory-recovery': ['recovery_success', 'memory_reinfection', 'utility_success', 'committed_harm'],
};

/** For a stage the table does not know (a future one): endpoint and utility at least. */
const DEFAULT_STAGE_METRICS: readonly string[] = ['committed_harm', 'utility_success', 'attack_success', 'false_positive_block_rate'];

export function stageMetrics(stage: string): readonly string[] {
  return STAGE_METRICS[stage] ?? DEFAULT_STAGE_METRICS;
}

/**
 * The operating-point axes (paper Fig. 5): committed harm on the security
 * stage against authorized completion. Completion falls back to the next
 * stage-specific utility metric when a run has no active-tainted scenarios;
 * each candidate names its one stage, so nothing is pooled.
 */
export const HARM_AXIS = { metric: 'committed_harm', stage: 'security' } as const;
export const COMPLETION_AXES: readonly { metric: string; stage: string }[] = [
  { metric: 'authorized_tainted_action_success', stage: 'active-tainted' },
  { metric: 'clean_benign_completion', stage: 'clean' },
  { metric: 'utility_success', stage: 'security' },
];

/**
 * The report's headline (issue #16 item 9): per defense, the four numbers the
 * paper's results lead with (Table 11 and Fig. 5), each on its one stage —
 * committed harm where attacks are present, completion on clean work and on
 * authorized work over tainted content, and how often that authorized work was
 * blocked. The HTML panel and the terminal (`eval`, `report`) show these alone.
 */
export const HEADLINE_COLUMNS: readonly { label: string; metric: string; stage: string }[] = [
  { label: 'committed harm', metric: 'committed_harm', stage: 'security' },
  { label: 'clean utility', metric: 'clean_benign_completion', stage: 'clean' },
  { label: 'authorized tainted completion', metric: 'authorized_tainted_action_success', stage: 'active-tainted' },
  { label: 'false-positive blocking', metric: 'false_positive_block_rate', stage: 'active-tainted' },
];

/** Metric names in a stable order: the containment metrics as declared, then any others by name. */
export function orderMetrics(names: Iterable<string>): string[] {
  const known = new Set<string>(METRIC_NAMES);
  const all = new Set(names);
  const first = METRIC_NAMES.filter((m) => all.has(m));
  const rest = [...all].filter((m) => !known.has(m)).sort();
  return [...first, ...rest];
}

/** Counts (hops, nodes) rather than rates: plotted on their own scale, never on a 0–1 axis. */
export function isCount(metric: string): boolean {
  return (
    ['cascade_depth', 'blast_radius_raw', 'reachable_nodes', 'authorized_high_risk_proposals', 'unjudged_stopped_proposals', 'counterfactual_proposals'].includes(metric) ||
    (FUNNEL_COUNTS as readonly string[]).includes(metric) ||
    metric.startsWith('tainted_')
  );
}
