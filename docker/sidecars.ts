/**
 * A rollout's sidecar containers (compose services next to the task
 * container), each on an internal network of its own (sidecar-networks.ts:
 * a sidecar also joins the networks of what it depends on), so the task
 * container can be given exactly the sidecars its policy names. Internal: the
 * containers reach each other by service name and nothing outside. Each
 * sidecar starts once the services it depends on meet their condition
 * (started, healthy, or exited 0); waits are bounded, and a sidecar that never
 * gets ready is SIDECAR_FAILED naming the service and its last health log.
 * Whatever was created is removed on dispose, and on any failure on the way up.
 */
import { randomBytes } from 'node:crypto';
import { AuthbenchError } from '../core/index.ts';
import { planSidecarNetworks } from './sidecar-networks.ts';
import type { Container, ContainerHealthcheck, ContainerState, Engine } from './types.ts';

export type ReadyCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully';

export interface SidecarSpec {
  /** The service name: its host name on the network. */
  service: string;
  /** A local image (built by the caller). */
  image: string;
  env?: Readonly<Record<string, string>>;
  entrypoint?: readonly string[];
  command?: readonly string[];
  healthcheck?: ContainerHealthcheck;
  dependsOn: readonly { service: string; condition: ReadyCondition }[];
}

export interface SidecarPlan {
  /** Sidecars with every dependency before its dependents. */
  sidecars: readonly SidecarSpec[];
  /** What the task container waits for before it starts. */
  mainDependsOn: readonly { service: string; condition: ReadyCondition }[];
  /** authbench.task / authbench.run labels, put on the network and every sidecar. */
  labels: Readonly<Record<string, string>>;
  /** Longest wait for one condition (default 120 s). */
  readyTimeoutMs?: number;
  /** Between two looks at a container's state (default 250 ms). */
  pollMs?: number;
}

export interface SidecarGroup {
  /** Each sidecar service's own network: the task container joins those of the services it may reach. */
  networks: ReadonlyMap<string, string>;
  containers: ReadonlyMap<string, Container>;
  /** Address → service name, over every sidecar network (to name the endpoints a trace connected to). */
  hosts(): Promise<ReadonlyMap<string, string>>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;
const DEFAULT_POLL_MS = 250;

/** Create the network, start every sidecar in order, and wait for what the task container depends on. */
export async function startSidecars(engine: Engine, plan: SidecarPlan): Promise<SidecarGroup> {
  if (engine.createNetwork === undefined || engine.removeNetwork === undefined)
    throw new AuthbenchError('INTERNAL', 'this engine cannot create networks, which compose sidecars need');
  const removeNetwork = engine.removeNetwork.bind(engine);
  const prefix = `authbench-net-${randomBytes(6).toString('hex')}`;
  // What each sidecar joins does not depend on what the task container may reach.
  const { joins } = planSidecarNetworks(plan.sidecars, []);
  const networks = new Map(plan.sidecars.map((s, i) => [s.service, `${prefix}-${String(i)}`]));
  const created: string[] = [];
  const containers = new Map<string, Container>();
  const dispose = async (): Promise<void> => {
    // Every container goes even when one removal fails; the networks last (Docker refuses to remove one in use).
    const results = await Promise.allSettled([...containers.values()].map((c) => c.remove()));
    results.push(...(await Promise.allSettled(created.map((n) => removeNetwork(n)))));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  };
  try {
    for (const name of networks.values()) {
      await engine.createNetwork(name, plan.labels);
      created.push(name);
    }
    const wait = (deps: SidecarSpec['dependsOn']): Promise<void> => waitAll(containers, deps, plan);
    for (const sidecar of plan.sidecars) {
      await wait(sidecar.dependsOn);
      const [own = '', ...others] = (joins.get(sidecar.service) ?? []).map((s) => networks.get(s) ?? '');
      containers.set(
        sidecar.service,
        await engine.startContainer({
          image: sidecar.image,
          labels: { ...plan.labels, 'authbench.service': sidecar.service },
          network: { name: own, aliases: [sidecar.service] },
          ...(others.length === 0 ? {} : { extraNetworks: others.map((name) => ({ name, aliases: [sidecar.service] })) }),
          process: {
            ...(sidecar.entrypoint === undefined ? {} : { entrypoint: sidecar.entrypoint }),
            ...(sidecar.command === undefined ? {} : { command: sidecar.command }),
          },
          ...(sidecar.env === undefined ? {} : { env: sidecar.env }),
          ...(sidecar.healthcheck === undefined ? {} : { healthcheck: sidecar.healthcheck }),
        }),
      );
    }
    await wait(plan.mainDependsOn);
  } catch (e) {
    await dispose().catch(() => undefined);
    throw e;
  }
  const hosts = async (): Promise<ReadonlyMap<string, string>> => {
    const out = new Map<string, string>();
    for (const [service, container] of containers) {
      const addresses = (await container.state?.())?.addresses ?? {};
      for (const address of Object.values(addresses)) out.set(address, service);
    }
    return out;
  };
  return { networks, containers, hosts, [Symbol.asyncDispose]: dispose };
}

async function waitAll(containers: ReadonlyMap<string, Container>, deps: SidecarSpec['dependsOn'], plan: SidecarPlan): Promise<void> {
  for (const dep of deps) {
    const container = containers.get(dep.service);
    if (container === undefined) throw new AuthbenchError('INTERNAL', `sidecar ${dep.service} is waited for before it was started`);
    await waitReady(dep.service, container, dep.condition, { timeoutMs: plan.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS, pollMs: plan.pollMs ?? DEFAULT_POLL_MS });
  }
}

export interface WaitOptions {
  timeoutMs: number;
  pollMs: number;
  /** Injected for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Resolve once the container meets the condition; throw SIDECAR_FAILED when it cannot or the time is up. */
export async function waitReady(service: string, container: Container, condition: ReadyCondition, options: WaitOptions): Promise<void> {
  if (condition === 'service_started') return; // startContainer returns a started container
  if (container.state === undefined) throw new AuthbenchError('INTERNAL', `cannot observe sidecar ${service}`);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + options.timeoutMs;
  const fail = (why: string, log: readonly string[] = []): AuthbenchError =>
    new AuthbenchError('SIDECAR_FAILED', `compose service ${service} ${why}`, {
      ...(log.length > 0 ? { details: ['last health check output:', ...log.slice(-3)] } : {}),
      hint: 'the sidecar is part of the task environment (docker-compose.yaml); its container logs tell why',
    });
  for (;;) {
    const state = await container.state();
    const verdict = readiness(condition, state);
    if (verdict.kind === 'ready') return;
    if (verdict.kind === 'failed') throw fail(verdict.why, state.health?.log);
    if (now() >= deadline) throw fail(`was not ${condition === 'service_healthy' ? 'healthy' : 'finished'} after ${Math.round(options.timeoutMs / 1000)} s (${state.health?.status ?? state.status})`, state.health?.log);
    await sleep(options.pollMs);
  }
}

export type Readiness = { kind: 'ready' } | { kind: 'waiting' } | { kind: 'failed'; why: string };

/** What a container's state says about a condition: ready, keep waiting, or why it never will be. Pure. */
export function readiness(condition: Exclude<ReadyCondition, 'service_started'>, state: ContainerState): Readiness {
  const ended = state.status === 'exited' || state.status === 'dead' || state.status === 'gone';
  const failed = (why: string): Readiness => ({ kind: 'failed', why });
  if (condition === 'service_completed_successfully') {
    if (!ended) return { kind: 'waiting' };
    return state.exitCode === 0 ? { kind: 'ready' } : failed(`exited with code ${String(state.exitCode)}${state.oomKilled ? ' (out of memory)' : ''}`);
  }
  if (ended) return failed(`exited (code ${String(state.exitCode)}) before it was healthy`);
  if (state.health === undefined) return failed('has no health check, but a service waits for it to be healthy');
  if (state.health.status === 'healthy') return { kind: 'ready' };
  if (state.health.status === 'unhealthy') return failed('is unhealthy');
  return { kind: 'waiting' };
}
