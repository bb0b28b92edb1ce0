/**
 * How busy the host's CPUs were between two moments, from /proc/stat's aggregate `cpu` line: the
 * concurrency section's check of whether a rate is CPU-bound. Measures the machine authbench runs
 * on, which is the engine's only when Docker is local (the bench's setting).
 */
import { readFileSync } from 'node:fs';

/**
 * Jiffies since boot over all CPUs: busy (user, nice, system, irq, softirq) and in all. Steal —
 * the hypervisor running someone else while we waited — is time, not work: in the total only.
 */
export interface CpuSample {
  busy: number;
  total: number;
}

/** The aggregate `cpu` line of /proc/stat; undefined when the text has none. Pure. */
export function parseProcStat(text: string): CpuSample | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) return undefined;
  // user nice system idle iowait irq softirq steal [guest guest_nice: already inside user and nice]
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 8 || f.some((x) => !Number.isFinite(x))) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const busy = user + nice + system + irq + softirq;
  return { busy, total: busy + idle + iowait + steal };
}

/** Now, or undefined where there is no /proc/stat (not Linux). */
export function sampleCpu(): CpuSample | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** CPUs kept busy on average between two samples (0 … cpus); undefined when no time passed. Pure. */
export function busyCores(from: CpuSample, to: CpuSample, cpus: number): number | undefined {
  const total = to.total - from.total;
  return total <= 0 ? undefined : ((to.busy - from.busy) / total) * cpus;
}
