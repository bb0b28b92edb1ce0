/**
 * Throw-away copies of a task container: its filesystem committed as an
 * image, and a container started from that image with the task's spec but no
 * network at all and no sidecars, the harness mounted read-only, and a sandbox
 * session on it. What runs in a copy cannot reach the original, its sink or
 * the validators: counterfactual runs (evaluation/counterfactual.ts) use it. Its commands get the
 * task's file size limit as the rollout's do; the caller runs the storage guard on the copy.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Container, Engine } from '../docker/index.ts';
import { ensureHarness } from '../sandbox/launcher/index.ts';
import { SandboxSession, type HostTrace, type HostTracer } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { assertHarnessMount, taskContainerSpec, taskLimits } from './container.ts';
import { storageLimitOf } from './storage.ts';

/** Repository of committed copies; `authbench clean` removes what a crash leaves (tagged by content-hash label). */
export const COPY_REPOSITORY = 'authbench/copy';

export interface ContainerCopy {
  /** The committed image's tag. */
  image: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Commit the container's filesystem (processes, the harness volume and tmpfs mounts are not
 * copied). Dispose removes the image. SANDBOX_UNAVAILABLE when the engine cannot commit.
 */
export async function commitTaskContainer(engine: Engine, container: Container, task: Task, runId?: string): Promise<ContainerCopy> {
  if (engine.commitContainer === undefined || engine.removeImage === undefined) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'this Docker engine cannot commit a container (no copies)');
  }
  const labels = { 'authbench.kind': 'copy-image', 'authbench.task': task.id, ...(runId === undefined ? {} : { 'authbench.run': runId }) };
  const image = await engine.commitContainer(container.id, COPY_REPOSITORY, labels);
  const remove = engine.removeImage.bind(engine);
  return { image, [Symbol.asyncDispose]: () => remove(image) };
}

export interface CopySandbox {
  container: Container;
  session: SandboxSession;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A container of a copy with the task's workdir, limits and harness, on no network (a listener
 * the task's sink needs is loopback, which stays), with a session on it. Dispose removes it.
 * `hostTracer` (`eval --tracer ebpf`): the copy joins the rollout's eBPF hub, as its original did,
 * so its command is traced as the rollout's were.
 */
export async function openCopySandbox(engine: Engine, task: Task, image: string, runId?: string, hostTracer?: HostTracer): Promise<CopySandbox> {
  const harness = await ensureHarness(engine);
  // The session below is the copy's first: its agent need not be an exec.
  const spec = taskContainerSpec(task, image, harness, { mainAgent: true, ...(runId === undefined ? {} : { runId }) });
  const container = await engine.startContainer({ ...spec, network: 'none', extraNetworks: [] });
  let hostTrace: HostTrace | undefined;
  try {
    await assertHarnessMount(container, harness);
    hostTrace = await hostTracer?.trace(container.id, { paused: true });
  } catch (e) {
    await container.remove().catch(() => undefined);
    throw e;
  }
  // A re-run is the agent's command again: no file of it outgrows the task's storage limit (the caller watches the sum).
  const session = new SandboxSession(container, task.workdir, { fileSizeMax: storageLimitOf(taskLimits(task).storageMb).bytes, ...(hostTrace === undefined ? {} : { hostTrace }) });
  return {
    container,
    session,
    [Symbol.asyncDispose]: async () => {
      try {
        await session.close();
      } finally {
        await hostTrace?.close().catch(() => undefined);
        await container.remove();
      }
    },
  };
}
