import type { Container, Engine } from '../docker/index.ts';
import { SandboxSession, type SessionOptions } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { startTaskContainer, type TaskContainerOptions } from './container.ts';

export interface TaskSandbox {
  container: Container;
  session: SandboxSession;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface OpenSandboxOptions extends TaskContainerOptions, SessionOptions {}

/**
 * A fresh container of the task's image with the harness mounted read-only
 * and a sandbox session on it. Dispose (or `await using`) removes the container.
 */
export async function openTaskSandbox(engine: Engine, task: Task, image: string, options: OpenSandboxOptions = {}): Promise<TaskSandbox> {
  const container = await startTaskContainer(engine, task, image, {
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
  });
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
      await container.remove();
    }
  };
  return { container, session, [Symbol.asyncDispose]: dispose };
}
