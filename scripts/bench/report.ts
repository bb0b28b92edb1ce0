/**
 * The benchmark's results (the `--json` format) and their text rendering.
 * Pure. Ratios are the numbers to read; absolute medians are context, because
 * the machine is shared and noisy. Targets are information, never a failure.
 */
import { z } from 'zod';
import { ratio, verdict, type Summary } from './stats.ts';

export const BENCH_REPORT_VERSION = 4;
/** Harness overhead per command beyond a bare exec should be well under one exec round trip (~60 ms)... */
export const HARNESS_OVERHEAD_TARGET_MS = 60;
/** ...which the verdict reads as at most half of it. */
export const HARNESS_OVERHEAD_OK_MS = HARNESS_OVERHEAD_TARGET_MS / 2;
/** A whole sandboxed command through the session — with strace, as rollouts run them — "well under" one bare exec reads as under half of one. */
export const SESSION_TARGET_RATIO = 0.5;
/** Issue 21's targets for eval's traced ÷ untraced with strace, per workload id (information only). */
export const EVAL_TRACED_TARGETS: Readonly<Record<string, number>> = { 'python-imports': 1.35, gcc: 1.35, 'find-usr': 3 };

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

const EvalPathResultSchema = z.object({
  id: z.string().describe('workload id'),
  label: z.string().describe('what ran'),
  in_container: z
    .object({
      untraced: SummarySchema.describe('under the launcher, unpinned'),
      untraced_pinned: SummarySchema.describe('the same spawned with one CPU\'s affinity'),
      traced: SummarySchema.describe('strace + launcher, unpinned (eval --cpu-pinning off)'),
      traced_pinned: SummarySchema.describe('strace + launcher, tracer and tracee on one CPU (--cpu-pinning auto)'),
    })
    .describe('timed inside a task-like container (CPU quota, no cpuset): the tracing alone'),
  session: z
    .object({
      untraced: SummarySchema.describe('SandboxSession.run, untraced, unpinned'),
      traced: SummarySchema.describe('the same traced'),
      traced_pinned: SummarySchema.describe('traced, the session\'s agent pinning command and tracer to one CPU'),
    })
    .describe('end to end from the host, as a rollout runs commands (trace parsed on the host)'),
});

const RolloutRateSchema = z.object({
  concurrency: z.number().int().describe('rollouts in parallel (-n)'),
  mode: z.enum(['unpinned', 'pinned']).describe('slots pinned to CPUs as executeJob pins them, or not'),
  rollouts: z.number().int().describe('synthetic rollouts run'),
  elapsed_ms: z.number().describe('wall time they took'),
  per_minute: z.number().describe('rollouts per minute'),
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
      session_patch_compile: SummarySchema.describe('host CPU after a command that created a file: the snapshot patched from its trace, then the compile against it'),
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
  eval_path: z.array(EvalPathResultSchema).optional().describe("(d) traced ÷ untraced through eval's path, unpinned and pinned (absent with --skip-eval)"),
  rollout_rates: z.array(RolloutRateSchema).optional().describe('(e) synthetic rollouts per minute at each -n, pinned and unpinned (absent with --skip-eval)'),
  eval_pin_cpu: z.number().int().optional().describe('the CPU the pinned session of (d) pins to'),
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
export type EvalPathResult = z.infer<typeof EvalPathResultSchema>;
export type RolloutRate = z.infer<typeof RolloutRateSchema>;

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
    part('a command created a file: snapshot patch + compile', rt.session_patch_compile),
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

function evalTargetCells(id: string, r: number): [string, string] {
  const target = EVAL_TRACED_TARGETS[id];
  return target === undefined ? ['–', ''] : [`≤ ${target}×`, verdict(r, target)];
}

/** (d): per workload, traced ÷ untraced unpinned and pinned (inside the container), and end to end through the session. */
export function evalPathTable(rows: readonly EvalPathResult[]): string {
  return textTable(
    [
      { title: 'workload' },
      { title: 'untraced', right: true },
      { title: 'unpinned ×untr.', right: true },
      { title: 'pinned ×untr.', right: true },
      { title: 'pinned ×untr. pinned', right: true },
      { title: 'noise', right: true },
      { title: 'target (pinned)' },
      { title: '' },
      { title: 'session: untraced', right: true },
      { title: 'traced', right: true },
      { title: 'traced pinned', right: true },
      { title: 'pinned ÷ unpinned', right: true },
      { title: 'noise', right: true },
    ],
    rows.map((w) => {
      const c = w.in_container;
      const s = w.session;
      const pinnedRatio = ratio(c.traced_pinned, c.untraced);
      return [
        w.label,
        fmtMs(c.untraced.median),
        fmtRatio(ratio(c.traced, c.untraced)),
        fmtRatio(pinnedRatio),
        fmtRatio(ratio(c.traced_pinned, c.untraced_pinned)),
        spread([c.untraced, c.untraced_pinned, c.traced, c.traced_pinned]),
        ...evalTargetCells(w.id, pinnedRatio),
        fmtMs(s.untraced.median),
        fmtMs(s.traced.median),
        fmtMs(s.traced_pinned.median),
        fmtRatio(ratio(s.traced_pinned, s.traced)),
        spread([s.untraced, s.traced, s.traced_pinned]),
      ];
    }),
  );
}

/** (e): rollouts per minute per -n, unpinned beside pinned. */
export function rolloutRateTable(rates: readonly RolloutRate[]): string {
  const ns = [...new Set(rates.map((r) => r.concurrency))].sort((a, b) => a - b);
  const find = (n: number, mode: RolloutRate['mode']): RolloutRate | undefined => rates.find((r) => r.concurrency === n && r.mode === mode);
  const cell = (r: RolloutRate | undefined): string => (r === undefined ? '–' : `${r.per_minute.toFixed(1)} (${r.rollouts})`);
  return textTable(
    [{ title: '-n' }, { title: 'unpinned /min (runs)', right: true }, { title: 'pinned /min (runs)', right: true }, { title: 'pinned ÷ unpinned', right: true }],
    ns.map((n) => {
      const u = find(n, 'unpinned');
      const p = find(n, 'pinned');
      return [String(n), cell(u), cell(p), u === undefined || p === undefined || u.per_minute === 0 ? '–' : fmtRatio(p.per_minute / u.per_minute)];
    }),
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
    ...(report.eval_path === undefined
      ? []
      : [
          `(d) eval's tracing: a task-like container (CPU quota, no cpuset), timed inside it — unpinned (eval --cpu-pinning off) and`,
          `    pinned to CPU ${String(report.eval_pin_cpu ?? '?')} as a rollout slot pins (auto) — ×untr. is ÷ the untraced command (launcher, unpinned);`,
          '    then end to end through SandboxSession.run (agent request, launcher, strace, trace parsed on the host), unenforced',
          evalPathTable(report.eval_path),
          '',
        ]),
    ...(report.rollout_rates === undefined
      ? []
      : [
          '(e) synthetic rollouts per minute (fresh container, session, the workloads traced once each, teardown; no model, no validators),',
          '    slots pinned as executeJob pins them (slot k on CPU k mod CPUs) or not',
          rolloutRateTable(report.rollout_rates),
          '',
        ]),
  ];
  return lines.join('\n');
}
