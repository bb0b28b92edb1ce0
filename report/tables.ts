/**
 * Every table of the report as headers and rows of text, built once for the
 * terminal (`authbench report`) and the HTML page alike; each renders them its
 * own way (aligned columns, or escaped <table>s). `brief` cells fit a terminal
 * (a mean), `full` ones carry the interval and n. Pure.
 */
import type { HeadlineData, PairReport, ReportData, StageTable } from './build.ts';
import { cellText, endpointText, interval, NA_TEXT, num, verdictLabel } from './format.ts';
import { ENDPOINT_METRICS, FUNNEL_METRICS, HEADLINE_COLUMNS, PROPAGATION_METRICS } from './metric-sets.ts';
import { seriesName } from './plots.ts';

export interface TextTable {
  headers: readonly string[];
  rows: readonly (readonly string[])[];
}

/** brief: one number per cell (terminal); full: mean [CI] n, precision / recall / F1 (HTML). */
export type Detail = 'brief' | 'full';

function series(data: Pick<ReportData, 'models'>, defense: string, model: string): string {
  return seriesName(defense, model, data.models.length > 1);
}

function meanCell(c: Parameters<typeof cellText>[0], detail: Detail): string {
  return detail === 'full' ? cellText(c) : c === undefined ? '' : num(c.mean, 3);
}

/** A headline column whose stage had no completed rollout for the defense. */
export const NOT_RUN_TEXT = 'not run';

const HEADLINE_DIGITS = 3;

/**
 * One row per defense (and model) with the headline numbers, the same text for the HTML panel and
 * the terminal. Each cell is the report's own stage cell — mean [scenario-cluster CI] n — except
 * an endpoint with no event at all, which shows the report's one-sided upper bound instead of a
 * [0, 0] interval that would read as proof of safety.
 */
export function headlineTable(data: HeadlineData): TextTable {
  const rows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const cells = HEADLINE_COLUMNS.map(({ metric, stage }) => {
        const c = data.stages.find((s) => s.stage === stage)?.cells.find((x) => x.model === model && x.defense === defense && x.metric === metric);
        const bound = data.endpoints.find((e) => e.model === model && e.defense === defense && e.stage === stage && e.metric === metric && e.zero_event !== null);
        if (c === undefined) return NOT_RUN_TEXT;
        return bound === undefined ? cellText(c, HEADLINE_DIGITS) : endpointText(bound, HEADLINE_DIGITS);
      });
      // A model the defense never ran with has no row; a defense run only on other stages has one.
      const ran = data.stages.some((s) => s.cells.some((x) => x.model === model && x.defense === defense));
      return ran ? [[series(data, defense, model), ...cells]] : [];
    }),
  );
  return { headers: ['defense', ...HEADLINE_COLUMNS.map((c) => c.label)], rows };
}

/** What each headline column is: metric and stage, for the line under the table. */
export function headlineLegend(): string {
  return HEADLINE_COLUMNS.map((c) => `${c.label} = ${c.metric} on ${c.stage}`).join('; ');
}

export function jobsTable(data: ReportData): TextTable {
  return {
    headers: ['job', 'model', 'policy sources', 'defenses', 'attempts', 'base seed', 'results', 'unfinished'],
    rows: data.jobs.map((j) => [j.dir, j.model, j.policies.join(', '), j.defenses.join(', '), String(j.attempts), String(j.seed), String(j.results), String(j.unfinished)]),
  };
}

/** The rollout groups: outcome counts, then completed rollouts per stage. */
export function groupsTable(data: ReportData): TextTable {
  const stages = data.stage_names;
  return {
    headers: ['model', 'policy source', 'defense', 'label', 'rollouts', 'completed', 'sandbox tampered', 'validator tampered', 'agent error', 'infra errors', ...stages.map((s) => `n ${s}`)],
    rows: data.groups.map((g) => [
      g.model,
      g.policy_source,
      g.defense_name,
      g.defense,
      String(g.rollouts),
      String(g.outcomes.completed),
      String(g.outcomes.sandbox_tampered),
      String(g.outcomes.validator_surface_tampered),
      String(g.outcomes.agent_error),
      String(g.infra_errors),
      ...stages.map((s) => String(g.stages[s] ?? 0)),
    ]),
  };
}

export function infraTable(data: ReportData, max: number): TextTable {
  return {
    headers: ['job', 'rollout', 'model', 'defense', 'source', 'code', 'message'],
    rows: data.infra_errors.slice(0, max).map((e) => [e.job, e.rollout_id, e.model, e.defense, e.source, e.code, e.message]),
  };
}

/**
 * Text-mode replies per model by parser status (rates of the replies), and native-mode replies
 * that wrote an action as text; no rows when no rollout acted through text.
 */
export function parserTable(data: ReportData): TextTable {
  const pct = (n: number, of: number): string => (of === 0 ? 'N/A' : `${((n / of) * 100).toFixed(1)}%`);
  return {
    headers: ['model', 'rollouts', 'replies', 'strict', 'repaired', 'invalid', 'actions as text (native)'],
    rows: (data.parser ?? []).map((p) => [p.model, String(p.rollouts), String(p.replies), pct(p.strict, p.replies), pct(p.repaired, p.replies), pct(p.invalid, p.replies), String(p.actionsAsText ?? 0)]),
  };
}

export function flaggedTable(data: ReportData, max: number): TextTable {
  return {
    headers: ['job', 'rollout', 'model', 'defense', 'outcome', 'why'],
    rows: data.flagged.slice(0, max).map((f) => [f.job, f.rollout_id, f.model, f.defense, f.outcome, f.why]),
  };
}

/** Events / applicable rollouts per defense and stage, plus each defense's all-stages row. */
export function endpointsTable(data: ReportData): TextTable {
  const rows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const mine = data.endpoints.filter((e) => e.model === model && e.defense === defense);
      return [...new Set(mine.map((e) => e.stage))].map((stage) => [
        series(data, defense, model),
        stage ?? 'all stages',
        ...ENDPOINT_METRICS.map((m) => {
          const e = mine.find((x) => x.stage === stage && x.metric === m);
          return e === undefined ? NA_TEXT : endpointText(e);
        }),
      ]);
    }),
  );
  return { headers: ['defense', 'stage', ...ENDPOINT_METRICS], rows };
}

export function operatingPointsTable(data: ReportData): TextTable {
  const op = data.operating_points;
  return {
    headers: ['defense', op.completion?.metric ?? 'completion', op.harm?.metric ?? 'harm'],
    rows: op.points.map((p) => [series(data, p.defense, p.model), cellText(p.completion), cellText(p.harm)]),
  };
}

/** One stage: per defense, its rollouts (applicable + N/A) and the stage's primary metrics. */
export function stageTable(data: ReportData, t: StageTable, detail: Detail): TextTable {
  const rows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const mine = t.cells.filter((c) => c.model === model && c.defense === defense);
      const first = mine[0];
      if (first === undefined) return [];
      // Every cell of a stratum covers the same rollouts: applicable + N/A.
      return [[series(data, defense, model), String(first.n + first.n_na), ...t.primary.map((m) => meanCell(mine.find((c) => c.metric === m), detail))]];
    }),
  );
  return { headers: ['defense', 'rollouts', ...t.primary], rows };
}

export function comparisonTable(pair: PairReport): TextTable {
  return {
    headers: ['metric', 'stage', 'pairs', 'mean A', 'mean B', 'Δ B−A', 'pair CI', 'cluster CI', 'verdict'],
    rows: pair.rows.map((r) => [
      r.metric,
      r.stage,
      String(r.n_pairs),
      num(r.mean_a),
      num(r.mean_b),
      num(r.delta),
      interval(r.pair_ci),
      interval(r.cluster_ci),
      verdictLabel(r.verdict, pair.defense_a, pair.defense_b),
    ]),
  };
}

export function propagationTable(data: ReportData, detail: Detail): TextTable {
  const strata = [...new Set(data.propagation.map((c) => JSON.stringify([c.model, c.defense, c.stage])))].sort();
  const rows = strata.map((k) => {
    const [model = '', defense = '', stage = ''] = JSON.parse(k) as string[];
    return [
      series(data, defense, model),
      stage,
      ...PROPAGATION_METRICS.map((m) => meanCell(data.propagation.find((c) => c.model === model && c.defense === defense && c.stage === stage && c.metric === m), detail)),
    ];
  });
  return { headers: ['defense', 'stage', ...PROPAGATION_METRICS], rows };
}

/** Column titles of the funnel, in FUNNEL_METRICS order (the paper's Table 18 wording). */
export const FUNNEL_HEADERS: readonly string[] = ['exact proposal', 'policy pass', 'goal-matched commit', 'goal completed', 'off-target commit', 'authorized completion'];

/**
 * The exact-goal funnel per defense and stage: rollouts with an attack goal, the share reaching
 * each stage of the target path, then off-target commits and authorized completion beside it, and
 * the totals (exact proposals → passed → goal-matched commits; off-target commits).
 */
export function funnelTable(data: Pick<ReportData, 'models' | 'funnel'>, detail: Detail): TextTable {
  const rows = (data.funnel ?? []).map((f) => [
    series(data, f.defense, f.model),
    f.stage,
    String(f.n),
    ...FUNNEL_METRICS.map((m) => meanCell(f.cells.find((c) => c.metric === m), detail)),
    `${f.totals['goal_exact_proposals'] ?? 0} → ${f.totals['goal_passed_proposals'] ?? 0} → ${f.totals['goal_matched_commits'] ?? 0}`,
    String(f.totals['off_target_commits'] ?? 0),
  ]);
  return { headers: ['defense', 'stage', 'attacks', ...FUNNEL_HEADERS, 'proposals → passed → commits', 'off-target commits'], rows };
}

export function staticF1Table(data: ReportData, detail: Detail): TextTable {
  const full = detail === 'full';
  return {
    headers: ['policy source', 'policies', 'invalid', ...(['read', 'write', 'execute'] as const).map((a) => (full ? `${a} P/R/F1` : `${a} F1`)), 'macro F1', 'SER'],
    rows: data.static_f1.map((e) => [
      series(data, e.policy_source, e.model),
      String(e.n),
      String(e.invalid),
      ...e.axes.map((a) => (full ? `${num(a.precision, 3)} / ${num(a.recall, 3)} / ${num(a.f1, 3)} ${interval(a.f1_ci, 3)}` : num(a.f1, 3))),
      num(e.macro_f1, full ? 4 : 3),
      num(e.sensitive_exposure, full ? 4 : 3),
    ]),
  };
}
