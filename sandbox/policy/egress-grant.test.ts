import { describe, expect, it } from 'vitest';
import { withEgressGrant } from './egress-grant.ts';
import type { Policy } from './schema.ts';

const policy = (network: Policy['network']): Policy => ({ read: [], write: [], execute: [], ...(network === undefined ? {} : { network }) });
const egress = { host: 'authbench-egress', port: 3128, served: ['pypi.org'] };
const proxy = { host: 'authbench-egress', port: 3128 };

describe('withEgressGrant', () => {
  it('a policy naming a served host gets the proxy port, once', () => {
    const granted = withEgressGrant(policy({ tcp_connect: [{ host: 'PyPI.org', port: 443 }], tcp_bind: [], allow_all: false }), egress);
    expect(granted.network?.tcp_connect).toEqual([{ host: 'PyPI.org', port: 443 }, proxy]);
    expect(withEgressGrant(granted, egress)).toBe(granted);
  });

  it.each<[string, Policy['network']]>([
    ['no network section', undefined],
    ['allow_all', { tcp_connect: [], tcp_bind: [], allow_all: true }],
    ['only hosts the proxy does not serve', { tcp_connect: [{ host: 'evil.example', port: 443 }, { host: 'metadata-mock', port: 8080 }], tcp_bind: [], allow_all: false }],
  ])('%s: unchanged', (_name, network) => {
    const p = policy(network);
    expect(withEgressGrant(p, egress)).toBe(p);
  });
});
