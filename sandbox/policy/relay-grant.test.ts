import { describe, expect, it } from 'vitest';
import { allowAllPolicy, denyAllPolicy } from './builtins.ts';
import { withRelayGrant } from './relay-grant.ts';
import { PolicySchema } from './schema.ts';

describe('withRelayGrant', () => {
  it('gives a policy without network exactly the relay port on loopback', () => {
    const granted = withRelayGrant(denyAllPolicy(), 7861);
    expect(granted.network).toEqual({ tcp_connect: [{ host: '127.0.0.1', port: 7861 }], tcp_bind: [], allow_all: false });
    expect(PolicySchema.parse(granted)).toEqual(granted);
    expect(denyAllPolicy().network).toBeUndefined();
  });

  it('keeps the entries a policy already has and adds the port once', () => {
    const policy = { ...denyAllPolicy(), network: { tcp_connect: [{ host: 'localhost', port: 8080 }], tcp_bind: [9000], allow_all: false } };
    const once = withRelayGrant(policy, 7861);
    expect(once.network?.tcp_connect).toEqual([{ host: 'localhost', port: 8080 }, { host: '127.0.0.1', port: 7861 }]);
    expect(once.network?.tcp_bind).toEqual([9000]);
    expect(withRelayGrant(once, 7861)).toBe(once);
  });

  it('leaves allow_all alone', () => {
    const all = allowAllPolicy();
    expect(withRelayGrant(all, 7861)).toBe(all);
  });
});
