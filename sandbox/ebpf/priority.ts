/**
 * The host tracer's reader runs above ordinary processes. A trace record is dropped in one place
 * only: a kernel ring (or bpftrace's perf buffer) that fills while its reader is not scheduled.
 * The traced commands keep running whatever the reader does (eBPF never stops a tracee), so on a
 * saturated machine a reader at the tracee's priority falls behind a syscall-heavy command and
 * the kernel drops what does not fit. Measured (`make bench`, the eBPF section's "under CPU
 * load" rows): thirty `find /usr` in one traced stretch beside six CPU-bound loops on 2 cores
 * lost 13,000–50,000 records at nice 0 and none at -10. The reader's own work is small (it
 * copies records out; the tracee's syscalls are what make them), so raising it costs the
 * machine's other work little.
 */
import { getPriority, setPriority } from 'node:os';

/** The nice value the host tracer's reader runs at (CFS weight ~9× a nice-0 process's). */
export const TRACER_NICE = -10;

/**
 * Run `pid` at `nice`; the nice it runs at afterwards, or undefined when the kernel refused (no
 * CAP_SYS_NICE) or the process is gone. A refusal is not fatal: records dropped are still
 * counted, and a trace that lost any is marked truncated.
 */
export function raiseTracerPriority(pid: number | undefined, nice: number = TRACER_NICE): number | undefined {
  if (pid === undefined) return undefined;
  try {
    setPriority(pid, nice);
    return getPriority(pid);
  } catch {
    return undefined;
  }
}
