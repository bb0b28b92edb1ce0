import { egressProxyEnv, startEgressProxy, type Container, type ContainerSpec, type EgressDecision, type EgressProxy, type EgressRule, type Engine } from '../docker/index.ts';
import { LAUNCHER_PATH, MAIN_AGENT_ARGV_TAIL, ensureHarness, harnessMount, type Harness } from '../sandbox/launcher/index.ts';
import { AuthbenchError } from '../core/index.ts';
import { MAIN_SERVICE, type Task } from '../task-format/index.ts';
import { taskEgressRules } from './egress.ts';
import { startListenerSink } from './listener-sink.ts';
import { startTaskSidecars, taskSidecarNetworks, type SidecarAccess } from './sidecars.ts';

export interface TaskContainerOptions {
  /** Recorded as the authbench.run label so `authbench clean` can find a crashed run's leftovers. */
  runId?: string;
  /** Pin to one CPU: strace --seccomp-bpf is ~1.3x pinned vs 5-100x unpinned (environment.md). */
  cpusetCpus?: string;
  /** Longest wait for a compose sidecar to get ready (default: docker/sidecars.ts). */
  sidecarReadyTimeoutMs?: number;
  /**
   * The sidecars and allowlisted external hosts the task container may reach — a policy's
   * (`policySidecarHosts`) — within what the task declares (task.toml's network; external hosts
   * through the egress proxy, taskenv/egress.ts). Default 'all': the oracle, verify, policy exploration
   * and `sandbox run` see the task's whole environment, as Harbor gives it.
   */
  sidecarAccess?: SidecarAccess;
  /** The network the egress proxy forwards through (default Docker's `bridge`); tests give their own. */
  egressUpstream?: string;
  /**
   * The first session's agent runs below the container's main process, on its stdin
   * (`ab-launch --idle --serve-stdin`, attached before the start), and costs no exec. For callers
   * that open a session on the container first thing (openTaskSandbox); anyone else would leave
   * an agent waiting in it.
   */
  mainAgent?: boolean;
}

/**
 * What a task container gets when task.toml says nothing. Harbor's own defaults are 1 CPU and
 * 2 GiB; these are a little roomier because the tracer and the session agent live in the
 * container too. The pids limit is authbench's: it ends fork bombs and bounds every sweep.
 */
/** storageMb: Harbor's usual `storage = "10G"`, for a task that declares none. */
export const DEFAULT_TASK_LIMITS = { memoryMb: 4096, cpus: 2, pids: 1024, storageMb: 10240 } as const;

/** The limits a task's container runs with: its task.toml's, else the defaults. */
export function taskLimits(task: Task): { memoryMb: number; cpus: number; pids: number; storageMb: number } {
  return {
    memoryMb: task.limits.memoryMb ?? DEFAULT_TASK_LIMITS.memoryMb,
    cpus: task.limits.cpus ?? DEFAULT_TASK_LIMITS.cpus,
    pids: task.limits.pids ?? DEFAULT_TASK_LIMITS.pids,
    storageMb: task.limits.storageMb ?? DEFAULT_TASK_LIMITS.storageMb,
  };
}

/**
 * How a task's container is started: the task's workdir, its limits (memory,
 * CPU quota, pids), no network at all unless the task declares a local sink
 * that needs one or may reach compose sidecars or allowlisted external hosts
 * (then only those sidecars' internal networks and the egress proxy's, as
 * service `main`, with the proxy variables set), the harness mounted read-only at /opt/authbench, and
 * CAP_SYS_PTRACE for the tracer (never for what the launcher runs). Its
 * main process is the harness's idle process, not the image's entrypoint.
 */
export function taskContainerSpec(
  task: Task,
  image: string,
  harness: Pick<Harness, 'volume'>,
  options: TaskContainerOptions & { sidecarNetworks?: readonly string[]; proxyEnv?: Readonly<Record<string, string>> } = {},
): ContainerSpec {
  const limits = taskLimits(task);
  // The proxy settings last: a compose file's own proxy variables would point past the filter.
  const env = { ...(task.compose?.mainEnvironment ?? {}), ...(options.proxyEnv ?? {}) };
  const [first, ...others] = options.sidecarNetworks ?? [];
  return {
    image,
    workdir: task.workdir,
    // A compose task whose policy reaches no sidecar gets no network at all (never the sink's bridge).
    network:
      first !== undefined ? { name: first, aliases: [MAIN_SERVICE] } : options.sidecarNetworks === undefined && task.authbench.network === 'sink' ? 'bridge' : 'none',
    ...(others.length === 0 ? {} : { extraNetworks: others.map((name) => ({ name, aliases: [MAIN_SERVICE] })) }),
    ...(Object.keys(env).length === 0 ? {} : { env }),
    labels: { 'authbench.task': task.id, ...(options.runId === undefined ? {} : { 'authbench.run': options.runId }) },
    memoryBytes: limits.memoryMb * 1024 * 1024,
    cpus: limits.cpus,
    pidsLimit: limits.pids,
    volumes: [harnessMount(harness)],
    // For strace alone: without it a tracee that changes uid (nginx's workers, `setpriv --reuid`)
    // hides the paths it opens. The launcher drops it before any command or validator runs.
    capAdd: ['SYS_PTRACE'],
    ...(options.mainAgent === true ? { idleCommand: [LAUNCHER_PATH, ...MAIN_AGENT_ARGV_TAIL], attachMain: true } : { idleCommand: [LAUNCHER_PATH, '--idle'] }),
    ...(options.cpusetCpus === undefined ? {} : { cpusetCpus: options.cpusetCpus }),
  };
}

/** A task container and, for a compose task, its sidecars: dispose removes them all. */
export interface TaskEnvironment {
  container: Container;
  /** For a compose task: the sidecars the container can reach, and every sidecar address → service name. */
  sidecars?: TaskSidecars;
  /** For a task whose allowlist names external hosts it may reach: the egress proxy. */
  egress?: TaskEgress;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface TaskEgress {
  /** The hosts the proxy forwards to (the allowlist in force). */
  rules: readonly EgressRule[];
  /** What it forwarded and refused so far. */
  decisions(): Promise<EgressDecision[]>;
}

export interface TaskSidecars {
  /** Sidecar services the task container can reach (sorted), what results and reports record. */
  reachable: readonly string[];
  /** Address → service name over every sidecar network, so a traced connect() can be named. */
  hosts(): Promise<ReadonlyMap<string, string>>;
}

/**
 * A fresh container of the task's image with the harness mounted, checked
 * from the daemon's side: the harness mount must be the expected volume and
 * read-only, or nothing runs in it. A task with compose sidecars gets them
 * first, ready as its `depends_on` asks, on a network of this container's own.
 */
export async function startTaskEnvironment(engine: Engine, task: Task, image: string, options: TaskContainerOptions = {}): Promise<TaskEnvironment> {
  const harness = await ensureHarness(engine);
  const labels = { 'authbench.task': task.id, ...(options.runId === undefined ? {} : { 'authbench.run': options.runId }) };
  const sidecars = await startTaskSidecars(engine, task, labels, options.sidecarReadyTimeoutMs);
  const plan = sidecars === undefined ? undefined : taskSidecarNetworks(task, options.sidecarAccess ?? 'all');
  const sidecarNetworks = plan?.main.map((service) => sidecars?.networks.get(service) ?? '');
  const rules = taskEgressRules(task, options.sidecarAccess ?? 'all');
  let egress: EgressProxy | undefined;
  let container: Container | undefined;
  const removeServices = async (): Promise<void> => {
    try {
      await sidecars?.[Symbol.asyncDispose]();
    } finally {
      await egress?.[Symbol.asyncDispose]();
    }
  };
  try {
    if (rules.length > 0) egress = await startEgressProxy(engine, { rules, labels, ...(options.egressUpstream === undefined ? {} : { upstream: options.egressUpstream }) });
    const networks = egress === undefined ? sidecarNetworks : [...(sidecarNetworks ?? []), egress.network];
    const proxyEnv = egress === undefined ? undefined : egressProxyEnv(task.compose?.sidecars.map((s) => s.name) ?? []);
    container = await engine.startContainer(
      taskContainerSpec(task, image, harness, { ...options, ...(networks === undefined ? {} : { sidecarNetworks: networks }), ...(proxyEnv === undefined ? {} : { proxyEnv }) }),
    );
    await assertHarnessMount(container, harness);
    // Before anything of the task or the agent runs: the listener the task's sink stands for.
    await startListenerSink(container, task);
  } catch (e) {
    await container?.remove().catch(() => undefined);
    await removeServices().catch(() => undefined);
    throw e;
  }
  const started = container;
  const dispose = async (): Promise<void> => {
    // The task container first: the sidecars' and the proxy's networks cannot go while it is attached.
    try {
      await started.remove();
    } finally {
      await removeServices();
    }
  };
  const proxy = egress;
  return {
    container: started,
    ...(sidecars === undefined || plan === undefined ? {} : { sidecars: { reachable: plan.reachable, hosts: () => sidecars.hosts() } }),
    ...(proxy === undefined ? {} : { egress: { rules: proxy.rules, decisions: () => proxy.decisions() } }),
    [Symbol.asyncDispose]: dispose,
  };
}

export async function assertHarnessMount(container: Container, harness: Pick<Harness, 'volume'>): Promise<void> {
  if (container.state === undefined) return;
  const state = await container.state();
  const mount = state.mounts.find((m) => m.target === harnessMount(harness).target);
  if (mount?.volume !== harness.volume || mount.rw) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `container ${container.id.slice(0, 12)} does not have the harness mounted read-only`, {
      details: [mount === undefined ? 'no mount at the harness path' : `mounted: ${String(mount.volume)} (${mount.rw ? 'read-write' : 'read-only'})`],
    });
  }
}

/** Run `fn` with a fresh task container (harness mounted, sidecars running) that is removed afterwards with its sidecars, whatever happens. */
export async function withTaskContainer<T>(engine: Engine, task: Task, image: string, options: TaskContainerOptions, fn: (container: Container) => Promise<T>): Promise<T> {
  await using env = await startTaskEnvironment(engine, task, image, options);
  return await fn(env.container);
}
