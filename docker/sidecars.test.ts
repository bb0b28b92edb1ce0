/**
 * Sidecar bring-up and teardown (docker/sidecars.ts) against a fake engine:
 * start order, readiness, bounded waits, and cleanup on every failure.
 */
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { readiness, startSidecars, waitReady, type SidecarPlan } from './sidecars.ts';
import type { Container, ContainerSpec, ContainerState, Engine } from './types.ts';

const RUNNING: ContainerState = { status: 'running', oomKilled: false, exitCode: null, mounts: [] };

describe('readiness', () => {
  it.each<[string, Parameters<typeof readiness>[0], ContainerState, string]>([
    ['healthy', 'service_healthy', { ...RUNNING, health: { status: 'healthy', log: [] } }, 'ready'],
    ['starting', 'service_healthy', { ...RUNNING, health: { status: 'starting', log: [] } }, 'waiting'],
    ['unhealthy', 'service_healthy', { ...RUNNING, health: { status: 'unhealthy', log: [] } }, 'is unhealthy'],
    ['no health check', 'service_healthy', RUNNING, 'has no health check, but a service waits for it to be healthy'],
    ['exited before healthy', 'service_healthy', { ...RUNNING, status: 'exited', exitCode: 1 }, 'exited (code 1) before it was healthy'],
    ['still running', 'service_completed_successfully', RUNNING, 'waiting'],
    ['exited 0', 'service_completed_successfully', { ...RUNNING, status: 'exited', exitCode: 0 }, 'ready'],
    ['exited 2', 'service_completed_successfully', { ...RUNNING, status: 'exited', exitCode: 2 }, 'exited with code 2'],
  ])('%s', (_name, condition, state, expected) => {
    const r = readiness(condition, state);
    expect(r.kind === 'failed' ? r.why : r.kind).toBe(expected);
  });
});

/** A container whose state walks through `states`, staying on the last. */
function fakeContainer(id: string, states: readonly ContainerState[], log: string[]): Container {
  let i = 0;
  const unsupported = (): never => {
    throw new Error('fake container');
  };
  return {
    id,
    image: 'fake',
    exec: unsupported,
    copyIn: unsupported,
    putFiles: unsupported,
    readFile: unsupported,
    copyOut: unsupported,
    state: () => Promise.resolve(states[Math.min(i++, states.length - 1)] ?? RUNNING),
    remove: () => {
      log.push(`remove ${id}`);
      return Promise.resolve();
    },
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

function fakeEngine(statesOf: Record<string, readonly ContainerState[]>, log: string[], specs: ContainerSpec[] = []): Engine {
  const unsupported = (): never => {
    throw new Error('fake engine');
  };
  return {
    endpoint: 'fake',
    stats: { buildCalls: 0, cacheHits: 0 },
    ping: () => Promise.resolve(),
    buildImage: unsupported,
    imageInfo: unsupported,
    volumeExists: unsupported,
    createVolume: unsupported,
    removeVolume: unsupported,
    startContainer: (spec) => {
      specs.push(spec);
      const service = spec.labels?.['authbench.service'] ?? '?';
      log.push(`start ${service}`);
      return Promise.resolve(fakeContainer(service, statesOf[service] ?? [RUNNING], log));
    },
    createNetwork: (name) => {
      log.push(`create network ${name.startsWith('authbench-net-') ? 'ok' : name}`);
      return Promise.resolve();
    },
    removeNetwork: () => {
      log.push('remove network');
      return Promise.resolve();
    },
  };
}

const healthy = (status: string, log: string[] = []): ContainerState => ({ ...RUNNING, health: { status, log } });

function plan(over: Partial<SidecarPlan> = {}): SidecarPlan {
  return {
    sidecars: [
      { service: 'db', image: 'db:1', dependsOn: [], healthcheck: { test: ['CMD', 'true'], intervalMs: 5000 } },
      { service: 'web', image: 'web:1', env: { MODE: 'x' }, command: ['serve'], dependsOn: [{ service: 'db', condition: 'service_healthy' }] },
    ],
    mainDependsOn: [{ service: 'web', condition: 'service_started' }],
    labels: { 'authbench.run': 'r1' },
    readyTimeoutMs: 1000,
    pollMs: 1,
    ...over,
  };
}

describe('startSidecars', () => {
  it('starts each sidecar once its dependencies are ready, on its own network (and its dependencies\') under its service name, and removes all on dispose', async () => {
    const log: string[] = [];
    const specs: ContainerSpec[] = [];
    const engine = fakeEngine({ db: [healthy('starting'), healthy('starting'), healthy('healthy')] }, log, specs);
    const group = await startSidecars(engine, plan());
    expect(log).toEqual(['create network ok', 'create network ok', 'start db', 'start web']);
    const db = group.networks.get('db');
    const web = group.networks.get('web');
    expect(db).toBeDefined();
    expect(web).not.toBe(db);
    expect(specs[0]).toMatchObject({ network: { name: db, aliases: ['db'] } });
    expect(specs[0]).not.toHaveProperty('extraNetworks');
    expect(specs[1]).toMatchObject({
      image: 'web:1',
      network: { name: web, aliases: ['web'] },
      extraNetworks: [{ name: db, aliases: ['web'] }],
      labels: { 'authbench.run': 'r1', 'authbench.service': 'web' },
      env: { MODE: 'x' },
      process: { command: ['serve'] },
    });
    expect(specs[0]?.healthcheck).toEqual({ test: ['CMD', 'true'], intervalMs: 5000 });
    await group[Symbol.asyncDispose]();
    expect(log.slice(4)).toEqual(['remove db', 'remove web', 'remove network', 'remove network']);
  });

  it('a sidecar that turns unhealthy is SIDECAR_FAILED with its health log, and everything started is removed', async () => {
    const log: string[] = [];
    const engine = fakeEngine({ db: [healthy('starting'), healthy('unhealthy', ['exit 1: connection refused'])] }, log);
    const error = await startSidecars(engine, plan()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).code).toBe('SIDECAR_FAILED');
    expect((error as AuthbenchError).message).toBe('compose service db is unhealthy');
    expect((error as AuthbenchError).details).toEqual(['last health check output:', 'exit 1: connection refused']);
    expect(log).toEqual(['create network ok', 'create network ok', 'start db', 'remove db', 'remove network', 'remove network']);
  });
});

describe('SidecarGroup.hosts', () => {
  it('maps every address of every sidecar to its service name', async () => {
    const addressed = (addresses: Record<string, string>): ContainerState => ({ ...healthy('healthy'), addresses });
    const engine = fakeEngine({ db: [addressed({ n0: '172.20.0.2' })], web: [addressed({ n1: '172.21.0.2', n0: '172.20.0.3' })] }, []);
    const group = await startSidecars(engine, plan());
    expect(await group.hosts()).toEqual(new Map([['172.20.0.2', 'db'], ['172.21.0.2', 'web'], ['172.20.0.3', 'web']]));
  });
});

describe('waitReady', () => {
  it('gives up at the deadline, naming the service and the state it was left in', async () => {
    let t = 0;
    const container = fakeContainer('db', [healthy('starting', ['exit 1: not yet'])], []);
    const error = await waitReady('db', container, 'service_healthy', { timeoutMs: 3000, pollMs: 1000, now: () => t, sleep: (ms) => Promise.resolve(void (t += ms)) }).catch((e: unknown) => e);
    expect((error as AuthbenchError).code).toBe('SIDECAR_FAILED');
    expect((error as AuthbenchError).message).toBe('compose service db was not healthy after 3 s (starting)');
    expect(t).toBe(3000);
  });
});
