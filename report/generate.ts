/**
 * `authbench report` as a library call: load the jobs, build the report,
 * render it, and write report.json, rows.csv and report.html into one folder.
 */
import { join } from 'node:path';
import { AuthbenchError, compareStrings, writeFileAtomic } from '../core/index.ts';
import { loadPlotAssets, loadViewerScript, type ScriptAsset } from './assets.ts';
import { buildReport, type ReportData, type ReportOptions } from './build.ts';
import { rowsCsv } from './csv.ts';
import { renderHtml } from './html.ts';
import { loadJobs, type LoadedJobs } from './load.ts';
import { outcomeOf, readTrace } from '../evaluation/index.ts';
import { defenseLabel, toRows, type LabelRule, type LoadedResult, type RowSet } from './rows.ts';
import { traceView, unavailableTrace, type TraceMeta, type TraceView } from './trace-view.ts';

/** Rollouts whose traces are inlined by default; past it the page would grow by megabytes per hundred rollouts. */
export const DEFAULT_MAX_TRACES = 400;

export interface GenerateOptions extends ReportOptions {
  /** Output folder; default `<first job>/report`. */
  out?: string;
  /** Rollouts whose trace is inlined into the HTML (the others are listed without it). */
  maxTraces?: number;
  /** Injected in tests; default: read from node_modules. */
  assets?: readonly ScriptAsset[];
  /** The page script; default: viewer/viewer.js. */
  viewer?: string;
}

export interface GeneratedReport {
  data: ReportData;
  csv: string;
  jobs: LoadedJobs;
  rows: RowSet;
  files: { html: string; json: string; csv: string };
  /** Rollouts whose trace could not be read: listed in the viewer as such, the rest of the report stands. */
  unreadableTraces: { dir: string; message: string }[];
}

export function defaultOutDir(jobDirs: readonly string[]): string {
  return join(jobDirs[0] ?? '.', 'report');
}

function traceMeta(item: LoadedResult, rule: LabelRule): TraceMeta {
  const r = item.result;
  return {
    rollout_id: r.rollout_id,
    job: item.job,
    task_id: r.task_id,
    stage: r.stage,
    model: r.model,
    defense: defenseLabel(r, rule),
    seed: r.seed,
    status: r.status,
    outcome: outcomeOf(r),
    utility_success: r.utility_success,
    attack_success: r.attack_success,
    committed_harm: r.metrics?.committed_harm ?? null,
    end_reason: r.end_reason,
    failed_tests: r.validation?.failed_tests ?? [],
    tampering: (r.tampering ?? []).map((t) => `${t.kind}${t.effective ? ' (the sandbox broke)' : ''}: ${t.detail}`),
    topology: r.topology?.kind ?? null,
  };
}

/**
 * Viewer data for every rollout, in (stage, task, defense, seed) order.
 * Past `max` inlined traces the rest are listed without their data.
 */
export async function loadTraceViews(
  loaded: readonly LoadedResult[],
  rule: LabelRule,
  max: number,
): Promise<{ views: TraceView[]; capped: number; unreadable: { dir: string; message: string }[] }> {
  const ordered = loaded
    .map((item) => ({ item, meta: traceMeta(item, rule) }))
    .sort(
      (x, y) =>
        compareStrings(x.meta.stage, y.meta.stage) ||
        compareStrings(x.meta.task_id, y.meta.task_id) ||
        compareStrings(x.meta.defense, y.meta.defense) ||
        compareStrings(x.meta.model, y.meta.model) ||
        x.meta.seed - y.meta.seed ||
        compareStrings(x.item.dir, y.item.dir),
    );
  const views: TraceView[] = [];
  let inlined = 0;
  let capped = 0;
  // One damaged trace (a truncated gzip, a line from another version) costs its own viewer entry,
  // never the report: the numbers come from result.json.
  const unreadable: { dir: string; message: string }[] = [];
  for (const { item, meta } of ordered) {
    let trace: Awaited<ReturnType<typeof readTrace>> | undefined;
    try {
      trace = inlined < max ? await readTrace(item.dir) : undefined;
    } catch (e) {
      if (!(e instanceof AuthbenchError) || e.code !== 'TRACE_UNREADABLE') throw e;
      unreadable.push({ dir: item.dir, message: e.message });
      views.push(unavailableTrace(meta, `This rollout's trace could not be read: ${e.message}`));
      continue;
    }
    if (trace === undefined) {
      capped++;
      views.push(unavailableTrace(meta, `Not inlined: the report inlines ${max} traces at most.`));
    } else if (trace === null) views.push(unavailableTrace(meta, 'This rollout wrote no trace (it ended before the episode ran).'));
    else {
      views.push(traceView(meta, trace));
      inlined++;
    }
  }
  return { views, capped, unreadable };
}

export async function generateReport(jobDirs: readonly string[], options: GenerateOptions = {}): Promise<GeneratedReport> {
  const jobs = await loadJobs(jobDirs);
  // Directory listing order is the filesystem's: sort so the output depends on the inputs only.
  const loaded = [...jobs.results].sort((a, b) => compareStrings(a.job, b.job) || compareStrings(a.result.rollout_id, b.result.rollout_id));
  const rows = toRows(loaded);
  const data = buildReport(jobs.jobs, loaded, rows, options);
  const csv = rowsCsv(loaded, rows.rule);
  const maxTraces = options.maxTraces ?? DEFAULT_MAX_TRACES;
  const { views, capped, unreadable } = await loadTraceViews(loaded, rows.rule, maxTraces);
  const html = renderHtml({
    data,
    traces: views,
    traceCap: { max: maxTraces, capped },
    assets: options.assets ?? (await loadPlotAssets()),
    viewer: options.viewer ?? (await loadViewerScript()),
  });
  const out = options.out ?? defaultOutDir(jobDirs);
  const files = { html: join(out, 'report.html'), json: join(out, 'report.json'), csv: join(out, 'rows.csv') };
  await writeFileAtomic(files.json, `${JSON.stringify(data, null, 2)}\n`);
  await writeFileAtomic(files.csv, csv);
  await writeFileAtomic(files.html, html);
  return { data, csv, jobs, rows, files, unreadableTraces: unreadable };
}
