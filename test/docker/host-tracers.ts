/**
 * Sessions under both tracers, for Docker tests that run every case twice: strace in the
 * container, and eBPF from the host through one hub per test file (skipped, with the probe's
 * reason, where eBPF cannot run).
 */
import { expect } from 'vitest';
import { BASE_IMAGE_REF, type Container, type Engine } from '../../docker/index.ts';
import { EbpfHub, ensureEbpfTracer, gatherEbpfFacts, judgeEbpf, type HubTrace } from '../../sandbox/ebpf/index.ts';
import { SandboxSession } from '../../sandbox/run/index.ts';
import { harnessContainer } from './harness.ts';

const ebpf = judgeEbpf(await gatherEbpfFacts(), 'native');

/** [name, skip suffix]: the suffix is '' when the tracer runs here. */
export const TRACERS: readonly (readonly ['strace' | 'ebpf', string])[] = [
  ['strace', ''],
  ['ebpf', ebpf.available ? '' : ` (skipped: ${ebpf.reason})`],
];

let hub: EbpfHub | undefined;

/**
 * The container's share of the file's hub under `ebpf` (joined paused, as eval joins it), nothing
 * under strace; asserts the eBPF variant really is host-traced, not strace under another name.
 */
export async function hostTraceFor(engine: Engine, name: 'strace' | 'ebpf', container: Container): Promise<HubTrace | undefined> {
  let trace: HubTrace | undefined;
  if (name === 'ebpf' && ebpf.available) {
    hub ??= await EbpfHub.start({ abEbpf: (await ensureEbpfTracer(engine)).path, cgroup2Mount: ebpf.cgroup2Mount });
    trace = await hub.trace(container.id, { paused: true });
  }
  expect(trace !== undefined).toBe(name === 'ebpf' && ebpf.available);
  return trace;
}

/** Stop the file's hub (afterAll). */
export async function stopHub(): Promise<void> {
  await hub?.stop();
  hub = undefined;
}

/** A harness container of the base image with `/app` prepared by `setup`, and a session on it under the tracer. */
export interface TracedBox {
  container: Container;
  session: SandboxSession;
  hostTrace: HubTrace | undefined;
  close(): Promise<void>;
}

export async function openTracedBox(engine: Engine, name: 'strace' | 'ebpf', options: { run: string; setup: string }): Promise<TracedBox> {
  const container = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', run: options.run, pidsLimit: 512 });
  const setup = await container.exec({ cmd: ['sh', '-c', options.setup] });
  expect(setup.exitCode).toBe(0);
  const hostTrace = await hostTraceFor(engine, name, container);
  const session = new SandboxSession(container, '/app', hostTrace === undefined ? {} : { hostTrace });
  return {
    container,
    session,
    hostTrace,
    close: async () => {
      await session.close();
      await hostTrace?.close();
      await container.remove();
    },
  };
}
