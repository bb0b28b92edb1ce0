import { EGRESS_PROXY_HOST, EGRESS_PROXY_PORT, type Container, type Engine } from '../docker/index.ts';
import { SandboxSession, type HostTrace, type HostTracer, type SessionOptions } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { imageBaselineKey, imageBaselines, type BaselineClaim } from './image-baseline.ts';
import { startTaskEnvironment, type TaskContainerOptions, type TaskEgress, type TaskSidecars } from './container.ts';

export interface TaskSandbox {
  container: Container;
  session: SandboxSession;
  /** For a compose task: which sidecars the container reaches, and their addresses by service. */
  sidecars?: TaskSidecars;
  /** For a task whose allowlist names external hosts it may reach: the egress proxy's rules and log. */
  egress?: TaskEgress;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface OpenSandboxOptions extends TaskContainerOptions, Omit<SessionOptions, 'imageBaseline' | 'hostTrace'> {
  /**
   * Trace the session's commands with eBPF from the host (`eval --tracer ebpf`): the container
   * joins this hub before anything runs in it, and leaves it when disposed.
   */
  hostTracer?: HostTracer;
  /**
   * Take the session's baseline from this process's per-image cache (image-baseline.ts), or
   * list the fresh container now — before the caller gets it, so before anything runs in it or
   * is written to it — and keep that listing for the next container of the image. For callers
   * that would list first anyway (a rollout's first episode); one that writes into the container
   * before its first compile (gold derivation copies the solution in) must leave it off.
   */
  shareImageBaseline?: boolean;
}

/**
 * A fresh container of the task's image with the harness mounted read-only
 * and a sandbox session on it (and its compose sidecars, when it has any).
 * Dispose (or `await using`) removes the container and the sidecars.
 */
export async function openTaskSandbox(engine: Engine, task: Task, image: string, options: OpenSandboxOptions = {}): Promise<TaskSandbox> {
  // Claimed before the container starts, so rollouts of one image started together list it once.
  const baselineKey = options.shareImageBaseline === true ? imageBaselineKey(task, image) : undefined;
  const claim = baselineKey === undefined ? undefined : imageBaselines(engine).claim(baselineKey);
  try {
    return await openClaimed(engine, task, image, options, claim);
  } finally {
    // A claim this call did not settle (it failed before listing) frees the key for the waiters.
    if (claim?.kind === 'mine') claim.settle(undefined);
  }
}

async function openClaimed(engine: Engine, task: Task, image: string, options: OpenSandboxOptions, claim: BaselineClaim | undefined): Promise<TaskSandbox> {
  const env = await startTaskEnvironment(engine, task, image, {
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
    ...(options.sidecarReadyTimeoutMs === undefined ? {} : { sidecarReadyTimeoutMs: options.sidecarReadyTimeoutMs }),
    ...(options.sidecarAccess === undefined ? {} : { sidecarAccess: options.sidecarAccess }),
    ...(options.egressUpstream === undefined ? {} : { egressUpstream: options.egressUpstream }),
    // The session below is the container's first: its agent need not be an exec.
    mainAgent: true,
  });
  const egress = env.egress;
  const container = env.container;
  let hostTrace: HostTrace | undefined;
  try {
    // Paused until the session's first traced command: the listing and setup before it need no trace.
    hostTrace = await options.hostTracer?.trace(container.id, { paused: true });
  } catch (e) {
    await env[Symbol.asyncDispose]().catch(() => undefined);
    throw e;
  }
  // Or another rollout's listing of this image, taken while this container started (never rejects).
  const cached = claim?.kind === 'kept' ? claim.snapshot : claim?.kind === 'pending' ? await claim.listing : undefined;
  const session = new SandboxSession(container, task.workdir, {
    ...(cached === undefined ? {} : { imageBaseline: cached }),
    ...(options.bestEffort === undefined ? {} : { bestEffort: options.bestEffort }),
    ...(options.pinCpu === undefined ? {} : { pinCpu: options.pinCpu }),
    ...(options.traceCapBytes === undefined ? {} : { traceCapBytes: options.traceCapBytes }),
    ...(options.traceCapEvents === undefined ? {} : { traceCapEvents: options.traceCapEvents }),
    ...(options.reserved === undefined ? {} : { reserved: options.reserved }),
    ...(options.fileSizeMax === undefined ? {} : { fileSizeMax: options.fileSizeMax }),
    ...(hostTrace === undefined ? {} : { hostTrace }),
    // A policy naming an allowlisted external host connects to the proxy: Landlock must let it.
    ...(egress === undefined ? {} : { egress: { host: EGRESS_PROXY_HOST, port: EGRESS_PROXY_PORT, served: egress.rules.map((r) => r.host) } }),
  });
  const dispose = async (): Promise<void> => {
    // Close the in-container agent first (it kills whatever commands left); removal happens regardless.
    try {
      await session.close();
    } finally {
      // What is left of its trace is no command's now (the session took every command's); a hub
      // that broke has failed the command that needed it already.
      await hostTrace?.close().catch(() => undefined);
      await env[Symbol.asyncDispose]();
    }
  };
  if (claim !== undefined) {
    try {
      // The first listing of a container nothing ran in yet: the image's, for every later container of it.
      if (cached === undefined) {
        const listing = await session.baselineSnapshot();
        if (claim.kind === 'mine') claim.settle(listing);
        else imageBaselines(engine).set(imageBaselineKey(task, image), listing);
      }
      // Given the listing, the agent still starts here, as listing would start it: a failure to start is the setup's.
      else await session.start();
    } catch (e) {
      await dispose().catch(() => undefined);
      throw e;
    }
  }
  return { container, session, ...(env.sidecars === undefined ? {} : { sidecars: env.sidecars }), ...(egress === undefined ? {} : { egress }), [Symbol.asyncDispose]: dispose };
}
