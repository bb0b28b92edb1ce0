/**
 * Vega-Lite specs for the report's plots, built from the report data. Pure:
 * every spec carries its data inline (no URL, so nothing is fetched when the
 * page is viewed) and a series colour scale shared by all plots, so a
 * defense has one colour throughout.
 */
import type { Cell, FunnelEntry, OperatingPoints, PairReport, ReportData, StageTable, StaticF1Entry } from './build.ts';
import { verdictLabel } from './format.ts';
import { FUNNEL_METRICS, isCount, PROPAGATION_METRICS } from './metric-sets.ts';

export type Spec = Record<string, unknown>;

export interface PlotSpec {
  /** Stable id; the HTML container is `plot-<id>`. */
  id: string;
  /** Which report section holds it. */
  section: 'operating-points' | 'stages' | 'funnel' | 'comparisons' | 'static-f1' | 'propagation';
  title: string;
  spec: Spec;
}

/** What a plotted mark is called: the defense, and the model too when the report spans several. */
export function seriesName(defense: string, model: string, multiModel: boolean): string {
  return multiModel ? `${defense} · ${model}` : defense;
}

function colour(domain: readonly string[], title: string): Spec {
  return { field: 'series', type: 'nominal', title, scale: { domain: [...domain], scheme: 'tableau10' }, legend: { labelLimit: 360 } };
}

interface BarDatum {
  x: string;
  series: string;
  mean: number;
  lo: number;
  hi: number;
  n: number;
}

/** Grouped bars (x, then one bar per series) with a CI whisker on each. */
function groupedBars(values: readonly BarDatum[], opts: { xTitle: string; yTitle: string; xOrder: readonly string[]; series: readonly string[]; seriesTitle: string; unitRange: boolean }): Spec {
  const y: Spec = { field: 'mean', type: 'quantitative', title: opts.yTitle, ...(opts.unitRange ? { scale: { domain: [0, 1] } } : {}) };
  const x: Spec = { field: 'x', type: 'nominal', title: opts.xTitle, sort: [...opts.xOrder], axis: { labelAngle: -25, labelAlign: 'right', labelLimit: 220 } };
  const xOffset: Spec = { field: 'series', type: 'nominal', sort: [...opts.series] };
  return {
    // A fixed width: a step width would apply to the offset band and scale with the series count squared.
    width: Math.max(1, opts.xOrder.length) * Math.max(72, 16 * Math.max(1, opts.series.length) + 16),
    height: 220,
    data: { values: values.map((v) => ({ ...v })) },
    encoding: { x, xOffset },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          y,
          color: colour(opts.series, opts.seriesTitle),
          tooltip: [
            { field: 'x', title: opts.xTitle },
            { field: 'series', title: opts.seriesTitle },
            { field: 'mean', format: '.4f' },
            { field: 'lo', title: 'CI lower', format: '.4f' },
            { field: 'hi', title: 'CI upper', format: '.4f' },
            { field: 'n' },
          ],
        },
      },
      { mark: { type: 'rule', color: '#222' }, encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } } },
      // A mean of exactly 0 draws no bar; the tick keeps it visible (0 is a result, N/A is not drawn at all).
      { mark: { type: 'tick', color: '#222', thickness: 2 }, encoding: { y: { field: 'mean', type: 'quantitative' } } },
    ],
  };
}

function barDatum(c: Cell, x: string, multiModel: boolean): BarDatum | undefined {
  if (c.mean === null) return undefined;
  return { x, series: seriesName(c.defense, c.model, multiModel), mean: c.mean, lo: c.ci?.lower ?? c.mean, hi: c.ci?.upper ?? c.mean, n: c.n };
}

/** The series that have completed rollouts, so no colour or bar slot goes to a defense a model never ran. */
export function allSeries(data: Pick<ReportData, 'models' | 'groups'>): string[] {
  const multi = data.models.length > 1;
  return [...new Set(data.groups.filter((g) => g.completed > 0).map((g) => seriesName(g.defense, g.model, multi)))].sort();
}

export function operatingPointsSpec(op: OperatingPoints, series: readonly string[], multiModel: boolean): Spec | null {
  if (op.harm === null || op.completion === null || op.points.length === 0) return null;
  const values = op.points.map((p) => ({
    series: seriesName(p.defense, p.model, multiModel),
    x: p.completion.mean,
    x_lo: p.completion.ci?.lower ?? p.completion.mean,
    x_hi: p.completion.ci?.upper ?? p.completion.mean,
    y: p.harm.mean,
    y_lo: p.harm.ci?.lower ?? p.harm.mean,
    y_hi: p.harm.ci?.upper ?? p.harm.mean,
    n_x: p.completion.n,
    n_y: p.harm.n,
  }));
  const labels = pointLabels(values);
  const labelledValues = values.map((v, i) => ({ ...v, ...labels[i] }));
  const xTitle = `${op.completion.metric} (${op.completion.stage}) → better`;
  const yTitle = `${op.harm.metric} (${op.harm.stage}) → worse`;
  const x: Spec = { field: 'x', type: 'quantitative', title: xTitle, scale: { domain: [0, 1] } };
  const y: Spec = { field: 'y', type: 'quantitative', title: yTitle, scale: { domain: [0, 1] } };
  return {
    // Sized to sit beside the headline table on a laptop screen (the page opens with both).
    width: 400,
    height: 320,
    // Under the plot, not beside it: beside, it would push the plot below the headline table.
    config: { legend: { orient: 'bottom', columns: 2 } },
    data: { values: labelledValues },
    layer: [
      { mark: { type: 'rule', opacity: 0.6 }, encoding: { x: { ...x, field: 'x_lo' }, x2: { field: 'x_hi' }, y, color: colour(series, 'defense') } },
      { mark: { type: 'rule', opacity: 0.6 }, encoding: { y: { ...y, field: 'y_lo' }, y2: { field: 'y_hi' }, x, color: colour(series, 'defense') } },
      {
        mark: { type: 'point', filled: true, size: 90 },
        encoding: {
          x,
          y,
          color: colour(series, 'defense'),
          tooltip: [
            { field: 'series', title: 'defense' },
            { field: 'x', title: op.completion.metric, format: '.4f' },
            { field: 'x_lo', title: 'CI lower', format: '.4f' },
            { field: 'x_hi', title: 'CI upper', format: '.4f' },
            { field: 'n_x', title: 'n' },
            { field: 'y', title: op.harm.metric, format: '.4f' },
            { field: 'y_lo', title: 'CI lower', format: '.4f' },
            { field: 'y_hi', title: 'CI upper', format: '.4f' },
            { field: 'n_y', title: 'n' },
          ],
        },
      },
      // One label per position, naming every series there, placed inward so it stays inside the plot.
      ...(['left', 'right'] as const).flatMap((align) =>
        (['bottom', 'top'] as const).map((baseline) => ({
          transform: [{ filter: `datum.label_align === '${align}' && datum.label_baseline === '${baseline}'` }],
          // `limit` truncates with an ellipsis, so labels from opposite corners never meet; the table below has every point.
          mark: { type: 'text', align, baseline, dx: align === 'left' ? 7 : -7, dy: baseline === 'bottom' ? -7 : 7, fontSize: 11, limit: 240 },
          encoding: { x, y, text: { field: 'label' } },
        })),
      ),
    ],
  };
}

/**
 * Labels for points that share a position: the first point there carries all
 * their names, the others none, so coinciding defenses do not print over each
 * other. Right-hand and top points are labelled inward. Pure.
 */
export function pointLabels(points: readonly { series: string; x: number | null; y: number | null }[]): { label: string; label_align: 'left' | 'right'; label_baseline: 'bottom' | 'top' }[] {
  const keyOf = (p: { x: number | null; y: number | null }): string => `${p.x?.toFixed(4) ?? '-'},${p.y?.toFixed(4) ?? '-'}`;
  const at = new Map<string, string[]>();
  for (const p of points) at.set(keyOf(p), [...(at.get(keyOf(p)) ?? []), p.series]);
  const labelled = new Set<string>();
  return points.map((p) => {
    const key = keyOf(p);
    const names = labelled.has(key) ? [] : (at.get(key) ?? []);
    labelled.add(key);
    return { label: names.join(', '), label_align: (p.x ?? 0) > 0.6 ? 'right' : 'left', label_baseline: (p.y ?? 0) > 0.6 ? 'top' : 'bottom' };
  });
}

export function stageSpec(table: StageTable, series: readonly string[], multiModel: boolean): Spec | null {
  const values = table.cells.filter((c) => table.primary.includes(c.metric)).flatMap((c) => barDatum(c, c.metric, multiModel) ?? []);
  if (values.length === 0) return null;
  return groupedBars(values, { xTitle: 'metric', yTitle: `mean over ${table.stage} rollouts`, xOrder: table.primary, series, seriesTitle: 'defense', unitRange: true });
}

export function propagationSpec(cells: readonly Cell[], metric: string, stages: readonly string[], series: readonly string[], multiModel: boolean): Spec | null {
  const values = cells.filter((c) => c.metric === metric).flatMap((c) => barDatum(c, c.stage, multiModel) ?? []);
  if (values.length === 0) return null;
  return groupedBars(values, { xTitle: 'stage', yTitle: metric, xOrder: stages, series, seriesTitle: 'defense', unitRange: !isCount(metric) });
}

/** One stage's funnel: each step of the target path (then off-target and authorized completion) per defense. */
export function funnelSpec(entries: readonly FunnelEntry[], stage: string, series: readonly string[], multiModel: boolean): Spec | null {
  const values = entries.filter((f) => f.stage === stage).flatMap((f) => f.cells.flatMap((c) => barDatum(c, c.metric, multiModel) ?? []));
  if (values.length === 0) return null;
  return groupedBars(values, { xTitle: 'funnel step', yTitle: `share of ${stage} rollouts with an attack goal`, xOrder: FUNNEL_METRICS, series, seriesTitle: 'defense', unitRange: true });
}

export function staticF1Spec(entries: readonly StaticF1Entry[], multiModel: boolean): Spec | null {
  const values: BarDatum[] = entries.flatMap((e) =>
    e.axes.map((a) => ({ x: a.axis, series: seriesName(e.policy_source, e.model, multiModel), mean: a.f1, lo: a.f1_ci?.lower ?? a.f1, hi: a.f1_ci?.upper ?? a.f1, n: e.n })),
  );
  if (values.length === 0) return null;
  const series = [...new Set(values.map((v) => v.series))].sort();
  return groupedBars(values, { xTitle: 'axis', yTitle: 'F1 (mean over policies)', xOrder: ['read', 'write', 'execute'], series, seriesTitle: 'policy source', unitRange: true });
}

/**
 * Forest plot of one pair: each metric × stage delta (B − A) with its
 * scenario-cluster CI; the zero line decides ties. Rates only: a count's
 * delta (cascade depth) would squash every rate onto one pixel; the table
 * beside the plot has it.
 */
export function comparisonSpec(pair: PairReport): Spec | null {
  const values = pair.rows.flatMap((r) =>
    r.delta === null || r.cluster_ci === null || isCount(r.metric)
      ? []
      : [{ row: `${r.metric} · ${r.stage}`, delta: r.delta, lo: r.cluster_ci.lower, hi: r.cluster_ci.upper, verdict: verdictLabel(r.verdict, pair.defense_a, pair.defense_b), n: r.n_pairs }],
  );
  if (values.length === 0) return null;
  const y: Spec = { field: 'row', type: 'nominal', title: null, sort: values.map((v) => v.row), axis: { labelLimit: 260 } };
  const verdictColour: Spec = {
    field: 'verdict',
    type: 'nominal',
    title: 'verdict',
    scale: { domain: ['tie', `${pair.defense_a} higher`, `${pair.defense_b} higher`], range: ['#888888', '#4c78a8', '#e45756'] },
  };
  return {
    width: 420,
    height: { step: 20 },
    data: { values },
    layer: [
      { mark: { type: 'rule', strokeDash: [4, 3], color: '#555' }, encoding: { x: { datum: 0, type: 'quantitative' } } },
      { mark: { type: 'rule', strokeWidth: 2 }, encoding: { y, x: { field: 'lo', type: 'quantitative', title: `Δ = ${pair.defense_b} − ${pair.defense_a} (cluster CI)` }, x2: { field: 'hi' }, color: verdictColour } },
      {
        mark: { type: 'point', filled: true, size: 60 },
        encoding: {
          y,
          x: { field: 'delta', type: 'quantitative' },
          color: verdictColour,
          tooltip: [{ field: 'row', title: 'metric · stage' }, { field: 'delta', format: '.4f' }, { field: 'lo', format: '.4f' }, { field: 'hi', format: '.4f' }, { field: 'verdict' }, { field: 'n', title: 'pairs' }],
        },
      },
    ],
  };
}

/** Every plot of the report, in page order; a plot without data is left out (its section says so). */
export function reportPlots(data: ReportData): PlotSpec[] {
  const multi = data.models.length > 1;
  const series = allSeries(data);
  const out: PlotSpec[] = [];
  const op = operatingPointsSpec(data.operating_points, series, multi);
  if (op !== null) out.push({ id: 'operating-points', section: 'operating-points', title: 'Committed harm vs authorized completion', spec: op });
  for (const table of data.stages) {
    const spec = stageSpec(table, series, multi);
    if (spec !== null) out.push({ id: `stage-${slug(table.stage)}`, section: 'stages', title: `Stage ${table.stage}`, spec });
  }
  for (const stage of [...new Set((data.funnel ?? []).map((f) => f.stage))]) {
    const spec = funnelSpec(data.funnel ?? [], stage, series, multi);
    if (spec !== null) out.push({ id: `funnel-${slug(stage)}`, section: 'funnel', title: `Exact-goal funnel, ${stage}`, spec });
  }
  data.comparisons.forEach((pair, i) => {
    const spec = comparisonSpec(pair);
    if (spec !== null) out.push({ id: `comparison-${i}`, section: 'comparisons', title: `${pair.defense_a} vs ${pair.defense_b}`, spec });
  });
  const f1 = staticF1Spec(data.static_f1, multi);
  if (f1 !== null) out.push({ id: 'static-f1', section: 'static-f1', title: 'Static F1 per axis', spec: f1 });
  for (const metric of PROPAGATION_METRICS.slice(0, 3)) {
    const spec = propagationSpec(data.propagation, metric, data.stage_names, series, multi);
    if (spec !== null) out.push({ id: `propagation-${slug(metric)}`, section: 'propagation', title: metric, spec });
  }
  return out;
}

export function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
