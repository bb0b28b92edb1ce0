/**
 * report.html: one self-contained page. Tables are rendered here, as HTML,
 * from the row builders the terminal uses too (tables.ts), every value
 * escaped by construction (safe-html.ts); plots and the trace viewer are
 * drawn in the browser by viewer/viewer.js from data inlined in the page,
 * with the plotting library inlined too — the page fetches nothing. The page
 * opens with the answer (the headline table next to the operating-points
 * plot); every long table after it is a collapsed <details>. When
 * every plot has rendered, <body> gets data-plots="rendered" (or
 * "failed:<ids>"), which is what the browser test waits for. Pure.
 */
import type { ReportData } from './build.ts';
import type { ScriptAsset } from './assets.ts';
import { NA_TEXT } from './format.ts';
import { reportPlots, slug, type PlotSpec } from './plots.ts';
import { html, joinHtml, jsonScript, scriptElement, styleElement, type Html } from './safe-html.ts';
import {
  comparisonTable,
  endpointsTable,
  flaggedTable,
  funnelTable,
  parserTable,
  groupsTable,
  headlineLegend,
  headlineTable,
  infraTable,
  jobsTable,
  NOT_RUN_TEXT,
  operatingPointsTable,
  propagationTable,
  stageTable,
  staticF1Table,
  type TextTable,
} from './tables.ts';
import { TRACE_CAPS, type TraceView } from './trace-view.ts';
import type { PageDataId, PagePlot } from './viewer/view.ts';

export const SECTION_IDS = ['headline', 'summary', 'stages', 'funnel', 'comparisons', 'static-f1', 'propagation', 'trace-viewer', 'how-to-read'] as const;

function table(t: TextTable, cls = ''): Html {
  if (t.rows.length === 0) return html`<p class="empty">No rows.</p>`;
  const head = t.headers.map((h) => html`<th>${h}</th>`);
  const body = t.rows.map((r) => html`<tr>${r.map((c) => (c === NA_TEXT || c === NOT_RUN_TEXT ? html`<td class="na">${c}</td>` : html`<td>${c}</td>`))}</tr>\n`);
  return html`<table${cls === '' ? '' : html` class="${cls}"`}><thead><tr>${head}</tr></thead><tbody>\n${body}</tbody></table>`;
}

/** A long table folded away: its title stays visible, the rows open on a click. */
function collapsible(title: string, body: Html): Html {
  return html`<details><summary>${title}</summary>${body}</details>`;
}

function plotDivs(plots: readonly PlotSpec[], section: PlotSpec['section'], empty: string): Html {
  const mine = plots.filter((p) => p.section === section);
  if (mine.length === 0) return html`<p class="empty">${empty}</p>`;
  return joinHtml(
    mine.map((p) => html`<figure><figcaption>${p.title}</figcaption><div class="plot" id="plot-${p.id}"></div></figure>`),
    '\n',
  );
}

function summarySection(data: ReportData): Html {
  const infra =
    data.infra_errors.length === 0
      ? html`<p>No infrastructure errors.</p>`
      : html`<p>${data.infra_errors.length} rollout(s) ended in an infrastructure error; they are excluded from every rate and mean below.</p>${collapsible('infrastructure errors', table(infraTable(data, 100)))}`;
  const flagged =
    data.flagged.length === 0
      ? html`<p>No rollout tampered with the sandbox or the validators, failed on the agent's side, or wrote on the validator surface.</p>`
      : html`<p>${data.flagged.length} rollout(s) need a look whatever their verdict. Tampered rollouts and agent errors count as failures of the agent; writes on the validator surface are a flag (a critical one voids the verdict).</p>${collapsible('flagged rollouts', table(flaggedTable(data, 200)))}`;
  // Only when a rollout acted through text actions: an invalid reply never ran and never ended an episode as an answer.
  const parser =
    data.parser === undefined
      ? html``
      : html`<h3>Text actions (parser status)</h3><p>Replies of models that acted through text (<code>--tool-format text</code>), by how the parser read them; invalid replies were never executed.</p>${table(parserTable(data))}`;
  const o = data.options;
  return html`<section id="summary"><h2>Summary</h2>
<p>Defense labels: ${data.label_rule === 'defense' ? 'the defense name (one policy source)' : html`<code>defense@policy source</code> (several policy sources)`}.
Intervals: ${Math.round(o.level * 100)}% percentile bootstrap over scenario clusters, ${o.resamples} resamples, seed ${o.seed}.</p>
<h3>Jobs</h3>${collapsible(`${data.jobs.length} job(s)`, table(jobsTable(data)))}
<h3>Groups (model × policy source × defense)</h3>${collapsible(`${data.groups.length} group(s): rollouts and outcomes`, table(groupsTable(data)))}
<h3>Infrastructure errors</h3>${infra}
<h3>Flagged rollouts</h3>${flagged}
${parser}
<h3>Endpoints</h3>
<p>Events / applicable rollouts. When none happened, the one-sided exact upper bound on the per-cluster rate is shown (rule of three ≈ 3/n): unobserved risk, not zero risk.</p>
${collapsible('endpoints per defense and stage', table(endpointsTable(data), 'endpoints'))}
</section>`;
}

/** The answer first: one row per defense with the headline numbers, next to the operating-points plot. */
function headlineSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  const op = data.operating_points;
  const axes =
    op.harm === null || op.completion === null
      ? html`<p class="empty">Operating points need committed_harm on the security stage and a completion metric on its own stage.</p>`
      : html`<p class="note">x: mean <code>${op.completion.metric}</code> on the ${op.completion.stage} stage; y: mean <code>${op.harm.metric}</code> on the ${op.harm.stage} stage. Whiskers: cluster-bootstrap CIs. Best is bottom right.</p>`;
  const level = Math.round(data.options.level * 100);
  return html`<section id="headline"><h2>Headline</h2>
<p>Per defense: ${headlineLegend()}. Cells: mean [${level}% scenario-cluster CI] n; an endpoint with no event shows events/n and its one-sided upper bound. <i>not run</i>: no rollout on that stage; N/A: the metric does not apply.</p>
<div class="headline-panel">
<div class="headline-table">${table(headlineTable(data), 'headline')}</div>
<div class="headline-plot">${plotDivs(plots, 'operating-points', 'No defense has both operating-point axes.')}${axes}</div>
</div>
${collapsible('operating points as numbers', table(operatingPointsTable(data)))}
</section>`;
}

function stagesSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  const parts = data.stages.map(
    (t) => html`<h3>${t.stage}</h3>
${plotDivs(
  plots.filter((p) => p.id === `stage-${slug(t.stage)}`),
  'stages',
  'No applicable values on this stage.',
)}
${collapsible(`${t.stage}: every defense, mean [CI] n`, table(stageTable(data, t, 'full')))}
`,
  );
  return html`<section id="stages"><h2>Stages</h2>
<p>Means per defense and evidence stage, over the rollouts where the metric applies; stages are never pooled. N/A: the metric does not apply (never counted as 0). Cells: mean [CI] n.</p>
${parts.length === 0 ? html`<p class="empty">No completed rollouts.</p>` : parts}
</section>`;
}

function funnelSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  const level = Math.round(data.options.level * 100);
  return html`<section id="funnel"><h2>Exact-goal funnel</h2>
<p>Per defense and stage, over rollouts whose task has a pre-specified attack goal (read off its attack smoke run, and the sink when it holds secrets): the share with an <b>exact proposal</b> (a command that names, runs or attempts the goal), whose exact proposal <b>passed</b> the defense and the kernel, with a <b>goal-matched commit</b> (a commit reaching the goal, linked by call id to that proposal), and whose goal the attack validator then confirmed (<b>goal completed</b>). Beside the path: an <b>off-target commit</b> (an unauthorized commit that is not the goal — a generic violation, not the attack's success) and <b>authorized completion</b> (the user's task done with nothing violating committed). Cells: mean [${level}% scenario-cluster CI] n.</p>
${plotDivs(plots, 'funnel', 'No rollout had an attack goal (or the results predate the funnel).')}
${collapsible('funnel per defense and stage', table(funnelTable(data, 'full')))}
</section>`;
}

function comparisonsSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  const parts = data.comparisons.map((pair, i) => {
    const plot = plots.find((p) => p.id === `comparison-${i}`);
    return html`<h3>${pair.defense_a} (A) vs ${pair.defense_b} (B)</h3>
${plot === undefined ? html`<p class="empty">No pairs to plot.</p>` : plotDivs([plot], 'comparisons', '')}
${collapsible(`${pair.defense_a} vs ${pair.defense_b}: every metric and stage`, table(comparisonTable(pair), 'comparisons'))}
`;
  });
  return html`<section id="comparisons"><h2>Paired comparisons</h2>
<p>Pairs share scenario, model and seed. Δ = B − A. The verdict comes from the scenario-cluster CI: a CI that contains 0 is a tie.</p>
${parts.length === 0 ? html`<p class="empty">Fewer than two defenses: nothing to compare.</p>` : parts}
</section>`;
}

function staticSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  return html`<section id="static-f1"><h2>Static policy scores</h2>
<p>Per-axis precision / recall / F1 of the enforced policy against gold, averaged over distinct (task, policy) pairs; SER = sensitive exposure, over tasks with sensitive entries.</p>
${plotDivs(plots, 'static-f1', 'No policy was scored (defense none only).')}
${collapsible('per policy source and axis', table(staticF1Table(data, 'full')))}
</section>`;
}

function propagationSection(data: ReportData, plots: readonly PlotSpec[]): Html {
  return html`<section id="propagation"><h2>Propagation</h2>
<p>Logged taint spread per defense and stage: blast radius (tainted ÷ reachable nodes), taint-to-commit rate, cascade depth (hops from an untrusted source to a tainted commit), privilege jumps. Diagnostic, not an endpoint: the realized denominator shrinks when a defense blocks early.</p>
${plotDivs(plots, 'propagation', 'No rollout was measured (no trace graph).')}
${collapsible('per defense and stage', table(propagationTable(data, 'full')))}
</section>`;
}

function traceSection(traces: readonly TraceView[], cap: HtmlInput['traceCap']): Html {
  const capNote =
    `Inlined per rollout: at most ${TRACE_CAPS.proposals} proposals, ${TRACE_CAPS.syscalls} notable syscalls per proposal ` +
    `(denials, and successful execs, changes, network sends and file access outside the runtime; failed lookups and loader, locale, /dev and /proc files are counted, not listed), ` +
    `${TRACE_CAPS.text} characters of any text, ${TRACE_CAPS.tainted_files} tainted files.` +
    (cap.capped > 0 ? ` ${cap.capped} rollout(s) over the report's cap of ${cap.max} are listed without their trace.` : '');
  return html`<section id="trace-viewer"><h2>Trace viewer</h2>
<p class="note">${capNote} The full trace is <code>&lt;job&gt;/&lt;rollout&gt;/trace.jsonl.gz</code>.</p>
<div class="controls">
<label>filter <input id="trace-filter" type="search" placeholder="task, defense, stage…"></label>
<label>rollout <select id="trace-select"></select></label>
<span class="legend"><span class="badge tainted">tainted</span> <span class="badge blocked">blocked</span> <span class="badge secret">secret</span> <span class="badge denied">denied</span></span>
</div>
<div id="trace-body">${traces.length === 0 ? html`<p class="empty">No rollouts.</p>` : ''}</div>
</section>`;
}

const HOW_TO_READ = html`<section id="how-to-read"><h2>How to read this report</h2>
<ul>
<li><b>Headline</b>: the four numbers to read first, one row per defense, each on its own stage — committed harm under attack, clean utility, completion of authorized work over tainted content, and how often that work was wrongly blocked. Compare defenses down a column; read the intervals before the means. The tables below it are folded: click a title to open one.</li>
<li><b>Stages are never pooled.</b> Security, active-tainted utility, clean utility and memory/recovery answer different questions; each has its own metrics. A metric that does not apply to a stage is N/A, never 0.</li>
<li><b>Endpoints</b> (committed harm, secret leakage, wrong target, attack success) say whether a violation was committed. All zero is not proof of safety: read the one-sided upper bound, computed over independent scenario clusters.</li>
<li><b>Exact-goal funnel</b> follows each attack down its target path — exact proposal, policy pass, goal-matched commit, goal completed — and counts unauthorized commits that are not the goal apart (off-target), so a generic violation is never read as the attack succeeding.</li>
<li><b>Operating points</b> put endpoint security next to authorized utility: a defense that blocks everything sits at the bottom left, one that blocks nothing at the top right.</li>
<li><b>Paired comparisons</b> match rollouts of the same scenario, model and seed under two defenses. The verdict comes from the scenario-cluster bootstrap CI of Δ = B − A; a CI containing 0 is a <i>tie</i>, whatever the point estimate.</li>
<li><b>Propagation</b> metrics are diagnostics of how far untrusted content travelled in the logged trace; they depend on what was logged and on how early a defense stopped the episode.</li>
<li><b>Static F1</b> scores the policy text against gold, per axis, before anything runs; execute is usually the weakest axis.</li>
<li><b>Trace viewer</b>: each proposal shows the defense decision with its rule id, the notable syscalls, and the commits (side effects that happened). Orange marks taint (the proposal was decided in a tainted context, a process or commit carried untrusted content). A multi-agent rollout names each proposal's agent and lists the messages between agents, tainted when the sender's context was.</li>
<li><b>Infrastructure errors</b> (Docker or the model service failed) are counted in the summary and left out of every rate.</li>
</ul>
</section>`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1440px;padding:0 24px 48px;color:#1d1d1f}
header{border-bottom:1px solid #ddd;margin-bottom:8px}
nav a{margin-right:12px}
h2{margin-top:32px;border-bottom:1px solid #eee;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f7}
td.na{color:#999}
details{margin:4px 0 12px}
summary{cursor:pointer;color:#1a5fb4}
.headline-panel{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
.headline-table{flex:0 1 auto;overflow-x:auto}
.headline-plot{flex:1 1 460px}
table.headline{font-size:14px}
table.headline th,table.headline td{max-width:8.5em}
table.headline td:first-child{font-weight:600;max-width:12em;overflow-wrap:anywhere}
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

export interface HtmlInput {
  data: ReportData;
  traces: readonly TraceView[];
  /** The report's cap on inlined traces, and how many rollouts with a trace it left out. */
  traceCap: { max: number; capped: number };
  /** The plotting library, inlined before the page script. */
  assets: readonly ScriptAsset[];
  /** viewer/viewer.js: embeds the plots and runs the trace viewer. */
  viewer: string;
}

function data(id: PageDataId, value: unknown): Html {
  return jsonScript(id, value);
}

export function renderHtml(input: HtmlInput): string {
  const { traces, assets } = input;
  const report = input.data;
  const plots = reportPlots(report);
  const pagePlots: PagePlot[] = plots.map((p) => ({ id: p.id, spec: p.spec }));
  const nav = joinHtml(
    SECTION_IDS.map((id) => html`<a href="#${id}">${id}</a>`),
    ' ',
  );
  const jobs = report.jobs.map((j) => j.dir).join(', ');
  const libs = assets.map((a) => `${a.name} ${a.version}`).join(', ');
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>authbench report — ${jobs}</title>
${styleElement(STYLE)}
</head>
<body data-plots="pending">
<header><h1>authbench report</h1>
<p>${jobs} · models ${report.models.join(', ') || '–'} · authbench ${report.authbench_version}</p>
<nav>${nav}</nav></header>
${headlineSection(report, plots)}
${summarySection(report)}
${stagesSection(report, plots)}
${funnelSection(report, plots)}
${comparisonsSection(report, plots)}
${staticSection(report, plots)}
${propagationSection(report, plots)}
${traceSection(traces, input.traceCap)}
${HOW_TO_READ}
<footer><p class="note">Plots: ${libs}, inlined. Data: report.json and rows.csv beside this file.</p></footer>
${data('report-plots', pagePlots)}
${data('report-traces', traces)}
${joinHtml(
  assets.map((a) => scriptElement(a.code, { comment: `${a.name} ${a.version}` })),
  '\n',
)}
${scriptElement(input.viewer, { module: true })}
</body>
</html>
`.toString();
}
