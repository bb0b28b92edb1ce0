/** Which sidecars a task container is attached to: the policy's hosts within task.toml's declaration. Pure parts. */
import { describe, expect, it } from 'vitest';
import type { NetworkDeclaration, Task } from '../task-format/index.ts';
import { taskContainerSpec } from './container.ts';
import { taskSidecarAccess, taskSidecarNetworks } from './sidecars.ts';

const sidecar = (name: string, ...deps: string[]) => ({ name, dependsOn: deps.map((service) => ({ service, condition: 'service_started' as const })), environment: {} });
const compose = { file: 'environment/docker-compose.yaml', mainDependsOn: [], mainEnvironment: {}, sidecars: [sidecar('alpha'), sidecar('beta')], dropped: [] };
const task = (network: NetworkDeclaration) => ({ network, compose }) as Pick<Task, 'network' | 'compose'>;

describe('taskSidecarAccess', () => {
  it.each<[string, NetworkDeclaration, 'all' | string[], 'all' | string[]]>([
    ['offline: the policy decides', { mode: 'offline' }, ['beta'], ['beta']],
    ['offline, allow-all: every sidecar', { mode: 'offline' }, 'all', 'all'],
    ['public is offline here', { mode: 'public' }, ['alpha'], ['alpha']],
    ['none: nothing, whatever the policy', { mode: 'none' }, 'all', []],
    ['allowlist caps allow-all', { mode: 'allowlist', hosts: ['alpha'], external: [] }, 'all', ['alpha']],
    ['allowlist ∩ policy', { mode: 'allowlist', hosts: ['alpha'], external: [] }, ['alpha', 'beta'], ['alpha']],
  ])('%s', (_name, declaration, access, expected) => {
    expect(taskSidecarAccess({ network: declaration }, access)).toEqual(expected);
  });
});

describe('taskSidecarNetworks', () => {
  it('undefined for a task without sidecars', () => {
    expect(taskSidecarNetworks({ network: { mode: 'offline' } }, 'all')).toBeUndefined();
  });
  it('an allowlist task under allow-all reaches exactly its allowlist', () => {
    expect(taskSidecarNetworks(task({ mode: 'allowlist', hosts: ['beta'], external: [] }), 'all')).toMatchObject({ main: ['beta'], reachable: ['beta'] });
  });
});

describe('taskContainerSpec networks', () => {
  const t = { id: 't', workdir: '/app', limits: {}, authbench: { network: 'sink' }, compose } as unknown as Task;
  const harness = { volume: 'v' };
  it('joins the first allowed sidecar network at creation and the others before start, as service main', () => {
    const spec = taskContainerSpec(t, 'img', harness, { sidecarNetworks: ['n-a', 'n-b'] });
    expect(spec.network).toEqual({ name: 'n-a', aliases: ['main'] });
    expect(spec.extraNetworks).toEqual([{ name: 'n-b', aliases: ['main'] }]);
  });
  it('a compose task allowed no sidecar gets no network at all (not the sink bridge)', () => {
    const spec = taskContainerSpec(t, 'img', harness, { sidecarNetworks: [] });
    expect(spec.network).toBe('none');
    expect(spec).not.toHaveProperty('extraNetworks');
  });
  it('a task without sidecars keeps its sink bridge', () => {
    expect(taskContainerSpec(t, 'img', harness).network).toBe('bridge');
  });
  it('the proxy variables come last, over a compose file of its own', () => {
    const withEnv = { ...t, compose: { ...compose, mainEnvironment: { HTTPS_PROXY: 'http://elsewhere:1', KEEP: '1' } } } as unknown as Task;
    const spec = taskContainerSpec(withEnv, 'img', harness, { sidecarNetworks: ['n-egress'], proxyEnv: { HTTPS_PROXY: 'http://authbench-egress:3128' } });
    expect(spec.env).toEqual({ HTTPS_PROXY: 'http://authbench-egress:3128', KEEP: '1' });
  });
});
