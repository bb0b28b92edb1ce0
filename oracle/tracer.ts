/**
 * Which tracer watches the oracle (`gen-gold --tracer strace|ebpf`). strace
 * runs inside the container through the session; the eBPF tracer runs on the
 * host against the container's cgroup (sandbox/ebpf), with its native backend
 * (ab-ebpf, built in Docker) unless the bpftrace one is asked for. Both feed
 * the same derivation, so the tracer changes the gold's provenance, never its
 * rules.
 *
 * Where eBPF cannot run, asking for it refuses with the probe's reason
 * (TRACER_UNAVAILABLE); with the fallback allowed, strace traces instead and
 * the gold records that it was asked for eBPF and why it did not get it.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import type { TraceProvenance } from '../gold/index.ts';
import { engineFacts, ensureEbpfTracer, gatherEbpfFacts, judgeEbpf, type EbpfBackend, type EbpfVerdict, type NativeTracer } from '../sandbox/ebpf/index.ts';

export { engineFacts } from '../sandbox/ebpf/index.ts';

export const ORACLE_TRACERS = ['strace', 'ebpf'] as const;
export type OracleTracerName = (typeof ORACLE_TRACERS)[number];

/** The tracer a gen-gold run uses, resolved against what the host can do. */
export type OracleTracer =
  | {
      kind: 'strace';
      /** eBPF was asked for and is unavailable: why (the gold's provenance records it). */
      fallback?: string;
    }
  | {
      kind: 'ebpf';
      backend: EbpfBackend;
      cgroup2Mount: string;
      /** bpftrace's version number, or the native tracer's build (its content hash). */
      version: string;
      /** native: the ab-ebpf binary. */
      abEbpf?: string;
    };

/**
 * The tracer to use for `requested` given the host's eBPF verdict (and, for
 * the native backend, its built binary). Pure. Throws TRACER_UNAVAILABLE when
 * eBPF was asked for, is unavailable and no fallback was allowed.
 */
export function resolveTracer(requested: OracleTracerName, verdict: EbpfVerdict | undefined, allowFallback: boolean, native?: NativeTracer): OracleTracer {
  if (requested === 'strace') return { kind: 'strace' };
  if (verdict === undefined) throw new RangeError('resolveTracer: eBPF was asked for without a verdict');
  if (verdict.available && verdict.backend === 'native') {
    if (native === undefined) throw new RangeError('resolveTracer: the native eBPF backend without its binary');
    return { kind: 'ebpf', backend: 'native', cgroup2Mount: verdict.cgroup2Mount, version: native.contentHash.slice(0, 16), abEbpf: native.path };
  }
  if (verdict.available) {
    const version = verdict.version ?? '';
    return { kind: 'ebpf', backend: 'bpftrace', cgroup2Mount: verdict.cgroup2Mount, version: /\d+\.\d+(?:\.\d+)?/.exec(version)?.[0] ?? version };
  }
  if (allowFallback) return { kind: 'strace', fallback: `eBPF unavailable: ${verdict.reason}` };
  throw new AuthbenchError('TRACER_UNAVAILABLE', `the eBPF tracer is unavailable: ${verdict.reason}`, {
    hint: 'trace with --tracer strace (the default), or pass --tracer-fallback to fall back to strace (recorded in the gold)',
  });
}

/**
 * Probe the host (only when eBPF is asked for), build the native tracer where it can run, and
 * resolve the tracer. A native tracer that cannot be built counts as unavailable (so the
 * fallback, when allowed, takes over).
 */
export async function chooseTracer(engine: Engine, requested: OracleTracerName, allowFallback: boolean, backend: EbpfBackend = 'native'): Promise<OracleTracer> {
  if (requested === 'strace') return { kind: 'strace' };
  let verdict = judgeEbpf(await gatherEbpfFacts({ engine: await engineFacts(engine) }), backend);
  let native: NativeTracer | undefined;
  if (verdict.available && verdict.backend === 'native') {
    try {
      native = await ensureEbpfTracer(engine);
    } catch (error) {
      if (!(error instanceof AuthbenchError)) throw error;
      verdict = { available: false, reason: `the native tracer could not be built: ${error.message}` };
    }
  }
  return resolveTracer(requested, verdict, allowFallback, native);
}

/** The provenance fields naming the tracer and its version. Pure. */
export function tracerProvenance(
  tracer: OracleTracer,
  straceVersion: string | undefined,
): Pick<TraceProvenance, 'tracer' | 'strace_version' | 'bpftrace_version' | 'ebpf_backend' | 'ab_ebpf_version' | 'tracer_fallback'> {
  if (tracer.kind === 'ebpf' && tracer.backend === 'native') return { tracer: 'ebpf', ebpf_backend: 'native', ab_ebpf_version: tracer.version };
  if (tracer.kind === 'ebpf') return { tracer: 'ebpf', ebpf_backend: 'bpftrace', bpftrace_version: tracer.version };
  return {
    tracer: 'strace',
    ...(straceVersion === undefined ? {} : { strace_version: straceVersion }),
    ...(tracer.fallback === undefined ? {} : { tracer_fallback: tracer.fallback }),
  };
}

/** `strace -V`'s first line, `strace -- version 6.1` → `6.1`; the line itself when it has another shape. Pure. */
export function straceVersionOf(output: string): string | undefined {
  const line = output.split('\n')[0]?.trim() ?? '';
  if (line === '') return undefined;
  return /version\s+(\S+)/.exec(line)?.[1] ?? line;
}
