import type { Container, Engine } from '../docker/index.ts';
import { ensureLauncher, installLauncher } from '../sandbox/launcher/index.ts';
import { SandboxSession, type SessionOptions } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { taskContainerSpec, type TaskContainerOptions } from './container.ts';

export interface TaskSandbox {
  container: Container;
  session: SandboxSession;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface OpenSandboxOptions extends TaskContainerOptions, SessionOptions {}

/**
 * A fresh container of the task's image with the launcher installed and a
 * sandbox session on it. Dispose (or `await using`) removes the container.
 */
export async function openTaskSandbox(engine: Engine, task: Task, image: string, options: OpenSandboxOptions = {}): Promise<TaskSandbox> {
  const binary = await ensureLauncher(engine);
  const container = await engine.startContainer(taskContainerSpec(task, image, options));
  try {
    await installLauncher(container, binary);
  } catch (e) {
    await container.remove();
    throw e;
  }
  const session = new SandboxSession(container, task.workdir, {
    ...(options.bestEffort === undefined ? {} : { bestEffort: options.bestEffort }),
    ...(options.pinCpu === undefined ? {} : { pinCpu: options.pinCpu }),
  });
  const dispose = async (): Promise<void> => {
    // Close the in-container agent first so no attached exec outlives the container; removal happens regardless.
    try {
      await session.close();
    } finally {
      await container.remove();
    }
  };
  return { container, session, [Symbol.asyncDispose]: dispose };
}
