/**
 * Reports over eval jobs: rollout results → statistics rows → tables,
 * paired comparisons and a self-contained HTML page with plots and a trace
 * viewer (report.json, rows.csv, report.html).
 */
export { defenseLabel, labelRule, rolloutMetricValues, toRows, NO_POLICY, type LabelRule, type LoadedResult, type ReportRow, type RowSet } from './rows.ts';
export { JobConfigSchema, loadJob, loadJobs, type JobConfig, type JobInfo, type LoadedJobs } from './load.ts';
export {
  buildHeadlineData,
  buildReport,
  comparePair,
  REPORT_SCHEMA_VERSION,
  TRAJECTORY_PROJECTION,
  type Cell,
  type ComparisonRow,
  type EndpointEntry,
  type FunnelEntry,
  type GroupSummary,
  type HeadlineData,
  type InfraEntry,
  type Interval,
  type JobSummary,
  type OperatingPoint,
  type OperatingPoints,
  type PairReport,
  type ReportData,
  type ReportOptions,
  type StageTable,
  type StaticF1Entry,
} from './build.ts';
export { COMPLETION_AXES, ENDPOINT_METRICS, FUNNEL_COUNTS, FUNNEL_METRICS, HARM_AXIS, HEADLINE_COLUMNS, PROPAGATION_METRICS, orderMetrics, stageMetrics } from './metric-sets.ts';
export { csvField, rowsCsv, NA } from './csv.ts';
export { cellText, endpointText, interval, num, verdictLabel, NA_TEXT } from './format.ts';
export {
  comparisonTable,
  endpointsTable,
  flaggedTable,
  funnelTable,
  FUNNEL_HEADERS,
  groupsTable,
  headlineLegend,
  headlineTable,
  infraTable,
  jobsTable,
  operatingPointsTable,
  parserTable,
  propagationTable,
  stageTable,
  staticF1Table,
  NOT_RUN_TEXT,
  type Detail,
  type TextTable,
} from './tables.ts';
export { funnelSpec, reportPlots, seriesName, type PlotSpec, type Spec } from './plots.ts';
export { renderHtml, SECTION_IDS, type HtmlInput } from './html.ts';
export { loadPlotAssets, loadViewerScript, type ScriptAsset } from './assets.ts';
export { clip, traceView, unavailableTrace, TRACE_CAPS, type ProposalView, type TraceMeta, type TraceView } from './trace-view.ts';
export { jobHeadline } from './headline.ts';
export { defaultOutDir, generateReport, loadTraceViews, DEFAULT_MAX_TRACES, type GenerateOptions, type GeneratedReport } from './generate.ts';
