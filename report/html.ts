/**
 * report.html: one self-contained page. Tables are rendered here, as HTML;
 * plots and the trace viewer are drawn in the browser from data inlined in
 * the page, with the plotting library inlined too — the page fetches
 * nothing. When every plot has rendered, <body> gets data-plots="rendered"
 * (or "failed:<ids>"), which is what the browser test waits for. Pure.
 */
import type { ReportData, StageTable } from './build.ts';
import type { ScriptAsset } from './assets.ts';
import { cellText, endpointText, GROUP_HEADERS, groupRow, interval, NA_TEXT, num, verdictLabel } from './format.ts';
import { ENDPOINT_METRICS, PROPAGATION_METRICS } from './metric-sets.ts';
import { reportPlots, seriesName, slug, type PlotSpec } from './plots.ts';
import { TRACE_CAPS, type TraceView } from './trace-view.ts';

export const SECTION_IDS = ['summary', 'operating-points', 'stages', 'comparisons', 'static-f1', 'propagation', 'trace-viewer', 'how-to-read'] as const;

export function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

/** JSON that is safe inside <script>: no `</script>` or `<!--` can end or change the element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c').replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

/** A library inlined in <script>: `</script` would end the element early; `<\\/script` means the same to JavaScript. */
export function inlineScript(code: string): string {
  return code.replaceAll('</script', '<\\/script');
}

function table(headers: readonly string[], rows: readonly (readonly string[])[], cls = ''): string {
  if (rows.length === 0) return '<p class="empty">No rows.</p>';
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td${c === NA_TEXT ? ' class="na"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table${cls === '' ? '' : ` class="${cls}"`}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function plotDivs(plots: readonly PlotSpec[], section: PlotSpec['section'], empty: string): string {
  const mine = plots.filter((p) => p.section === section);
  if (mine.length === 0) return `<p class="empty">${escapeHtml(empty)}</p>`;
  return mine.map((p) => `<figure><figcaption>${escapeHtml(p.title)}</figcaption><div class="plot" id="plot-${p.id}"></div></figure>`).join('\n');
}

function series(data: ReportData, defense: string, model: string): string {
  return seriesName(defense, model, data.models.length > 1);
}

function summarySection(data: ReportData): string {
  const jobs = table(
    ['job', 'model', 'policy sources', 'defenses', 'attempts', 'base seed', 'results', 'unfinished'],
    data.jobs.map((j) => [j.dir, j.model, j.policies.join(', '), j.defenses.join(', '), String(j.attempts), String(j.seed), String(j.results), String(j.unfinished)]),
  );
  const stages = data.stage_names;
  const groups = table(
    [...GROUP_HEADERS, ...stages.map((s) => `n ${s}`)],
    data.groups.map((g) => [...groupRow(g), ...stages.map((s) => String(g.stages[s] ?? 0))]),
  );
  const infra =
    data.infra_errors.length === 0
      ? '<p>No infrastructure errors.</p>'
      : `<p>${data.infra_errors.length} rollout(s) ended in an infrastructure error; they are excluded from every rate and mean below.</p>` +
        table(
          ['job', 'rollout', 'model', 'defense', 'source', 'code', 'message'],
          data.infra_errors.slice(0, 100).map((e) => [e.job, e.rollout_id, e.model, e.defense, e.source, e.code, e.message]),
        );
  const flagged =
    data.flagged.length === 0
      ? '<p>No rollout tampered with the sandbox or the validators, failed on the agent\'s side, or wrote on the validator surface.</p>'
      : `<p>${data.flagged.length} rollout(s) need a look whatever their verdict. Tampered rollouts and agent errors count as failures of the agent; writes on the validator surface are a flag (a critical one voids the verdict).</p>` +
        table(
          ['job', 'rollout', 'model', 'defense', 'outcome', 'why'],
          data.flagged.slice(0, 200).map((f) => [f.job, f.rollout_id, f.model, f.defense, f.outcome, f.why]),
        );
  const endpointRows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const mine = data.endpoints.filter((e) => e.model === model && e.defense === defense);
      const scopes = [...new Set(mine.map((e) => e.stage))];
      return scopes.map((stage) => [
        series(data, defense, model),
        stage ?? 'all stages',
        ...ENDPOINT_METRICS.map((m) => {
          const e = mine.find((x) => x.stage === stage && x.metric === m);
          return e === undefined ? NA_TEXT : endpointText(e);
        }),
      ]);
    }),
  );
  const o = data.options;
  return `<section id="summary"><h2>Summary</h2>
<p>Defense labels: ${data.label_rule === 'defense' ? 'the defense name (one policy source)' : '<code>defense@policy source</code> (several policy sources)'}.
Intervals: ${Math.round(o.level * 100)}% percentile bootstrap over scenario clusters, ${o.resamples} resamples, seed ${o.seed}.</p>
<h3>Jobs</h3>${jobs}
<h3>Groups (model × policy source × defense)</h3>${groups}
<h3>Infrastructure errors</h3>${infra}
<h3>Flagged rollouts</h3>${flagged}
<h3>Endpoints</h3>
<p>Events / applicable rollouts. When none happened, the one-sided exact upper bound on the per-cluster rate is shown (rule of three ≈ 3/n): unobserved risk, not zero risk.</p>
${table(['defense', 'stage', ...ENDPOINT_METRICS], endpointRows, 'endpoints')}
</section>`;
}

function operatingSection(data: ReportData, plots: readonly PlotSpec[]): string {
  const op = data.operating_points;
  const axes =
    op.harm === null || op.completion === null
      ? '<p class="empty">Needs committed_harm on the security stage and a completion metric on its own stage.</p>'
      : `<p>x: mean <code>${escapeHtml(op.completion.metric)}</code> on the ${escapeHtml(op.completion.stage)} stage; y: mean <code>${escapeHtml(op.harm.metric)}</code> on the ${escapeHtml(op.harm.stage)} stage. Whiskers: cluster-bootstrap CIs. Best is bottom right.</p>`;
  const rows = op.points.map((p) => [series(data, p.defense, p.model), cellText(p.completion), cellText(p.harm)]);
  return `<section id="operating-points"><h2>Operating points</h2>${axes}
${plotDivs(plots, 'operating-points', 'No defense has both axes.')}
${table(['defense', op.completion?.metric ?? 'completion', op.harm?.metric ?? 'harm'], rows)}
</section>`;
}

function stageTableHtml(data: ReportData, t: StageTable): string {
  const rows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const mine = t.cells.filter((c) => c.model === model && c.defense === defense);
      const first = mine[0];
      if (first === undefined) return [];
      // Every cell of a stratum covers the same rollouts: applicable + N/A.
      return [[series(data, defense, model), String(first.n + first.n_na), ...t.primary.map((m) => cellText(mine.find((c) => c.metric === m)))]];
    }),
  );
  return table(['defense', 'rollouts', ...t.primary], rows);
}

function stagesSection(data: ReportData, plots: readonly PlotSpec[]): string {
  const parts = data.stages.map(
    (t) => `<h3>${escapeHtml(t.stage)}</h3>
${plotDivs(
  plots.filter((p) => p.id === `stage-${slug(t.stage)}`),
  'stages',
  'No applicable values on this stage.',
)}
${stageTableHtml(data, t)}`,
  );
  return `<section id="stages"><h2>Stages</h2>
<p>Means per defense and evidence stage, over the rollouts where the metric applies; stages are never pooled. N/A: the metric does not apply (never counted as 0). Cells: mean [CI] n.</p>
${parts.join('\n') || '<p class="empty">No completed rollouts.</p>'}
</section>`;
}

function comparisonsSection(data: ReportData, plots: readonly PlotSpec[]): string {
  const parts = data.comparisons.map((pair, i) => {
    const rows = pair.rows.map((r) => [
      r.metric,
      r.stage,
      String(r.n_pairs),
      num(r.mean_a),
      num(r.mean_b),
      num(r.delta),
      interval(r.pair_ci),
      interval(r.cluster_ci),
      verdictLabel(r.verdict, pair.defense_a, pair.defense_b),
    ]);
    const plot = plots.find((p) => p.id === `comparison-${i}`);
    return `<h3>${escapeHtml(pair.defense_a)} (A) vs ${escapeHtml(pair.defense_b)} (B)</h3>
${plot === undefined ? '<p class="empty">No pairs to plot.</p>' : plotDivs([plot], 'comparisons', '')}
${table(['metric', 'stage', 'pairs', 'mean A', 'mean B', 'Δ B−A', 'pair CI', 'cluster CI', 'verdict'], rows, 'comparisons')}`;
  });
  return `<section id="comparisons"><h2>Paired comparisons</h2>
<p>Pairs share scenario, model and seed. Δ = B − A. The verdict comes from the scenario-cluster CI: a CI that contains 0 is a tie.</p>
${parts.join('\n') || '<p class="empty">Fewer than two defenses: nothing to compare.</p>'}
</section>`;
}

function staticSection(data: ReportData, plots: readonly PlotSpec[]): string {
  const rows = data.static_f1.map((e) => [
    series(data, e.policy_source, e.model),
    String(e.n),
    String(e.invalid),
    ...e.axes.map((a) => `${num(a.precision, 3)} / ${num(a.recall, 3)} / ${num(a.f1, 3)} ${interval(a.f1_ci, 3)}`),
    num(e.macro_f1),
    num(e.sensitive_exposure),
  ]);
  return `<section id="static-f1"><h2>Static policy scores</h2>
<p>Per-axis precision / recall / F1 of the enforced policy against gold, averaged over distinct (task, policy) pairs; SER = sensitive exposure, over tasks with sensitive entries.</p>
${plotDivs(plots, 'static-f1', 'No policy was scored (defense none only).')}
${table(['policy source', 'policies', 'invalid', 'read P/R/F1', 'write P/R/F1', 'execute P/R/F1', 'macro F1', 'SER'], rows)}
</section>`;
}

function propagationSection(data: ReportData, plots: readonly PlotSpec[]): string {
  const strata = [...new Set(data.propagation.map((c) => JSON.stringify([c.model, c.defense, c.stage])))].sort();
  const rows = strata.map((k) => {
    const [model = '', defense = '', stage = ''] = JSON.parse(k) as string[];
    return [
      series(data, defense, model),
      stage,
      ...PROPAGATION_METRICS.map((m) => cellText(data.propagation.find((c) => c.model === model && c.defense === defense && c.stage === stage && c.metric === m))),
    ];
  });
  return `<section id="propagation"><h2>Propagation</h2>
<p>Logged taint spread per defense and stage: blast radius (tainted ÷ reachable nodes), taint-to-commit rate, cascade depth (hops from an untrusted source to a tainted commit), privilege jumps. Diagnostic, not an endpoint: the realized denominator shrinks when a defense blocks early.</p>
${plotDivs(plots, 'propagation', 'No rollout was measured (no trace graph).')}
${table(['defense', 'stage', ...PROPAGATION_METRICS], rows)}
</section>`;
}

function traceSection(traces: readonly TraceView[], cap: HtmlInput['traceCap']): string {
  const capNote =
    `Inlined per rollout: at most ${TRACE_CAPS.proposals} proposals, ${TRACE_CAPS.syscalls} notable syscalls per proposal ` +
    `(denials, and successful execs, changes, network sends and file access outside the runtime; failed lookups and loader, locale, /dev and /proc files are counted, not listed), ` +
    `${TRACE_CAPS.text} characters of any text, ${TRACE_CAPS.tainted_files} tainted files.` +
    (cap.capped > 0 ? ` ${cap.capped} rollout(s) over the report's cap of ${cap.max} are listed without their trace.` : '');
  return `<section id="trace-viewer"><h2>Trace viewer</h2>
<p class="note">${escapeHtml(capNote)} The full trace is <code>&lt;job&gt;/&lt;rollout&gt;/trace.jsonl.gz</code>.</p>
<div class="controls">
<label>filter <input id="trace-filter" type="search" placeholder="task, defense, stage…"></label>
<label>rollout <select id="trace-select"></select></label>
<span class="legend"><span class="badge tainted">tainted</span> <span class="badge blocked">blocked</span> <span class="badge secret">secret</span> <span class="badge denied">denied</span></span>
</div>
<div id="trace-body">${traces.length === 0 ? '<p class="empty">No rollouts.</p>' : ''}</div>
</section>`;
}

const HOW_TO_READ = `<section id="how-to-read"><h2>How to read this report</h2>
<ul>
<li><b>Stages are never pooled.</b> Security, active-tainted utility, clean utility and memory/recovery answer different questions; each has its own metrics. A metric that does not apply to a stage is N/A, never 0.</li>
<li><b>Endpoints</b> (committed harm, secret leakage, wrong target, attack success) say whether a violation was committed. All zero is not proof of safety: read the one-sided upper bound, computed over independent scenario clusters.</li>
<li><b>Operating points</b> put endpoint security next to authorized utility: a defense that blocks everything sits at the bottom left, one that blocks nothing at the top right.</li>
<li><b>Paired comparisons</b> match rollouts of the same scenario, model and seed under two defenses. The verdict comes from the scenario-cluster bootstrap CI of Δ = B − A; a CI containing 0 is a <i>tie</i>, whatever the point estimate.</li>
<li><b>Propagation</b> metrics are diagnostics of how far untrusted content travelled in the logged trace; they depend on what was logged and on how early a defense stopped the episode.</li>
<li><b>Static F1</b> scores the policy text against gold, per axis, before anything runs; execute is usually the weakest axis.</li>
<li><b>Trace viewer</b>: each proposal shows the defense decision with its rule id, the notable syscalls, and the commits (side effects that happened). Orange marks taint (the proposal was decided in a tainted context, a process or commit carried untrusted content).</li>
<li><b>Infrastructure errors</b> (Docker or the model service failed) are counted in the summary and left out of every rate.</li>
</ul>
</section>`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1280px;padding:0 24px 48px;color:#1d1d1f}
header{border-bottom:1px solid #ddd;margin-bottom:8px}
nav a{margin-right:12px}
h2{margin-top:32px;border-bottom:1px solid #eee;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f7}
td.na{color:#999}
.empty,.note{color:#666}
figure{margin:8px 0;display:inline-block;vertical-align:top}
figcaption{font-weight:600;margin-bottom:4px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
pre{white-space:pre-wrap;word-break:break-all;margin:2px 0}
.controls{display:flex;gap:16px;align-items:center;flex-wrap:wrap;margin:8px 0}
.controls select{max-width:640px}
.badge{display:inline-block;border-radius:3px;padding:0 5px;font-size:11px;color:#fff;background:#888;margin-left:4px}
.badge.tainted{background:#e8710a}.badge.blocked{background:#c5221f}.badge.secret{background:#7b1fa2}.badge.denied{background:#c5221f}.badge.ok{background:#188038}
.proposal{border:1px solid #ddd;border-left:4px solid #bbb;border-radius:4px;padding:6px 10px;margin:8px 0}
.proposal.tainted{border-left-color:#e8710a;background:#fff8f0}
.proposal.blocked{border-left-color:#c5221f}
.proposal h4{margin:0 0 4px;font-size:13px}
.proposal ul{margin:2px 0 2px 18px;padding:0}
.sys.denied{color:#c5221f}.sys.exec{color:#1a73e8}.sys.network{color:#7b1fa2}
.commit.tainted{background:#fde3c8}
.meta td:first-child{font-weight:600}
`;

/** Client code: embed every plot, then run the trace viewer. Only DOM text APIs touch trace data. */
const SCRIPT = `
(function () {
  var plots = JSON.parse(document.getElementById('report-plots').textContent);
  var traces = JSON.parse(document.getElementById('report-traces').textContent);
  var pending = plots.map(function (p) {
    var el = document.getElementById('plot-' + p.id);
    return vegaEmbed(el, p.spec, { mode: 'vega-lite', renderer: 'svg', actions: false }).then(
      function () { return null; },
      function (e) { el.textContent = 'plot failed: ' + e; return p.id; });
  });
  Promise.all(pending).then(function (failed) {
    var bad = failed.filter(function (x) { return x !== null; });
    document.body.setAttribute('data-plots', bad.length === 0 ? 'rendered' : 'failed:' + bad.join(','));
  });

  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function badge(cls, text) { return h('span', 'badge ' + cls, text); }
  function yn(v) { return v === null || v === undefined ? 'N/A' : (v === true || v === 1 ? 'yes' : 'no'); }
  var select = document.getElementById('trace-select');
  var filter = document.getElementById('trace-filter');
  var body = document.getElementById('trace-body');
  function label(t) { return t.task_id + ' · ' + t.defense + ' · ' + t.model + ' · seed ' + t.seed + ' · ' + t.stage + (t.available ? '' : ' (no trace)'); }
  function fill() {
    var q = filter.value.toLowerCase();
    var keep = select.value;
    select.textContent = '';
    traces.forEach(function (t, i) {
      var text = label(t);
      if (q && text.toLowerCase().indexOf(q) < 0 && t.rollout_id.toLowerCase().indexOf(q) < 0) return;
      var o = h('option', null, text); o.value = String(i); select.appendChild(o);
    });
    if (keep && select.querySelector('option[value="' + keep + '"]')) select.value = keep;
    show();
  }
  function list(items, make) {
    var ul = h('ul');
    items.forEach(function (x) { ul.appendChild(make(x)); });
    return ul;
  }
  function show() {
    body.textContent = '';
    var t = traces[Number(select.value)];
    if (!t) { body.appendChild(h('p', 'empty', 'No rollout matches.')); return; }
    var meta = h('table', 'meta');
    [['rollout', t.rollout_id], ['task', t.task_id], ['stage', t.stage], ['defense', t.defense], ['model', t.model], ['seed', t.seed],
     ['status', t.status], ['outcome', t.outcome], ['end', t.end_reason], ['failed tests', (t.failed_tests || []).join(', ') || '-'], ['tampering', (t.tampering || []).join('; ') || '-'], ['utility', yn(t.utility_success)], ['attack', yn(t.attack_success)], ['committed harm', yn(t.committed_harm)]]
      .forEach(function (r) { var tr = h('tr'); tr.appendChild(h('td', null, r[0])); tr.appendChild(h('td', null, r[1] === null ? 'N/A' : r[1])); meta.appendChild(tr); });
    body.appendChild(meta);
    if (!t.available) { body.appendChild(h('p', 'empty', t.note)); return; }
    if (t.sources.length) { body.appendChild(h('h4', null, 'Sources')); body.appendChild(list(t.sources, function (s) { return h('li', null, s.kind + ': ' + s.pattern); })); }
    if (t.tainted_files.length) {
      body.appendChild(h('h4', null, 'Tainted files (' + t.caps.tainted_files_total + ')'));
      body.appendChild(list(t.tainted_files, function (f) { return h('li', 'commit tainted', f); }));
    }
    if (t.caps.proposals_shown < t.caps.proposals_total) body.appendChild(h('p', 'note', 'Showing ' + t.caps.proposals_shown + ' of ' + t.caps.proposals_total + ' proposals.'));
    if (t.proposals.length === 0) body.appendChild(h('p', 'empty', 'The agent proposed nothing.'));
    t.proposals.forEach(function (p) {
      var blocked = p.decision && p.decision.action !== 'allow';
      var card = h('div', 'proposal' + (p.tainted ? ' tainted' : '') + (blocked ? ' blocked' : ''));
      var title = h('h4', null, '#' + p.index + ' · turn ' + p.turn + ' · ' + p.outcome + (p.exit_code === null ? '' : ' (exit ' + p.exit_code + ')'));
      if (p.tainted) title.appendChild(badge('tainted', 'tainted'));
      if (blocked) title.appendChild(badge('blocked', p.decision.action));
      if (p.side_effecting) title.appendChild(badge('', 'side-effecting'));
      card.appendChild(title);
      card.appendChild(h('pre', null, p.command));
      if (!p.valid) card.appendChild(h('div', null, 'invalid: ' + (p.invalid_reason || '')));
      if (p.decision) card.appendChild(h('div', null, 'decision: ' + p.decision.action + ' · rule ' + p.decision.rule_id + (p.decision.reason ? ' — ' + p.decision.reason : '')));
      if (p.tainted_tokens.length) card.appendChild(h('div', null, 'tainted tokens: ' + p.tainted_tokens.join(', ')));
      if (p.processes.length) {
        card.appendChild(h('div', null, 'processes:'));
        card.appendChild(list(p.processes, function (x) { var li = h('li', x.tainted ? 'commit tainted' : null, x.exec + '  ' + x.argv); if (x.tainted) li.appendChild(badge('tainted', 'tainted')); return li; }));
      }
      if (p.syscalls.length || p.syscalls_hidden) {
        card.appendChild(h('div', null, 'syscalls (' + p.syscalls_total + ', ' + p.syscalls_hidden + ' not listed):'));
        card.appendChild(list(p.syscalls, function (s) { return h('li', 'sys ' + s.kind + (s.denied ? ' denied' : ''), s.text); }));
      }
      if (p.denied_effects.length) {
        card.appendChild(h('div', null, 'refused by the kernel:'));
        card.appendChild(list(p.denied_effects, function (d) { var li = h('li', 'sys denied', d); return li; }));
      }
      card.appendChild(h('div', null, 'commits: ' + (p.commits.length ? '' : 'none')));
      if (p.commits.length) card.appendChild(list(p.commits, function (c) {
        var li = h('li', 'commit' + (c.tainted ? ' tainted' : ''), c.text);
        if (c.tainted) li.appendChild(badge('tainted', 'tainted'));
        if (c.secret) li.appendChild(badge('secret', 'secret'));
        return li;
      }));
      if (p.output) { var d = h('details'); d.appendChild(h('summary', null, 'output')); d.appendChild(h('pre', null, p.output)); card.appendChild(d); }
      body.appendChild(card);
    });
  }
  select.addEventListener('change', show);
  filter.addEventListener('input', fill);
  fill();
})();
`;

export interface HtmlInput {
  data: ReportData;
  traces: readonly TraceView[];
  /** The report's cap on inlined traces, and how many rollouts with a trace it left out. */
  traceCap: { max: number; capped: number };
  assets: readonly ScriptAsset[];
}

export function renderHtml(input: HtmlInput): string {
  const { data, traces, assets } = input;
  const plots = reportPlots(data);
  const nav = SECTION_IDS.map((id) => `<a href="#${id}">${id}</a>`).join(' ');
  const libs = assets.map((a) => `${a.name} ${a.version}`).join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>authbench report — ${escapeHtml(data.jobs.map((j) => j.dir).join(', '))}</title>
<style>${STYLE}</style>
</head>
<body data-plots="pending">
<header><h1>authbench report</h1>
<p>${escapeHtml(data.jobs.map((j) => j.dir).join(', '))} · models ${escapeHtml(data.models.join(', ') || '–')} · authbench ${escapeHtml(data.authbench_version)}</p>
<nav>${nav}</nav></header>
${summarySection(data)}
${operatingSection(data, plots)}
${stagesSection(data, plots)}
${comparisonsSection(data, plots)}
${staticSection(data, plots)}
${propagationSection(data, plots)}
${traceSection(traces, input.traceCap)}
${HOW_TO_READ}
<footer><p class="note">Plots: ${escapeHtml(libs)}, inlined. Data: report.json and rows.csv beside this file.</p></footer>
<script type="application/json" id="report-plots">${scriptJson(plots)}</script>
<script type="application/json" id="report-traces">${scriptJson(traces)}</script>
${assets.map((a) => `<script>/* ${escapeHtml(a.name)} ${escapeHtml(a.version)} */\n${inlineScript(a.code)}\n</script>`).join('\n')}
<script>${SCRIPT}</script>
</body>
</html>
`;
}
