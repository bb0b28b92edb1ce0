import { describe, expect, it } from 'vitest';
import { planSidecarNetworks } from './sidecar-networks.ts';

const svc = (service: string, ...deps: string[]) => ({ service, dependsOn: deps.map((d) => ({ service: d })) });

describe('planSidecarNetworks', () => {
  const two = [svc('alpha'), svc('beta')];

  it('allow-all joins every network and reaches every sidecar', () => {
    const plan = planSidecarNetworks(two, 'all');
    expect(plan.main).toEqual(['alpha', 'beta']);
    expect(plan.reachable).toEqual(['alpha', 'beta']);
  });

  it('one named sidecar: only its network, only it reachable', () => {
    const plan = planSidecarNetworks(two, ['beta']);
    expect(plan.main).toEqual(['beta']);
    expect(plan.reachable).toEqual(['beta']);
  });

  it('no access: no network at all', () => {
    expect(planSidecarNetworks(two, [])).toMatchObject({ main: [], reachable: [] });
  });

  it('names that are no sidecar of the task reach nothing', () => {
    expect(planSidecarNetworks(two, ['gamma', 'localhost'])).toMatchObject({ main: [], reachable: [] });
  });

  it('a sidecar joins its own network then its dependencies', () => {
    const plan = planSidecarNetworks([svc('db'), svc('api', 'db', 'db')], []);
    expect(plan.joins.get('db')).toEqual(['db']);
    expect(plan.joins.get('api')).toEqual(['api', 'db']);
  });

  it('reaching a service also reaches what depends on it (it shares that network), and says so', () => {
    const deps = [svc('db'), svc('api', 'db'), svc('other')];
    expect(planSidecarNetworks(deps, ['db']).reachable).toEqual(['api', 'db']);
    expect(planSidecarNetworks(deps, ['api']).reachable).toEqual(['api']);
  });

  it('ignores dependencies on services that are not sidecars (main, dropped ones)', () => {
    expect(planSidecarNetworks([svc('a', 'main', 'gone')], 'all').joins.get('a')).toEqual(['a']);
  });
});
