import type { Container, ContainerSpec, Engine } from '../docker/index.ts';
import { LAUNCHER_PATH, ensureHarness, harnessMount, type Harness } from '../sandbox/launcher/index.ts';
import { AuthbenchError } from '../core/index.ts';
import type { Task } from '../task-format/index.ts';

export interface TaskContainerOptions {
  /** Recorded as the authbench.run label so `authbench clean` can find a crashed run's leftovers. */
  runId?: string;
  /** Pin to one CPU: strace --seccomp-bpf is ~1.3x pinned vs 5-100x unpinned (environment.md). */
  cpusetCpus?: string;
}

/**
 * What a task container gets when task.toml says nothing. Harbor's own defaults are 1 CPU and
 * 2 GiB; these are a little roomier because the tracer and the session agent live in the
 * container too. The pids limit is authbench's: it ends fork bombs and bounds every sweep.
 */
export const DEFAULT_TASK_LIMITS = { memoryMb: 4096, cpus: 2, pids: 1024 } as const;

/** The limits a task's container runs with: its task.toml's, else the defaults. */
export function taskLimits(task: Task): { memoryMb: number; cpus: number; pids: number } {
  return {
    memoryMb: task.limits.memoryMb ?? DEFAULT_TASK_LIMITS.memoryMb,
    cpus: task.limits.cpus ?? DEFAULT_TASK_LIMITS.cpus,
    pids: task.limits.pids ?? DEFAULT_TASK_LIMITS.pids,
  };
}

/**
 * How a task's container is started: the task's workdir, its limits (memory,
 * CPU quota, pids), no network at all unless the task declares a local sink
 * that needs one, and the harness mounted read-only at /opt/authbench. Its
 * main process is the harness's idle process, not the image's entrypoint.
 */
export function taskContainerSpec(task: Task, image: string, harness: Pick<Harness, 'volume'>, options: TaskContainerOptions = {}): ContainerSpec {
  const limits = taskLimits(task);
  return {
    image,
    workdir: task.workdir,
    network: task.authbench.network === 'sink' ? 'bridge' : 'none',
    labels: { 'authbench.task': task.id, ...(options.runId === undefined ? {} : { 'authbench.run': options.runId }) },
    memoryBytes: limits.memoryMb * 1024 * 1024,
    cpus: limits.cpus,
    pidsLimit: limits.pids,
    volumes: [harnessMount(harness)],
    idleCommand: [LAUNCHER_PATH, '--idle'],
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
  };
}

/**
 * A fresh container of the task's image with the harness mounted, checked
 * from the daemon's side: the harness mount must be the expected volume and
 * read-only, or nothing runs in it.
 */
export async function startTaskContainer(engine: Engine, task: Task, image: string, options: TaskContainerOptions = {}): Promise<Container> {
  const harness = await ensureHarness(engine);
  const container = await engine.startContainer(taskContainerSpec(task, image, harness, options));
  try {
    await assertHarnessMount(container, harness);
  } catch (e) {
    await container.remove();
    throw e;
  }
  return container;
}

async function assertHarnessMount(container: Container, harness: Pick<Harness, 'volume'>): Promise<void> {
  if (container.state === undefined) return;
  const state = await container.state();
  const mount = state.mounts.find((m) => m.target === harnessMount(harness).target);
  if (mount?.volume !== harness.volume || mount.rw) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `container ${container.id.slice(0, 12)} does not have the harness mounted read-only`, {
      details: [mount === undefined ? 'no mount at the harness path' : `mounted: ${String(mount.volume)} (${mount.rw ? 'read-write' : 'read-only'})`],
    });
  }
}

/** Run `fn` with a fresh task container (harness mounted) that is removed afterwards, whatever happens. */
export async function withTaskContainer<T>(engine: Engine, task: Task, image: string, options: TaskContainerOptions, fn: (container: Container) => Promise<T>): Promise<T> {
  const container = await startTaskContainer(engine, task, image, options);
  try {
    return await fn(container);
  } finally {
    await container.remove();
  }
}
