/**
 * The benchmark's results (the `--json` format) and their text rendering.
 * Pure. Ratios are the numbers to read; absolute medians are context, because
 * the machine is shared and noisy. Targets are information, never a failure.
 */
import { z } from 'zod';
import { ratio, verdict, type Summary } from './stats.ts';

export const BENCH_REPORT_VERSION = 3;
/** Harness overhead per command beyond a bare exec should be well under one exec round trip (~60 ms)... */
export const HARNESS_OVERHEAD_TARGET_MS = 60;
/** ...which the verdict reads as at most half of it. */
export const HARNESS_OVERHEAD_OK_MS = HARNESS_OVERHEAD_TARGET_MS / 2;
/** A whole sandboxed command through the session — with strace, as rollouts run them — "well under" one bare exec reads as under half of one. */
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
      session_run: SummarySchema.describe("SandboxSession.run of `true` under the launcher, no strace: one request to the session's agent (snapshot current)"),
      session_run_traced: SummarySchema.describe("the same under the harness's strace"),
      session_compile: SummarySchema.describe('the policy compile on the host that each enforced SandboxSession.run includes (snapshot current)'),
      session_listing: SummarySchema.describe("the agent's filesystem listing for the compiler (fsSnapshot after invalidateSnapshot), parsed"),
      session_compile_after_listing: SummarySchema.describe('the first compile against a new listing, which also indexes it'),
      listing_entries: z.number().int().describe('entries in that listing'),
      docker_calls: z
        .object({
          session_run: z.number().int().describe('Docker API calls per untraced SandboxSession.run'),
          session_run_traced: z.number().int().describe('the same traced'),
        })
        .describe('Docker API calls per command'),
      session_first_ms: z.number().describe('first (traced) SandboxSession.run: starts the agent, probes the ABI, lists the filesystem'),
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
  const session = (label: string, x: Summary, calls: number): string[] => {
    const r = ratio(x, base);
    return [label, fmtMs(x.median), fmtRatio(r), String(calls), fmtDelta(x.median - base.median), `< ${SESSION_TARGET_RATIO}× bare exec`, sessionVerdict(r)];
  };
  const part = (label: string, x: Summary): string[] => [label, fmtMs(x.median), fmtRatio(ratio(x, base)), '0', '', '', ''];
  const rows: string[][] = [
    ['bare dockerode exec (create, start, wait, inspect)', fmtMs(base.median), fmtRatio(1), '1', '', '', ''],
    ['Container.exec (docker/)', fmtMs(rt.container_exec.median), fmtRatio(ratio(rt.container_exec, base)), '1', ...overhead(rt.container_exec)],
    session('SandboxSession.run, launcher, no strace', rt.session_run, rt.docker_calls.session_run),
    session('SandboxSession.run, launcher + strace', rt.session_run_traced, rt.docker_calls.session_run_traced),
    part('  of which: policy compile on the host', rt.session_compile),
    part(`agent's filesystem listing (${rt.listing_entries} entries), parsed`, rt.session_listing),
    part('  then the first compile against it (indexes it)', rt.session_compile_after_listing),
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

/** The acceptance line: a traced command through the session against one bare exec. */
export function sessionTargetLine(rt: BenchReport['round_trip']): string {
  const r = ratio(rt.session_run_traced, rt.raw_exec);
  return (
    '    target: a traced sandboxed command well under one exec — SandboxSession.run, launcher + strace ' +
    `${fmtMs(rt.session_run_traced.median)} vs bare exec ${fmtMs(rt.raw_exec.median)} = ${fmtRatio(r)} (< ${SESSION_TARGET_RATIO}×): ${sessionVerdict(r)}`
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
    `(a) launcher (Landlock + seccomp) and (b) the harness's strace --seccomp-bpf -f (its own loader and libraries) + launcher`,
    `    vs bare exec, timed inside one container (harness mounted read-only) pinned to CPU ${c.cpuset} (no Docker round trip in these numbers)`,
    pinnedTable(report.workloads),
    '    noise: half the widest interquartile range, relative to its median; ratios inside it are indistinguishable from 1',
    '',
    `the same strace + launcher in an unpinned container (same image, free to use every CPU; ${c.unpinned_reps} runs), against pinned`,
    unpinnedTable(report.workloads),
    '',
    `(c) per-command round trip from the host, ${c.round_trip_reps} runs each (pinned container; the agent pins each command to CPU ${c.cpuset})`,
    roundTripTable(rt),
    sessionTargetLine(rt),
    `    "added" is beyond the bare exec; ok means at most ${HARNESS_OVERHEAD_OK_MS} ms. A docker call is one Docker API round trip;`,
    "    a session command makes none: one request/response to the agent (ab-launch --serve) over the attached exec it started once.",
    '    Every command runs under the launcher (unenforced ones under the guard rules), so there is no launcher-free session path.',
    '    The listing is not in the session rows: an untraced command (or a truncated trace) invalidates the snapshot, and the',
    '    next enforced command pays the listing and the first compile after it; a traced command patches the snapshot instead.',
    `    first SandboxSession.run of a session (agent start, Landlock ABI probe, listing, compile, traced true): ${fmtMs(rt.session_first_ms)}`,
    '',
  ];
  return lines.join('\n');
}
