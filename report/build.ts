/**
 * The report as one plain JSON value: stage-stratified means with
 * scenario-cluster CIs, endpoints with zero-event bounds, paired comparisons,
 * static F1, propagation and operating points. Pure and seeded: the same rows
 * and options give the same value, byte for byte once serialised.
 */
import { AUTHBENCH_VERSION, AuthbenchError, compareStrings } from '../core/index.ts';
import { OUTCOMES, flaggedRollouts, outcomeOf, parserRows, type Outcome, type ParserRow, type RolloutResult } from '../evaluation/index.ts';
import {
  BOOTSTRAP_DEFAULTS,
  clusterBootstrapCi,
  compare,
  DEFAULT_PROJECTION,
  metricValue,
  zeroEventUpperBound,
  type Comparison,
  type Verdict,
  type ZeroEventBound,
} from '../stats/index.ts';
import type { JobInfo } from './load.ts';
import { COMPLETION_AXES, ENDPOINT_METRICS, FUNNEL_COUNTS, FUNNEL_METRICS, HARM_AXIS, orderMetrics, PROPAGATION_METRICS, stageMetrics } from './metric-sets.ts';
import { type LabelRule, type LoadedResult, type ReportRow, type RowSet } from './rows.ts';

// 2: outcome counts per group and the flagged rollouts.
export const REPORT_SCHEMA_VERSION = 2 as const;

export interface ReportOptions {
  /** Bootstrap seed; default 0. */
  seed?: number;
  /** Bootstrap resamples; default 2000. */
  resamples?: number;
  /** Two-sided CI level; default 0.95. */
  level?: number;
  /** Compare this defense label with every other (default: `none` when present, else the first label). */
  baseline?: string;
  /** Explicit [A, B] pairs; replace the baseline pairs. */
  pairs?: readonly (readonly [string, string])[];
}

export interface Interval {
  lower: number;
  upper: number;
}

/** One (model, defense, stage, metric) mean; CI = scenario-cluster bootstrap of the mean. */
export interface Cell {
  model: string;
  defense: string;
  stage: string;
  metric: string;
  /** Rollouts where the metric applies. */
  n: number;
  /** Rollouts of the stratum where it is N/A. */
  n_na: number;
  mean: number | null;
  ci: Interval | null;
  n_clusters: number;
}

export interface StageTable {
  stage: string;
  /** What the tables lead with on this stage. */
  primary: string[];
  /** Every metric with a value on this stage, primary ones included. */
  metrics: string[];
  cells: Cell[];
}

export interface EndpointEntry {
  model: string;
  defense: string;
  /** null: all stages together. */
  stage: string | null;
  metric: string;
  n: number;
  /** Rollouts with a non-zero value. */
  events: number;
  mean: number | null;
  /** Present when the metric applies and is 0 in every rollout. */
  zero_event: ZeroEventBound | null;
}

export interface ComparisonRow {
  metric: string;
  stage: string;
  n_pairs: number;
  mean_a: number | null;
  mean_b: number | null;
  delta: number | null;
  pair_ci: Interval | null;
  cluster_ci: Interval | null;
  verdict: Verdict | null;
}

export interface PairReport {
  defense_a: string;
  defense_b: string;
  /** The stage's own metrics and propagation, per stage where they apply. */
  rows: ComparisonRow[];
  /** Everything the statistics module computes for the pair. */
  full: Comparison;
}

export interface StaticF1Entry {
  model: string;
  policy_source: string;
  /** Distinct (task, policy) pairs scored; a policy reused across defenses and seeds counts once. */
  n: number;
  invalid: number;
  axes: { axis: 'read' | 'write' | 'execute'; precision: number; recall: number; f1: number; f1_ci: Interval | null }[];
  macro_f1: number;
  /** Mean SER over tasks with sensitive entries; null without any. */
  sensitive_exposure: number | null;
}

/** The exact-goal funnel of one (model, defense, stage): rollouts with an attack goal only. */
export interface FunnelEntry {
  model: string;
  defense: string;
  stage: string;
  /** Rollouts with an attack goal (the funnel applies). */
  n: number;
  /** One cell per FUNNEL_METRICS entry, in that order: rate over the n rollouts, cluster CI. */
  cells: Cell[];
  /** Totals over the n rollouts (FUNNEL_COUNTS): exact proposals, passed, goal-matched and off-target commits. */
  totals: Record<string, number>;
}

export interface OperatingPoint {
  model: string;
  defense: string;
  harm: Cell;
  completion: Cell;
}

export interface OperatingPoints {
  harm: { metric: string; stage: string } | null;
  completion: { metric: string; stage: string } | null;
  points: OperatingPoint[];
}

export interface GroupSummary {
  model: string;
  policy_source: string;
  defense_name: string;
  defense: string;
  rollouts: number;
  completed: number;
  infra_errors: number;
  /** Rollouts per outcome (completed, sandbox_tampered, validator_surface_tampered, agent_error, infra_error). */
  outcomes: Record<Outcome, number>;
  /** Completed rollouts per stage. */
  stages: Record<string, number>;
}

export interface InfraEntry {
  job: string;
  rollout_id: string;
  task_id: string;
  model: string;
  defense: string;
  source: string;
  code: string;
  message: string;
}

/** A rollout a reader should look at whatever its verdict: tampered, an agent error, writes on the validator surface. */
export interface FlaggedEntry {
  job: string;
  rollout_id: string;
  task_id: string;
  model: string;
  defense: string;
  outcome: Outcome;
  why: string;
}

export interface JobSummary {
  dir: string;
  model: string;
  policies: string[];
  defenses: string[];
  attempts: number;
  seed: number;
  results: number;
  unfinished: number;
}

export interface ReportData {
  schema_version: typeof REPORT_SCHEMA_VERSION;
  authbench_version: string;
  options: { seed: number; resamples: number; level: number; baseline: string | null; pairs: [string, string][] };
  label_rule: LabelRule;
  jobs: JobSummary[];
  models: string[];
  defenses: string[];
  stage_names: string[];
  groups: GroupSummary[];
  infra_errors: InfraEntry[];
  flagged: FlaggedEntry[];
  /** Text-mode replies by parser status per model; absent when no rollout acted through text. */
  parser?: ParserRow[];
  stages: StageTable[];
  endpoints: EndpointEntry[];
  propagation: Cell[];
  /** Absent in reports written before the funnel existed. */
  funnel?: FunnelEntry[];
  comparisons: PairReport[];
  static_f1: StaticF1Entry[];
  operating_points: OperatingPoints;
}

interface Resolved {
  seed: number;
  resamples: number;
  level: number;
}

const distinct = (xs: readonly string[]): string[] => [...new Set(xs)].sort(compareStrings);

function cell(stratum: readonly ReportRow[], key: Omit<Cell, 'n' | 'n_na' | 'mean' | 'ci' | 'n_clusters'>, opts: Resolved): Cell {
  const applicable = stratum.filter((r) => metricValue(r, key.metric) !== null);
  const values = applicable.map((r) => metricValue(r, key.metric) as number);
  const ci = clusterBootstrapCi(
    values,
    applicable.map((r) => r.cluster),
    opts,
  );
  return {
    ...key,
    n: values.length,
    n_na: stratum.length - values.length,
    mean: ci === null ? null : ci.estimate,
    ci: ci === null ? null : { lower: ci.lower, upper: ci.upper },
    n_clusters: new Set(applicable.map((r) => r.cluster)).size,
  };
}

function stageTables(rows: readonly ReportRow[], models: readonly string[], defenses: readonly string[], opts: Resolved): StageTable[] {
  return distinct(rows.map((r) => r.stage)).map((stage) => {
    const inStage = rows.filter((r) => r.stage === stage);
    const primary = [...stageMetrics(stage)];
    const withValue = inStage.flatMap((r) => Object.keys(r.metrics).filter((m) => metricValue(r, m) !== null));
    const metrics = orderMetrics([...primary, ...withValue]);
    const cells: Cell[] = [];
    for (const model of models)
      for (const defense of defenses) {
        const stratum = inStage.filter((r) => r.model === model && r.defense === defense);
        if (stratum.length === 0) continue;
        for (const metric of metrics) cells.push(cell(stratum, { model, defense, stage, metric }, opts));
      }
    return { stage, primary, metrics, cells };
  });
}

function endpoints(rows: readonly ReportRow[], models: readonly string[], defenses: readonly string[], opts: Resolved): EndpointEntry[] {
  const out: EndpointEntry[] = [];
  for (const model of models)
    for (const defense of defenses) {
      const mine = rows.filter((r) => r.model === model && r.defense === defense);
      if (mine.length === 0) continue;
      const scopes: [string | null, ReportRow[]][] = [[null, mine], ...distinct(mine.map((r) => r.stage)).map((s): [string, ReportRow[]] => [s, mine.filter((r) => r.stage === s)])];
      for (const [stage, stratum] of scopes)
        for (const metric of ENDPOINT_METRICS) {
          const applicable = stratum.filter((r) => metricValue(r, metric) !== null);
          const values = applicable.map((r) => metricValue(r, metric) as number);
          const events = values.filter((v) => v !== 0).length;
          const clusters = new Set(applicable.map((r) => r.cluster)).size;
          out.push({
            model,
            defense,
            stage,
            metric,
            n: values.length,
            events,
            mean: values.length === 0 ? null : values.reduce((s, v) => s + v, 0) / values.length,
            // Clusters, not rollouts, are the independent units of the bound (paper §7.2).
            zero_event: values.length > 0 && events === 0 ? zeroEventUpperBound(clusters, opts.level) : null,
          });
        }
    }
  return out;
}

function funnelEntries(rows: readonly ReportRow[], models: readonly string[], defenses: readonly string[], opts: Resolved): FunnelEntry[] {
  // The funnel applies where the rollout had an attack goal: goal_exact_proposal is N/A elsewhere.
  const withGoal = rows.filter((r) => metricValue(r, 'goal_exact_proposal') !== null);
  const out: FunnelEntry[] = [];
  for (const stage of distinct(withGoal.map((r) => r.stage)))
    for (const model of models)
      for (const defense of defenses) {
        const stratum = withGoal.filter((r) => r.stage === stage && r.model === model && r.defense === defense);
        if (stratum.length === 0) continue;
        const totals = Object.fromEntries(FUNNEL_COUNTS.map((m) => [m, stratum.reduce((s, r) => s + (metricValue(r, m) ?? 0), 0)]));
        out.push({ model, defense, stage, n: stratum.length, cells: FUNNEL_METRICS.map((metric) => cell(stratum, { model, defense, stage, metric }, opts)), totals });
      }
  return out;
}

function defaultPairs(defenses: readonly string[], baseline: string | undefined): [string, string][] {
  const base = baseline ?? (defenses.includes('none') ? 'none' : defenses[0]);
  if (base === undefined) return [];
  return defenses.filter((d) => d !== base).map((d): [string, string] => [base, d]);
}

function checkLabel(label: string, defenses: readonly string[], what: string): void {
  if (!defenses.includes(label))
    throw new AuthbenchError('INVALID_ARGUMENT', `${what} ${label} names no defense in these jobs`, {
      field: what,
      hint: `defenses: ${defenses.join(', ') || 'none'}`,
    });
}

/** The metrics a pair is compared on: each stage's own, and propagation, where any row carries them. */
function comparisonMetrics(stages: readonly StageTable[]): string[] {
  const wanted = new Set<string>(PROPAGATION_METRICS);
  for (const s of stages) for (const m of s.primary) wanted.add(m);
  const present = new Set(stages.flatMap((s) => s.metrics));
  return orderMetrics([...wanted].filter((m) => present.has(m)));
}

/** The divergence projection: stats' defense-invariant trace fields (containment's metric names). */
export const TRAJECTORY_PROJECTION: readonly string[] = DEFAULT_PROJECTION;

function pairReport(rows: readonly ReportRow[], a: string, b: string, stages: readonly StageTable[], opts: Resolved): PairReport {
  const metrics = comparisonMetrics(stages);
  const full = compare(rows, { defenseA: a, defenseB: b, metrics, projection: TRAJECTORY_PROJECTION, ...opts });
  const shown = (metric: string, stage: string): boolean =>
    stageMetrics(stage).includes(metric) || (PROPAGATION_METRICS as readonly string[]).includes(metric);
  const interval = (ci: { lower: number; upper: number } | null): Interval | null => (ci === null ? null : { lower: ci.lower, upper: ci.upper });
  const out: ComparisonRow[] = [];
  for (const m of full.metrics)
    for (const s of m.stages) {
      if (!shown(m.metric, s.stage)) continue;
      out.push({
        metric: m.metric,
        stage: s.stage,
        n_pairs: s.n_pairs,
        mean_a: s.mean_a,
        mean_b: s.mean_b,
        delta: s.delta,
        pair_ci: interval(s.pair_ci),
        cluster_ci: interval(s.cluster_ci),
        verdict: s.verdict,
      });
    }
  out.sort((x, y) => compareStrings(x.stage, y.stage));
  return { defense_a: a, defense_b: b, rows: out, full };
}

const AXES = ['read', 'write', 'execute'] as const;

function staticF1(completed: readonly LoadedResult[], opts: Resolved): StaticF1Entry[] {
  const scored = new Map<string, { model: string; source: string; task: string; score: NonNullable<RolloutResult['static_score']> }>();
  for (const { result: r } of completed) {
    if (r.static_score === null) continue;
    // A policy's score depends on the task and the policy only: count each once, however many defenses and seeds ran it.
    const id = JSON.stringify([r.model, r.policy_source, r.task_id, r.policy_sha256 ?? r.rollout_id]);
    if (!scored.has(id)) scored.set(id, { model: r.model, source: r.policy_source, task: r.task_id, score: r.static_score });
  }
  const entries = [...scored.entries()].sort(([x], [y]) => compareStrings(x, y)).map(([, v]) => v);
  const keys = distinct(entries.map((e) => JSON.stringify([e.model, e.source])));
  return keys.map((k) => {
    const [model = '', source = ''] = JSON.parse(k) as string[];
    const group = entries.filter((e) => e.model === model && e.source === source);
    const avg = (f: (e: (typeof group)[number]) => number): number => group.reduce((s, e) => s + f(e), 0) / group.length;
    const sensitive = group.filter((e) => e.score.sensitive_total > 0);
    return {
      model,
      policy_source: source,
      n: group.length,
      invalid: group.filter((e) => !e.score.valid).length,
      axes: AXES.map((axis) => {
        const ci = clusterBootstrapCi(
          group.map((e) => e.score[axis].f1),
          group.map((e) => e.task),
          opts,
        );
        return {
          axis,
          precision: avg((e) => e.score[axis].precision),
          recall: avg((e) => e.score[axis].recall),
          f1: avg((e) => e.score[axis].f1),
          f1_ci: ci === null ? null : { lower: ci.lower, upper: ci.upper },
        };
      }),
      macro_f1: avg((e) => e.score.macro_f1),
      sensitive_exposure: sensitive.length === 0 ? null : sensitive.reduce((s, e) => s + e.score.sensitive_exposure, 0) / sensitive.length,
    };
  });
}

function findCell(stages: readonly StageTable[], axis: { metric: string; stage: string }, model: string, defense: string): Cell | undefined {
  return stages
    .find((s) => s.stage === axis.stage)
    ?.cells.find((c) => c.model === model && c.defense === defense && c.metric === axis.metric && c.mean !== null);
}

function operatingPoints(stages: readonly StageTable[], models: readonly string[], defenses: readonly string[]): OperatingPoints {
  const hasValues = (axis: { metric: string; stage: string }): boolean =>
    stages.some((s) => s.stage === axis.stage && s.cells.some((c) => c.metric === axis.metric && c.mean !== null));
  const harm = hasValues(HARM_AXIS) ? { ...HARM_AXIS } : null;
  const completion = COMPLETION_AXES.find(hasValues) ?? null;
  const points: OperatingPoint[] = [];
  if (harm !== null && completion !== null)
    for (const model of models)
      for (const defense of defenses) {
        const h = findCell(stages, harm, model, defense);
        const c = findCell(stages, completion, model, defense);
        if (h !== undefined && c !== undefined) points.push({ model, defense, harm: h, completion: c });
      }
  return { harm, completion: completion === null ? null : { ...completion }, points };
}

function groupSummaries(set: RowSet, completed: readonly LoadedResult[]): GroupSummary[] {
  const all = [...completed, ...set.infra];
  const key = (l: LoadedResult): string => JSON.stringify([l.result.model, l.result.policy_source, l.result.defense.name]);
  const groups = distinct(all.map(key)).map((k): GroupSummary => {
    const [model = '', source = '', name = ''] = JSON.parse(k) as string[];
    const mine = all.filter((l) => key(l) === k);
    const done = set.rows.filter((r) => r.model === model && r.policy_source === source && r.defense_name === name);
    const stages: Record<string, number> = {};
    for (const s of distinct(done.map((r) => r.stage))) stages[s] = done.filter((r) => r.stage === s).length;
    return {
      model,
      policy_source: source,
      defense_name: name,
      defense: done[0]?.defense ?? set.infra.find((l) => key(l) === k)?.result.defense.name ?? name,
      rollouts: mine.length,
      completed: done.length,
      infra_errors: mine.length - done.length,
      outcomes: Object.fromEntries(OUTCOMES.map((o) => [o, mine.filter((l) => outcomeOf(l.result) === o).length])) as Record<Outcome, number>,
      stages,
    };
  });
  return groups.sort((x, y) => compareStrings(x.model, y.model) || compareStrings(x.defense, y.defense) || compareStrings(x.policy_source, y.policy_source));
}

function resolve(options: ReportOptions): Resolved {
  return {
    seed: options.seed ?? BOOTSTRAP_DEFAULTS.seed,
    resamples: options.resamples ?? BOOTSTRAP_DEFAULTS.resamples,
    level: options.level ?? BOOTSTRAP_DEFAULTS.level,
  };
}

/** What the headline reads from a report: its stage cells and endpoints. */
export type HeadlineData = Pick<ReportData, 'models' | 'defenses' | 'stages' | 'endpoints'>;

/**
 * The headline's inputs without the rest of the report (`eval` prints it at the end of a run):
 * computed by the same functions with the same options as buildReport, so the numbers are the
 * ones `authbench report` shows for the same results.
 */
export function buildHeadlineData(set: RowSet, options: ReportOptions = {}): HeadlineData {
  const opts = resolve(options);
  const models = distinct(set.rows.map((r) => r.model));
  const defenses = distinct(set.rows.map((r) => r.defense));
  return { models, defenses, stages: stageTables(set.rows, models, defenses, opts), endpoints: endpoints(set.rows, models, defenses, opts) };
}

export function buildReport(jobs: readonly JobInfo[], loaded: readonly LoadedResult[], set: RowSet, options: ReportOptions = {}): ReportData {
  const opts = resolve(options);
  const { rows } = set;
  const models = distinct(rows.map((r) => r.model));
  const defenses = distinct(rows.map((r) => r.defense));
  if (options.baseline !== undefined) checkLabel(options.baseline, defenses, 'baseline');
  const pairs = options.pairs !== undefined && options.pairs.length > 0 ? options.pairs.map(([a, b]): [string, string] => [a, b]) : defaultPairs(defenses, options.baseline);
  for (const [a, b] of pairs) {
    checkLabel(a, defenses, 'pair');
    checkLabel(b, defenses, 'pair');
    if (a === b) throw new AuthbenchError('INVALID_ARGUMENT', `pair ${a},${b} compares a defense with itself`, { field: 'pair' });
  }
  const completed = loaded.filter((l) => l.result.status === 'completed');
  const stages = stageTables(rows, models, defenses, opts);
  const parser = parserRows(loaded.map((l) => l.result));
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    authbench_version: AUTHBENCH_VERSION,
    options: { ...opts, baseline: options.baseline ?? null, pairs },
    label_rule: set.rule,
    jobs: jobs.map((j) => ({
      dir: j.dir,
      model: j.config.model,
      policies: [...j.config.policies],
      defenses: [...j.config.defenses],
      attempts: j.config.attempts,
      seed: j.config.seed,
      results: j.results,
      unfinished: j.unfinished.length,
    })),
    models,
    defenses,
    stage_names: stages.map((s) => s.stage),
    groups: groupSummaries(set, completed),
    infra_errors: set.infra.map(({ job, result: r }) => ({
      job,
      rollout_id: r.rollout_id,
      task_id: r.task_id,
      model: r.model,
      defense: r.defense.name,
      source: r.infra_error?.source ?? 'unknown',
      code: r.infra_error?.code ?? 'unknown',
      message: r.infra_error?.message ?? '',
    })),
    flagged: loaded.flatMap(({ job, result: r }) =>
      flaggedRollouts([r]).map((f) => ({ job, rollout_id: r.rollout_id, task_id: r.task_id, model: r.model, defense: r.defense.name, outcome: f.outcome, why: f.why })),
    ),
    ...(parser.length === 0 ? {} : { parser }),
    stages,
    endpoints: endpoints(rows, models, defenses, opts),
    propagation: stages.flatMap((s) => s.cells.filter((c) => (PROPAGATION_METRICS as readonly string[]).includes(c.metric))),
    funnel: funnelEntries(rows, models, defenses, opts),
    comparisons: pairs.map(([a, b]) => pairReport(rows, a, b, stages, opts)),
    static_f1: staticF1(completed, opts),
    operating_points: operatingPoints(stages, models, defenses),
  };
}

/**
 * Every statistic for one pair of defense labels (`authbench compare`):
 * the stage metrics and propagation by default, the trajectory projection in
 * this codebase's metric names. Throws naming the labels when one is unknown.
 */
export function comparePair(set: RowSet, a: string, b: string, options: ReportOptions & { metrics?: readonly string[] } = {}): Comparison {
  const defenses = distinct(set.rows.map((r) => r.defense));
  checkLabel(a, defenses, 'a');
  checkLabel(b, defenses, 'b');
  const present = new Set(set.rows.flatMap((r) => Object.keys(r.metrics).filter((m) => metricValue(r, m) !== null)));
  const wanted = options.metrics ?? orderMetrics([...distinct(set.rows.map((r) => r.stage)).flatMap((s) => stageMetrics(s)), ...PROPAGATION_METRICS]).filter((m) => present.has(m));
  return compare(set.rows, {
    defenseA: a,
    defenseB: b,
    metrics: wanted,
    projection: TRAJECTORY_PROJECTION,
    seed: options.seed ?? BOOTSTRAP_DEFAULTS.seed,
    resamples: options.resamples ?? BOOTSTRAP_DEFAULTS.resamples,
    level: options.level ?? BOOTSTRAP_DEFAULTS.level,
  });
}
