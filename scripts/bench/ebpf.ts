/**
 * The eBPF tracer beside strace (issue 21 item 2): traced ÷ untraced per
 * workload, inside one unpinned bench container (the harness mounted, the
 * launcher on in every variant). strace is the harness's own, in the
 * container, as SandboxSession runs it; eBPF is bpftrace on the host filtered
 * on the container's cgroup (sandbox/ebpf), attached for the whole of its
 * measurement and never stopping the tracee. Its cost is the BPF programs in
 * the syscall path plus bpftrace's own formatting on the host's CPUs (the
 * container is unpinned, so both tracers may use the other core).
 * Untraced is measured before and after the eBPF block and the median of
 * both is the baseline, so a drift in machine load over the block shows.
 */
import { AuthbenchError } from '../../core/index.ts';
import type { Container } from '../../docker/index.ts';
import { gatherEbpfFacts, judgeEbpf, startEbpfTrace } from '../../sandbox/ebpf/index.ts';
import { measureWorkload } from './in-container.ts';
import type { Rounds } from './plan.ts';
import { ratio, type Summary } from './stats.ts';
import type { Workload } from './workloads.ts';

export interface EbpfBenchRow {
  id: string;
  label: string;
  untracedBefore: Summary;
  untracedAfter: Summary;
  strace: Summary;
  ebpf: Summary;
  /** Records bpftrace reported lost while the workload ran (the trace was incomplete when > 0). */
  lost: number;
  /** Events it parsed in that time: the tracer did see the workload. */
  events: number;
}

export type EbpfBench = { rows: EbpfBenchRow[] } | { skipped: string };

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new AuthbenchError('INTERNAL', `bench (ebpf): no ${what}`);
  return value;
}

export async function measureEbpfOverhead(container: Container, workloads: readonly Workload[], rounds: Rounds, onProgress: (line: string) => void): Promise<EbpfBench> {
  const verdict = judgeEbpf(await gatherEbpfFacts());
  if (!verdict.available) return { skipped: verdict.reason };
  const rows: EbpfBenchRow[] = [];
  for (const w of workloads) {
    onProgress(`${w.label}: untraced and strace (ebpf comparison)`);
    const before = await measureWorkload(container, w, ['launcher', 'launcher+strace'], rounds);
    onProgress(`${w.label}: under ebpf`);
    const trace = await startEbpfTrace({ containerId: container.id, cgroup2Mount: verdict.cgroup2Mount });
    let under: Awaited<ReturnType<typeof measureWorkload>>;
    try {
      under = await measureWorkload(container, w, ['launcher'], rounds);
    } catch (error) {
      await trace[Symbol.asyncDispose]();
      throw error;
    }
    const traced = await trace.stop();
    onProgress(`${w.label}: untraced again`);
    const after = await measureWorkload(container, w, ['launcher'], rounds);
    rows.push({
      id: w.id,
      label: w.label,
      untracedBefore: need(before.launcher, 'untraced run'),
      untracedAfter: need(after.launcher, 'untraced run'),
      strace: need(before['launcher+strace'], 'strace run'),
      ebpf: need(under.launcher, 'ebpf run'),
      lost: traced.lost,
      events: traced.events.length,
    });
  }
  return { rows };
}

/** The baseline: the mean of the medians before and after the eBPF block. */
function baseline(row: EbpfBenchRow): Summary {
  const m = (row.untracedBefore.median + row.untracedAfter.median) / 2;
  return { ...row.untracedBefore, median: m };
}

export function renderEbpfBench(bench: EbpfBench): string {
  const lines = ['', 'eBPF tracer vs strace (scripts/bench/ebpf.ts; unpinned, launcher on; traced ÷ untraced, medians)'];
  if ('skipped' in bench) return [...lines, `  skipped: ${bench.skipped}`, ''].join('\n');
  lines.push(`  ${'workload'.padEnd(24)} ${'untraced'.padStart(10)} ${'strace'.padStart(8)} ${'ebpf'.padStart(8)}  before/after untraced  ebpf events (lost)`);
  for (const r of bench.rows) {
    const base = baseline(r);
    lines.push(
      `  ${r.label.padEnd(24)} ${`${base.median.toFixed(0)} ms`.padStart(10)} ${`${ratio(r.strace, base).toFixed(2)}×`.padStart(8)} ${`${ratio(r.ebpf, base).toFixed(2)}×`.padStart(8)}  ${`${r.untracedBefore.median.toFixed(0)} / ${r.untracedAfter.median.toFixed(0)} ms`.padStart(21)}  ${r.events} (${r.lost})`,
    );
  }
  return [...lines, ''].join('\n');
}
