import type { Container, Engine } from '../docker/index.ts';
import { SandboxSession, type SessionOptions } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { startTaskEnvironment, type TaskContainerOptions, type TaskSidecars } from './container.ts';

export interface TaskSandbox {
  container: Container;
  session: SandboxSession;
  /** For a compose task: which sidecars the container reaches, and their addresses by service. */
  sidecars?: TaskSidecars;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface OpenSandboxOptions extends TaskContainerOptions, SessionOptions {}

/**
 * A fresh container of the task's image with the harness mounted read-only
 * and a sandbox session on it (and its compose sidecars, when it has any).
 * Dispose (or `await using`) removes the container and the sidecars.
 */
export async function openTaskSandbox(engine: Engine, task: Task, image: string, options: OpenSandboxOptions = {}): Promise<TaskSandbox> {
  const env = await startTaskEnvironment(engine, task, image, {
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
    ...(options.sidecarReadyTimeoutMs === undefined ? {} : { sidecarReadyTimeoutMs: options.sidecarReadyTimeoutMs }),
    ...(options.sidecarAccess === undefined ? {} : { sidecarAccess: options.sidecarAccess }),
  });
  const container = env.container;
  const session = new SandboxSession(container, task.workdir, {
    ...(options.bestEffort === undefined ? {} : { bestEffort: options.bestEffort }),
    ...(options.pinCpu === undefined ? {} : { pinCpu: options.pinCpu }),
    ...(options.traceCapBytes === undefined ? {} : { traceCapBytes: options.traceCapBytes }),
    ...(options.traceCapEvents === undefined ? {} : { traceCapEvents: options.traceCapEvents }),
    ...(options.reserved === undefined ? {} : { reserved: options.reserved }),
  });
  const dispose = async (): Promise<void> => {
    // Close the in-container agent first (it kills whatever commands left); removal happens regardless.
    try {
      await session.close();
    } finally {
      await env[Symbol.asyncDispose]();
    }
  };
  return { container, session, ...(env.sidecars === undefined ? {} : { sidecars: env.sidecars }), [Symbol.asyncDispose]: dispose };
}
