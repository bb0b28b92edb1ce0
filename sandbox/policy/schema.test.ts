import { describe, expect, it } from 'vitest';
import { isServiceHost, NetworkSectionSchema, PolicySchema, policySidecarHosts } from './schema.ts';

const withConnect = (host: string) => ({ read: [], write: [], execute: [], network: { tcp_connect: [{ host, port: 8081 }] } });

describe('network hosts', () => {
  it.each([
    ['metadata-mock', true],
    ['leak_sink', true],
    ['svc.internal', true],
    ['localhost', true],
    ['127.0.0.1', true],
    ['::1', true],
    ['10.0.0.1', false],
    ['172.18.0.2', false],
    ['fe80::1', false],
    ['-bad', false],
    ['a b', false],
    ['', false],
  ])('%s accepted: %s', (host, ok) => {
    expect(PolicySchema.safeParse(withConnect(host)).success).toBe(ok);
  });

  it('tells service names from loopback and addresses', () => {
    expect(isServiceHost('metadata-mock')).toBe(true);
    expect(isServiceHost('localhost')).toBe(false);
    expect(isServiceHost('127.0.0.1')).toBe(false);
    expect(isServiceHost('10.1.2.3')).toBe(false);
  });

  it('keeps AuthBench policies (no network section) parsing unchanged', () => {
    expect(PolicySchema.parse({ read: ['/a'], write: [], execute: [] })).toEqual({ read: ['/a'], write: [], execute: [] });
  });
});

describe('policySidecarHosts', () => {
  const section = (v: unknown) => NetworkSectionSchema.parse(v);
  it('no section: no sidecar', () => expect(policySidecarHosts(undefined)).toEqual([]));
  it('allow_all: every sidecar', () => expect(policySidecarHosts(section({ allow_all: true, tcp_connect: [{ host: 'a', port: 1 }] }))).toBe('all'));
  it('named services only, deduplicated and sorted; loopback is not a sidecar', () => {
    const s = section({ tcp_connect: [{ host: 'zeta', port: 80 }, { host: 'localhost', port: 80 }, { host: 'alpha', port: 81 }, { host: 'zeta', port: 82 }] });
    expect(policySidecarHosts(s)).toEqual(['alpha', 'zeta']);
  });
});
