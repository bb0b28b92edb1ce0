import type { Container, ContainerSpec, Engine } from '../docker/index.ts';
import type { Task } from '../task-format/index.ts';

export interface TaskContainerOptions {
  /** Recorded as the authbench.run label so `authbench clean` can find a crashed run's leftovers. */
  runId?: string;
  /** Pin to one CPU: strace --seccomp-bpf is ~1.3x pinned vs 5-100x unpinned (environment.md). */
  cpusetCpus?: string;
}

/**
 * How a task's container is started: the task's workdir, its memory limit, and
 * no network at all unless the task declares a local sink that needs one.
 */
export function taskContainerSpec(task: Task, image: string, options: TaskContainerOptions = {}): ContainerSpec {
  return {
    image,
    workdir: task.workdir,
    network: task.authbench.network === 'sink' ? 'bridge' : 'none',
    labels: { 'authbench.task': task.id, ...(options.runId === undefined ? {} : { 'authbench.run': options.runId }) },
    ...(task.limits.memoryMb === undefined ? {} : { memoryBytes: task.limits.memoryMb * 1024 * 1024 }),
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
  };
}

/** Run `fn` with a fresh task container that is removed afterwards, whatever happens. */
export async function withTaskContainer<T>(
  engine: Pick<Engine, 'startContainer'>,
  spec: ContainerSpec,
  fn: (container: Container) => Promise<T>,
): Promise<T> {
  const container = await engine.startContainer(spec);
  try {
    return await fn(container);
  } finally {
    await container.remove();
  }
}
