/**
 * `eval --tracer ebpf`: one eBPF hub (sandbox/ebpf/hub.ts) for the whole job, started before the
 * first rollout and stopped after the last; every rollout's containers join it. Where eBPF cannot
 * run (not root, no BTF, Docker in a VM, a remote or rootless engine, more than one engine) the
 * job is refused before anything runs, with the probe's reason: a job asked to be traced one way
 * is never silently traced another.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { EbpfHub, engineFacts, ensureEbpfTracer, gatherEbpfFacts, judgeEbpf } from '../sandbox/ebpf/index.ts';
import type { EvalConfig } from './config.ts';

/** The job's hub, or undefined when strace traces. Throws TRACER_UNAVAILABLE (before any rollout) when eBPF cannot run. */
export async function startHostTracer(config: Pick<EvalConfig, 'tracer'>, engines: readonly Engine[]): Promise<EbpfHub | undefined> {
  if (config.tracer !== 'ebpf') return undefined;
  const [engine, ...more] = engines;
  if (engine === undefined) throw new RangeError('startHostTracer: no engine');
  if (more.length > 0) {
    throw new AuthbenchError('TRACER_UNAVAILABLE', 'the eBPF tracer follows the containers of this host only: one engine, not several', { hint: 'run with one --engine, or trace with --tracer strace' });
  }
  const verdict = judgeEbpf(await gatherEbpfFacts({ engine: await engineFacts(engine) }), 'native');
  if (!verdict.available) {
    throw new AuthbenchError('TRACER_UNAVAILABLE', `the eBPF tracer is unavailable: ${verdict.reason}`, { hint: 'trace with --tracer strace (the default)' });
  }
  const native = await ensureEbpfTracer(engine);
  return EbpfHub.start({ abEbpf: native.path, cgroup2Mount: verdict.cgroup2Mount });
}
