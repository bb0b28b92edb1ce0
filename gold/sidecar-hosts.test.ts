import { describe, expect, it } from 'vitest';
import { PolicySchema } from '../sandbox/policy/index.ts';
import { buildGold, goldPolicy } from './build.ts';
import { deriveGold } from './derive.ts';
import { nameSidecarEndpoints } from './sidecar-hosts.ts';
import { contextFor, netEv } from './test-support.ts';

const provenance = { image_digest: 'sha256:1', solve_sh_sha256: 'abc' };
const hosts = new Map([
  ['172.20.0.2', 'metadata-mock'],
  ['172.21.0.2', 'leak-sink'],
]);

describe('nameSidecarEndpoints', () => {
  const derived = deriveGold(
    [
      netEv('socket'),
      netEv('connect', { address: '172.20.0.2', port: 8081 }),
      netEv('connect', { address: '172.20.0.2', port: 8081 }),
      netEv('connect', { address: '127.0.0.1', port: 5432 }),
      netEv('connect', { address: '10.9.9.9', port: 443 }),
    ],
    contextFor(),
  );

  it('names a sidecar address by its service and keeps other endpoints as they are', () => {
    const named = nameSidecarEndpoints(derived.network, hosts);
    expect(named.connect.map((e) => `${e.address}:${String(e.port)}`)).toEqual(['10.9.9.9:443', '127.0.0.1:5432', 'metadata-mock:8081']);
  });

  it('is stable across rollouts whose sidecars got other addresses', () => {
    const again = deriveGold([netEv('socket'), netEv('connect', { address: '172.30.0.7', port: 8081 })], contextFor());
    const a = nameSidecarEndpoints(again.network, new Map([['172.30.0.7', 'metadata-mock']]));
    expect(a.connect).toEqual(nameSidecarEndpoints(derived.network, hosts).connect.filter((e) => e.address === 'metadata-mock'));
  });

  it('changes nothing without sidecars', () => {
    expect(nameSidecarEndpoints(derived.network, new Map())).toBe(derived.network);
  });

  it('the gold policy grants the sidecar by name (a valid policy), loopback as before, and drops other addresses', () => {
    const gold = buildGold({ ...derived, network: nameSidecarEndpoints(derived.network, hosts) }, { taskId: 't', provenance });
    const policy = goldPolicy(gold);
    expect(PolicySchema.safeParse(policy).error).toBeUndefined();
    expect(policy.network?.tcp_connect).toEqual([
      { host: '127.0.0.1', port: 5432 },
      { host: 'metadata-mock', port: 8081 },
    ]);
  });
});
