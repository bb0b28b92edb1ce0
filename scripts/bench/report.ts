/**
 * The benchmark's results (the `--json` format) and their text rendering.
 * Pure. Ratios are the numbers to read; absolute medians are context, because
 * the machine is shared and noisy. Targets are information, never a failure.
 */
import { z } from 'zod';
import { ratio, verdict, type Summary } from './stats.ts';

export const BENCH_REPORT_VERSION = 2;
/** Harness overhead per command beyond a bare exec should be well under one exec round trip (~60 ms)... */
export const HARNESS_OVERHEAD_TARGET_MS = 60;
/** ...which the verdict reads as at most half of it. */
export const HARNESS_OVERHEAD_OK_MS = HARNESS_OVERHEAD_TARGET_MS / 2;
/** Issue #3: a whole sandboxed command (launcher, no strace) "well under" one bare exec reads as under half of one. */
export const SESSION_TARGET_RATIO = 0.5;

const SummarySchema = z.object({
  n: z.number().int().describe('recorded runs'),
  median: z.number().describe('median, ms'),
  p25: z.number().describe('25th percentile, ms'),
  p75: z.number().describe('75th percentile, ms'),
  min: z.number().describe('fastest run, ms'),
  max: z.number().describe('slowest run, ms'),
});

const WorkloadResultSchema = z.object({
  id: z.string().describe('workload id'),
  label: z.string().describe('what ran'),
  cmd: z.array(z.string()).describe('its argv'),
  pinned: z
    .object({ bare: SummarySchema, launcher: SummarySchema, 'launcher+strace': SummarySchema })
    .describe('container pinned to one CPU: the configuration authbench traces in'),
  unpinned: z
    .object({ bare: SummarySchema, 'launcher+strace': SummarySchema })
    .describe('container free to use every CPU: shows why tracing pins'),
  traced_target: z.number().optional().describe('informational ceiling for the pinned traced ratio'),
});

export const BenchReportSchema = z.object({
  version: z.literal(BENCH_REPORT_VERSION).describe('format version'),
  config: z
    .object({
      reps: z.number().int().describe('recorded rounds per in-container workload'),
      warmup: z.number().int().describe('discarded rounds before them'),
      unpinned_reps: z.number().int().describe('recorded rounds in the unpinned container (traced runs there are slow)'),
      round_trip_reps: z.number().int().describe('recorded rounds of the host round-trip paths'),
      cpuset: z.string().describe('CPU the pinned container runs on'),
    })
    .describe('how the run was configured'),
  host: z
    .object({ cpus: z.number().int().describe('CPUs the host has'), loadavg: z.array(z.number()).describe('1/5/15-minute load at the start') })
    .describe('the machine, for context'),
  workloads: z.array(WorkloadResultSchema).describe('(a) launcher and (b) launcher+strace against bare, per workload'),
  round_trip: z
    .object({
      raw_exec: SummarySchema.describe('bare dockerode exec of `true` (create, start, wait, inspect)'),
      container_exec: SummarySchema.describe('authbench Container.exec of `true`'),
      session_run: SummarySchema.describe('SandboxSession.run of `true` under the launcher, no strace, over the chosen transport'),
      session_run_traced: SummarySchema.describe('the same with strace'),
      session_run_exec_path: SummarySchema.describe('the same as session_run over the exec path (one Docker call per step)'),
      session_compile: SummarySchema.describe('the policy compile on the host that each SandboxSession.run includes'),
      transport: z.enum(['agent', 'exec']).describe('the transport the session chose'),
      transport_fallback: z.string().optional().describe('why the session is not on the agent, when it is not'),
      docker_calls: z
        .object({
          chosen: z.number().int().describe('Docker API calls per SandboxSession.run over the chosen transport'),
          exec_path: z.number().int().describe('the same over the exec path'),
        })
        .describe('Docker API calls per command'),
      session_first_ms: z.number().describe('first SandboxSession.run: starts the agent, probes the ABI, lists the filesystem'),
    })
    .describe('(c) per-command round trip from the host'),
  score: z
    .object({
      exit_code: z.number().int().nullable().describe("scripts/bench-score.ts's exit code"),
      output: z.array(z.string()).describe('its output lines'),
    })
    .optional()
    .describe('static-scoring throughput (absent with --skip-score)'),
});
export type BenchReport = z.infer<typeof BenchReportSchema>;
export type WorkloadResult = z.infer<typeof WorkloadResultSchema>;

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms)} ms`;
}

export function fmtDelta(ms: number): string {
  const sign = ms < 0 ? '−' : '+';
  const a = Math.abs(ms);
  return `${sign}${a < 10 ? a.toFixed(2) : a < 100 ? a.toFixed(1) : Math.round(a)} ms`;
}

export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return '–';
  if (r < 0.1) return `${r.toFixed(4)}×`;
  return `${r < 10 ? r.toFixed(2) : r.toFixed(1)}×`;
}

/** Columns padded to the widest cell; numbers (right: true) right-aligned. */
export function textTable(headers: readonly { title: string; right?: boolean }[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.title.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (headers[i]?.right === true ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.title)), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function tracedTargetCells(w: WorkloadResult, tracedRatio: number): [string, string] {
  if (w.traced_target === undefined) return ['–', ''];
  return [`≤ ${w.traced_target}×`, verdict(tracedRatio, w.traced_target)];
}

/** The widest interquartile range relative to its median among the row's samples: how far to trust the row. */
export function spread(summaries: readonly Summary[]): string {
  const widest = Math.max(...summaries.map((x) => (x.median === 0 ? 0 : (x.p75 - x.p25) / x.median)));
  return `±${Math.round((widest * 100) / 2)}%`;
}

function pinnedTable(workloads: readonly WorkloadResult[]): string {
  const rows = workloads.map((w) => {
    const { bare, launcher } = w.pinned;
    const traced = w.pinned['launcher+strace'];
    const tracedRatio = ratio(traced, bare);
    return [
      w.label,
      fmtMs(bare.median),
      fmtMs(launcher.median),
      fmtRatio(ratio(launcher, bare)),
      fmtDelta(launcher.median - bare.median),
      fmtMs(traced.median),
      fmtRatio(tracedRatio),
      spread([bare, launcher, traced]),
      ...tracedTargetCells(w, tracedRatio),
    ];
  });
  return textTable(
    [
      { title: 'workload' },
      { title: 'bare', right: true },
      { title: 'launcher', right: true },
      { title: '(a) ×bare', right: true },
      { title: 'added', right: true },
      { title: 'launcher+strace', right: true },
      { title: '(b) ×bare', right: true },
      { title: 'noise', right: true },
      { title: 'target (b)' },
      { title: '' },
    ],
    rows,
  );
}

function unpinnedTable(workloads: readonly WorkloadResult[]): string {
  const rows = workloads.map((w) => [
    w.label,
    fmtMs(w.unpinned.bare.median),
    fmtMs(w.unpinned['launcher+strace'].median),
    fmtRatio(ratio(w.unpinned['launcher+strace'], w.unpinned.bare)),
    fmtRatio(ratio(w.pinned['launcher+strace'], w.pinned.bare)),
  ]);
  return textTable(
    [
      { title: 'workload' },
      { title: 'bare', right: true },
      { title: 'launcher+strace', right: true },
      { title: 'unpinned ×bare', right: true },
      { title: 'pinned ×bare', right: true },
    ],
    rows,
  );
}

function roundTripTable(rt: BenchReport['round_trip']): string {
  const base = rt.raw_exec;
  const overhead = (x: Summary): [string, string, string] => {
    const added = x.median - base.median;
    return [fmtDelta(added), `well under ${HARNESS_OVERHEAD_TARGET_MS} ms`, verdict(added, HARNESS_OVERHEAD_OK_MS)];
  };
  const sessionRatio = ratio(rt.session_run, base);
  const rows: string[][] = [
    ['bare dockerode exec (create, start, wait, inspect)', fmtMs(base.median), fmtRatio(1), '1', '', '', ''],
    ['Container.exec (docker/)', fmtMs(rt.container_exec.median), fmtRatio(ratio(rt.container_exec, base)), '1', ...overhead(rt.container_exec)],
    [
      `SandboxSession.run, launcher, no strace [${rt.transport}]`,
      fmtMs(rt.session_run.median),
      fmtRatio(sessionRatio),
      String(rt.docker_calls.chosen),
      fmtDelta(rt.session_run.median - base.median),
      `< ${SESSION_TARGET_RATIO}× bare exec`,
      sessionVerdict(sessionRatio),
    ],
    [
      `SandboxSession.run, launcher + strace [${rt.transport}]`,
      fmtMs(rt.session_run_traced.median),
      fmtRatio(ratio(rt.session_run_traced, base)),
      String(rt.docker_calls.chosen),
      fmtDelta(rt.session_run_traced.median - base.median),
      '',
      '',
    ],
    [
      'SandboxSession.run, launcher, no strace [exec]',
      fmtMs(rt.session_run_exec_path.median),
      fmtRatio(ratio(rt.session_run_exec_path, base)),
      String(rt.docker_calls.exec_path),
      ...overhead(rt.session_run_exec_path),
    ],
    ['  of which: policy compile on the host', fmtMs(rt.session_compile.median), fmtRatio(ratio(rt.session_compile, base)), '0', '', '', ''],
  ];
  return textTable(
    [
      { title: 'path (command: true)' },
      { title: 'median', right: true },
      { title: '×bare exec', right: true },
      { title: 'docker calls', right: true },
      { title: 'added', right: true },
      { title: 'target' },
      { title: '' },
    ],
    rows,
  );
}

export function sessionVerdict(ratioToBareExec: number): 'well under' | 'over' {
  return ratioToBareExec < SESSION_TARGET_RATIO ? 'well under' : 'over';
}

/** The one line issue #3 asks about. */
export function sessionTargetLine(rt: BenchReport['round_trip']): string {
  const r = ratio(rt.session_run, rt.raw_exec);
  return (
    `    target (issue #3): a sandboxed command well under one exec — SandboxSession.run [${rt.transport}] ` +
    `${fmtMs(rt.session_run.median)} vs bare exec ${fmtMs(rt.raw_exec.median)} = ${fmtRatio(r)} (< ${SESSION_TARGET_RATIO}×): ${sessionVerdict(r)}`
  );
}

/** The whole text report (without the static-scoring section, which bench-score prints itself). */
export function renderReport(report: BenchReport): string {
  const c = report.config;
  const rt = report.round_trip;
  const lines = [
    `authbench overhead benchmark — medians of ${c.reps} runs after ${c.warmup} warm-up round(s); ` +
      `host: ${report.host.cpus} CPUs, load ${report.host.loadavg.map((l) => l.toFixed(2)).join(' ')}`,
    'Read the ratios; absolute times are context (shared, noisy machine). Targets are information: the run never fails on them.',
    '',
    `(a) launcher (Landlock + seccomp) and (b) strace --seccomp-bpf -f + launcher vs bare exec,`,
    `    timed inside one container pinned to CPU ${c.cpuset} (no Docker round trip in these numbers)`,
    pinnedTable(report.workloads),
    '    noise: half the widest interquartile range, relative to its median; ratios inside it are indistinguishable from 1',
    '',
    `the same strace + launcher in an unpinned container (same image, free to use every CPU; ${c.unpinned_reps} runs), against pinned`,
    unpinnedTable(report.workloads),
    '',
    `(c) per-command round trip from the host, ${c.round_trip_reps} runs each`,
    roundTripTable(rt),
    sessionTargetLine(rt),
    `    "added" is beyond the bare exec; ok means at most ${HARNESS_OVERHEAD_OK_MS} ms. A docker call is one Docker API round trip;`,
    '    the agent transport makes none per command (one request/response over the attached exec it started once).',
    `    first SandboxSession.run of a session (agent start, Landlock ABI probe, filesystem listing for the compiler): ${fmtMs(rt.session_first_ms)}`,
    ...(rt.transport_fallback === undefined ? [] : [`    the session fell back to the exec path: ${rt.transport_fallback}`]),
    '',
  ];
  return lines.join('\n');
}
