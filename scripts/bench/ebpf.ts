/**
 * The eBPF tracer beside strace (issue 21 item 2): traced ÷ untraced per
 * workload, inside one unpinned bench container (the harness mounted, the
 * launcher on in every variant), for BOTH eBPF backends in the same run.
 * strace is the harness's own, in the container, as SandboxSession runs it;
 * eBPF runs on the host filtered on the container's cgroup (sandbox/ebpf) —
 * native ab-ebpf (a ring buffer drained on a timer) through a hub, as
 * `eval --tracer ebpf` runs it (the container's share taken when the
 * measurement ends), and bpftrace (perf-buffer printfs) — attached for the
 * whole of its measurement and never stopping the tracee. Its cost is the BPF programs in the syscall path plus the reader's
 * formatting on the host's CPUs (the container is unpinned, so both tracers
 * may use the other core). Untraced is measured before and after the eBPF
 * block and the median of both is the baseline, so a drift in machine load
 * over the block shows. A backend the host cannot run is skipped with its
 * reason; the other is still measured.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { AuthbenchError } from '../../core/index.ts';
import { connectDocker, type Container } from '../../docker/index.ts';
import { EBPF_BACKENDS, EbpfHub, ensureEbpfTracer, gatherEbpfFacts, judgeEbpf, raiseTracerPriority, startEbpfTrace, TRACER_NICE, type EbpfBackend } from '../../sandbox/ebpf/index.ts';
import { SandboxSession } from '../../sandbox/run/index.ts';
import { measureWorkload, WORKLOAD_TIMEOUT_MS } from './in-container.ts';
import type { Rounds } from './plan.ts';
import { ratio, summarize, type Summary } from './stats.ts';
import { SCRATCH_DIR, type Workload } from './workloads.ts';

/** One backend's traced run of a workload. */
export interface EbpfTraced {
  summary: Summary;
  /** Records the tracer reported lost while the workload ran (the trace was incomplete when > 0). */
  lost: number;
  /** Events it parsed in that time: the tracer did see the workload. */
  events: number;
}

export interface EbpfBenchRow {
  id: string;
  label: string;
  untracedBefore: Summary;
  untracedAfter: Summary;
  strace: Summary;
  /** Per backend that could run on this host. */
  traced: Partial<Record<EbpfBackend, EbpfTraced>>;
}

/** One command (`true`) end to end through SandboxSession.run: what each tracer adds per command in eval. */
export interface EbpfPerCommand {
  untraced: Summary;
  strace: Summary;
  /** Through the hub: resume, the keeper, the take (a readiness marker) that also pauses. */
  ebpf: Summary;
}

/** One traced stretch of syscall-heavy work beside CPU-bound loops on the host, the hub's reader at one nice. */
export interface EbpfLoadRun {
  nice: number;
  events: number;
  lost: number;
}

/** The hub under CPU load: the reader at nice 0 and at TRACER_NICE, alternated. */
export interface EbpfUnderLoad {
  /** CPU-bound loops on the host beside the traced work. */
  loops: number;
  /** `find /usr` runs in the one traced command. */
  finds: number;
  runs: EbpfLoadRun[];
}

export type EbpfBench =
  | {
      rows: EbpfBenchRow[];
      /** Absent when the native backend could not run. */
      perCommand?: EbpfPerCommand;
      /** Absent when the native backend could not run. */
      underLoad?: EbpfUnderLoad;
      /** Backends the host could not run, and why. */
      skippedBackends: Partial<Record<EbpfBackend, string>>;
    }
  | { skipped: string };

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new AuthbenchError('INTERNAL', `bench (ebpf): no ${what}`);
  return value;
}

export async function measureEbpfOverhead(container: Container, workloads: readonly Workload[], rounds: Rounds, onProgress: (line: string) => void): Promise<EbpfBench> {
  const facts = await gatherEbpfFacts();
  const skippedBackends: Partial<Record<EbpfBackend, string>> = {};
  const runnable: { backend: EbpfBackend; cgroup2Mount: string; abEbpf?: string }[] = [];
  for (const backend of EBPF_BACKENDS) {
    const verdict = judgeEbpf(facts, backend);
    if (!verdict.available) {
      skippedBackends[backend] = verdict.reason;
      continue;
    }
    if (backend === 'native') {
      onProgress('building ab-ebpf (the native eBPF tracer)');
      runnable.push({ backend, cgroup2Mount: verdict.cgroup2Mount, abEbpf: (await ensureEbpfTracer(await connectDocker())).path });
    } else {
      runnable.push({ backend, cgroup2Mount: verdict.cgroup2Mount });
    }
  }
  if (runnable.length === 0) return { skipped: Object.entries(skippedBackends).map(([b, r]) => `${b}: ${r}`).join('; ') };
  const native = runnable.find((r) => r.backend === 'native');
  // A bench share spans a whole measurement (every run of a workload), not one command as in eval:
  // the per-take cap is raised so that what the rows count as lost is the kernel's loss alone.
  const hub = native?.abEbpf === undefined ? undefined : await EbpfHub.start({ abEbpf: native.abEbpf, cgroup2Mount: native.cgroup2Mount, shareCapBytes: BENCH_SHARE_CAP_BYTES });
  try {
    const rows = await measureRows(container, workloads, rounds, runnable, hub, onProgress);
    if (hub === undefined) return { rows, skippedBackends };
    onProgress('one command through SandboxSession.run: untraced, strace, the eBPF hub');
    const perCommand = await measurePerCommand(container, hub, rounds);
    onProgress('the eBPF hub under CPU load: its reader at nice 0 and raised');
    return { rows, perCommand, underLoad: await measureUnderLoad(container, hub, rounds.reps >= 10 ? 30 : 10), skippedBackends };
  } finally {
    await hub?.stop();
  }
}

async function measureRows(
  container: Container,
  workloads: readonly Workload[],
  rounds: Rounds,
  runnable: readonly { backend: EbpfBackend; cgroup2Mount: string; abEbpf?: string }[],
  hub: EbpfHub | undefined,
  onProgress: (line: string) => void,
): Promise<EbpfBenchRow[]> {
  const rows: EbpfBenchRow[] = [];
  for (const w of workloads) {
    onProgress(`${w.label}: untraced and strace (ebpf comparison)`);
    const before = await measureWorkload(container, w, ['launcher', 'launcher+strace'], rounds);
    const traced: Partial<Record<EbpfBackend, EbpfTraced>> = {};
    for (const r of runnable) {
      onProgress(`${w.label}: under ebpf (${r.backend}${r.backend === 'native' ? ', through the hub' : ''})`);
      if (r.backend === 'native' && hub !== undefined) {
        const share = await hub.trace(container.id);
        let under: Awaited<ReturnType<typeof measureWorkload>>;
        try {
          under = await measureWorkload(container, w, ['launcher'], rounds);
        } catch (error) {
          await share.close().catch(() => undefined);
          throw error;
        }
        const result = await share.close();
        traced.native = { summary: need(under.launcher, 'ebpf (native) run'), lost: result.lost, events: result.events.length };
        continue;
      }
      const trace = await startEbpfTrace({
        containerId: container.id,
        cgroup2Mount: r.cgroup2Mount,
        backend: r.backend,
        ...(r.abEbpf === undefined ? {} : { abEbpf: r.abEbpf }),
      });
      let under: Awaited<ReturnType<typeof measureWorkload>>;
      try {
        under = await measureWorkload(container, w, ['launcher'], rounds);
      } catch (error) {
        await trace[Symbol.asyncDispose]();
        throw error;
      }
      const result = await trace.stop();
      traced[r.backend] = { summary: need(under.launcher, `ebpf (${r.backend}) run`), lost: result.lost, events: result.events.length };
    }
    onProgress(`${w.label}: untraced again`);
    const after = await measureWorkload(container, w, ['launcher'], rounds);
    rows.push({
      id: w.id,
      label: w.label,
      untracedBefore: need(before.launcher, 'untraced run'),
      untracedAfter: need(after.launcher, 'untraced run'),
      strace: need(before['launcher+strace'], 'strace run'),
      traced,
    });
  }
  return rows;
}

/**
 * `true` through two sessions on the container, one strace's and one the hub's (its share joined
 * paused, as eval joins it), untraced and traced, interleaved round by round (order rotated).
 */
async function measurePerCommand(container: Container, hub: EbpfHub, rounds: Rounds): Promise<EbpfPerCommand> {
  const share = await hub.trace(container.id, { paused: true });
  const plain = new SandboxSession(container, SCRATCH_DIR, {});
  const hosted = new SandboxSession(container, SCRATCH_DIR, { hostTrace: share });
  try {
    const cells = [
      { key: 'untraced', session: plain, trace: false },
      { key: 'strace', session: plain, trace: true },
      { key: 'ebpf', session: hosted, trace: true },
    ] as const;
    const samples: Record<(typeof cells)[number]['key'], number[]> = { untraced: [], strace: [], ebpf: [] };
    // Each session's first command starts its agent: a warm-up round at least.
    for (let round = 0; round < Math.max(1, rounds.warmup) + rounds.reps * 2; round++) {
      const k = round % cells.length;
      for (const c of [...cells.slice(k), ...cells.slice(0, k)]) {
        const started = performance.now();
        const r = await c.session.run({ cmd: ['true'], mode: { kind: 'unenforced' }, trace: c.trace });
        const ms = performance.now() - started;
        if (r.exec.exitCode !== 0 || (c.trace && r.events.length === 0)) {
          throw new AuthbenchError('INTERNAL', `bench (ebpf): \`true\` through the session (${c.key}) failed or was not traced`, { details: [r.exec.stderr.slice(-500)] });
        }
        if (round >= Math.max(1, rounds.warmup)) samples[c.key].push(ms);
      }
    }
    return { untraced: summarize(samples.untraced), strace: summarize(samples.strace), ebpf: summarize(samples.ebpf) };
  } finally {
    await plain.close().catch(() => undefined);
    await hosted.close().catch(() => undefined);
    await share.close().catch(() => undefined);
  }
}

const BENCH_SHARE_CAP_BYTES = 1024 * 1024 * 1024;
/** Loops per CPU beside the traced work: a saturated machine, as a busy `-n 4` job or another user's makes it. */
const LOOPS_PER_CPU = 3;
const LOAD_ROUNDS = 2;

/**
 * Why the hub's reader runs raised (sandbox/ebpf/priority.ts): one traced command of `finds`
 * `find /usr` runs (a syscall-heavy stretch, ~20,000 records each) while CPU-bound loops on the
 * host outnumber the cores 3 to 1, the reader at nice 0 and at TRACER_NICE, alternated round by
 * round on the same hub. Records lost are what the kernel's ring dropped.
 */
async function measureUnderLoad(container: Container, hub: EbpfHub, finds: number): Promise<EbpfUnderLoad> {
  const loops = LOOPS_PER_CPU * cpus().length;
  const burners = Array.from({ length: loops }, () => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  const runs: EbpfLoadRun[] = [];
  try {
    for (let round = 0; round < LOAD_ROUNDS; round++) {
      for (const nice of [0, TRACER_NICE]) {
        if (raiseTracerPriority(hub.pid, nice) !== nice) throw new AuthbenchError('INTERNAL', `bench (ebpf): could not set the hub's reader to nice ${nice}`);
        const share = await hub.trace(container.id);
        try {
          const r = await container.exec({ cmd: ['sh', '-c', `for i in $(seq 1 ${finds}); do find /usr -name '*.py' > /dev/null; done`], timeoutMs: WORKLOAD_TIMEOUT_MS });
          if (r.exitCode !== 0) throw new AuthbenchError('INTERNAL', `bench (ebpf): the loaded find runs exited ${String(r.exitCode)}`, { details: [r.stderr.slice(-500)] });
        } finally {
          const result = await share.close();
          runs.push({ nice, events: result.events.length, lost: result.lost });
        }
      }
    }
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    raiseTracerPriority(hub.pid);
  }
  return { loops, finds, runs };
}

/** The baseline: the mean of the medians before and after the eBPF block. */
function baseline(row: EbpfBenchRow): Summary {
  const m = (row.untracedBefore.median + row.untracedAfter.median) / 2;
  return { ...row.untracedBefore, median: m };
}

/** The eBPF section of `make bench`'s report: one line per workload, both backends beside strace. Pure. */
export function renderEbpfBench(bench: EbpfBench): string {
  const lines = ['', 'eBPF tracer vs strace (scripts/bench/ebpf.ts; unpinned, launcher on; traced ÷ untraced, medians; native through the hub eval uses)'];
  if ('skipped' in bench) return [...lines, `  skipped: ${bench.skipped}`, ''].join('\n');
  const cell = (t: EbpfTraced | undefined, base: Summary): string => (t === undefined ? '—' : `${ratio(t.summary, base).toFixed(2)}×`);
  const seen = (t: EbpfTraced | undefined): string => (t === undefined ? '—' : `${t.events} (${t.lost})`);
  lines.push(
    `  ${'workload'.padEnd(24)} ${'untraced'.padStart(10)} ${'strace'.padStart(8)} ${'native'.padStart(8)} ${'bpftrace'.padStart(9)}  before/after untraced  events (lost): native / bpftrace`,
  );
  for (const r of bench.rows) {
    const base = baseline(r);
    lines.push(
      `  ${r.label.padEnd(24)} ${`${base.median.toFixed(0)} ms`.padStart(10)} ${`${ratio(r.strace, base).toFixed(2)}×`.padStart(8)} ${cell(r.traced.native, base).padStart(8)} ${cell(r.traced.bpftrace, base).padStart(9)}  ${`${r.untracedBefore.median.toFixed(0)} / ${r.untracedAfter.median.toFixed(0)} ms`.padStart(21)}  ${seen(r.traced.native)} / ${seen(r.traced.bpftrace)}`,
    );
  }
  for (const [backend, reason] of Object.entries(bench.skippedBackends)) lines.push(`  ${backend} skipped: ${reason}`);
  const pc = bench.perCommand;
  if (pc !== undefined) {
    const added = (s: Summary): string => `+${(s.median - pc.untraced.median).toFixed(1)} ms`;
    lines.push(
      `  one command (\`true\`) through SandboxSession.run, medians: untraced ${pc.untraced.median.toFixed(1)} ms, strace ${pc.strace.median.toFixed(1)} ms (${added(pc.strace)}), eBPF hub ${pc.ebpf.median.toFixed(1)} ms (${added(pc.ebpf)}): eBPF ÷ strace ${ratio(pc.ebpf, pc.strace).toFixed(2)}×`,
    );
  }
  const load = bench.underLoad;
  if (load !== undefined) {
    const at = (nice: number): string =>
      load.runs
        .filter((r) => r.nice === nice)
        .map((r) => `${r.events} (${r.lost})`)
        .join(', ');
    lines.push(
      `  under CPU load (${load.loops} busy loops on the host, ${load.finds} × find /usr in one command), events (lost): hub's reader at nice 0: ${at(0)}; at nice ${TRACER_NICE} (eval's): ${at(TRACER_NICE)}`,
    );
  }
  return [...lines, ''].join('\n');
}
