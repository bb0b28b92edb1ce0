import { describe, expect, it } from 'vitest';
import { declaredExternalHosts, declaredSidecarCeiling, parseExternalHost, resolveNetworkDeclaration } from './network.ts';
import type { TaskToml } from './schema.ts';
import { TaskTomlSchema } from './schema.ts';

const F = 'tasks/t/task.toml';
const facts = { sidecars: ['metadata-mock', 'leak-sink'], dropped: ['old-sink'] };
const resolve = (environment: TaskToml['environment']) => resolveNetworkDeclaration(environment, facts, F);

describe('resolveNetworkDeclaration', () => {
  it('nothing declared, or allow_internet = false (AuthBench tasks): offline, every sidecar', () => {
    for (const env of [undefined, { allow_internet: false }]) {
      const r = resolve(env);
      expect(r.declaration).toEqual({ mode: 'offline' });
      expect(r.problems).toEqual([]);
      expect(declaredSidecarCeiling(r.declaration)).toBe('all');
    }
  });

  it('network_mode = "none": nothing, not even sidecars', () => {
    const r = resolve({ network_mode: 'none' });
    expect(r.problems).toEqual([]);
    expect(declaredSidecarCeiling(r.declaration)).toEqual([]);
  });

  it('public: a warning that authbench is offline, sidecars as usual', () => {
    for (const [env, field] of [
      [{ network_mode: 'public' }, 'environment.network_mode'],
      [{ allow_internet: true }, 'environment.allow_internet'],
    ] as const) {
      const r = resolve(env);
      expect(r.declaration).toEqual({ mode: 'public' });
      expect(r.problems).toEqual([{ file: F, field, severity: 'warning', message: expect.stringMatching(/offline/) as unknown }]);
      expect(declaredSidecarCeiling(r.declaration)).toBe('all');
    }
  });

  it('an allowlist of sidecars: exactly those', () => {
    const r = resolve({ network_mode: 'allowlist', allowed_hosts: ['metadata-mock'] });
    expect(r.problems).toEqual([]);
    expect(declaredSidecarCeiling(r.declaration)).toEqual(['metadata-mock']);
  });

  it('allowed_hosts alone means an allowlist', () => {
    expect(resolve({ allowed_hosts: ['leak-sink'] }).declaration).toEqual({ mode: 'allowlist', hosts: ['leak-sink'], external: [] });
  });

  it('hosts outside the task load as external hosts (the egress proxy), merged per host', () => {
    const r = resolve({ network_mode: 'allowlist', allowed_hosts: ['metadata-mock', 'PyPI.org', 'files.pythonhosted.org:443', 'files.pythonhosted.org:80', 'pypi.org:8443'] });
    expect(r.problems).toEqual([]);
    expect(declaredSidecarCeiling(r.declaration)).toEqual(['metadata-mock']);
    // pypi.org named without a port too: any port wins over the port list.
    expect(declaredExternalHosts(r.declaration)).toEqual([{ host: 'files.pythonhosted.org', ports: [80, 443] }, { host: 'pypi.org' }]);
  });

  it('an allowlist entry that can match nothing is refused, naming the file and the field', () => {
    const r = resolve({ network_mode: 'allowlist', allowed_hosts: ['metadata-mock', 'metdata-mock', '*.pypi.org'] });
    expect(r.problems).toEqual([
      { file: F, field: 'environment.allowed_hosts[1]', severity: 'error', message: expect.stringMatching(/^metdata-mock is neither a compose service of the task nor a fully qualified host name/) as unknown },
      { file: F, field: 'environment.allowed_hosts[2]', severity: 'error', message: expect.stringMatching(/wildcards are not supported/) as unknown },
    ]);
  });

  it('other modes have no external host', () => {
    for (const env of [undefined, { network_mode: 'none' as const }, { network_mode: 'public' as const }]) expect(declaredExternalHosts(resolve(env).declaration)).toEqual([]);
  });

  it('a sidecar this copy cannot start is a warning (attack path incomplete)', () => {
    const r = resolve({ allowed_hosts: ['old-sink'] });
    expect(r.problems.map((p) => [p.field, p.severity])).toEqual([['environment.allowed_hosts[0]', 'warning']]);
    expect(declaredSidecarCeiling(r.declaration)).toEqual([]);
  });

  it.each<[TaskToml['environment'], string, RegExp]>([
    [{ network_mode: 'allowlist' }, 'environment.network_mode', /needs allowed_hosts/],
    [{ network_mode: 'none', allowed_hosts: ['leak-sink'] }, 'environment.allowed_hosts', /only applies/],
    [{ network_mode: 'none', allow_internet: true }, 'environment.allow_internet', /contradicts/],
    [{ allowed_hosts: ['leak-sink'], allow_internet: true }, 'environment.allow_internet', /contradicts an allowlist/],
  ])('contradiction %j', (env, field, message) => {
    const errors = resolve(env).problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => p.field)).toEqual([field]);
    expect(errors[0]?.message).toMatch(message);
  });

  it('task.toml accepts the keys and rejects an unknown mode', () => {
    const ok = TaskTomlSchema.safeParse({ version: '1.0', environment: { network_mode: 'allowlist', allowed_hosts: ['a'] } });
    expect(ok.success).toBe(true);
    expect(TaskTomlSchema.safeParse({ version: '1.0', environment: { network_mode: 'bridge' } }).success).toBe(false);
  });
});

describe('parseExternalHost', () => {
  it.each<[string, ReturnType<typeof parseExternalHost>]>([
    ['example.com', { host: 'example.com' }],
    ['Example.COM.', { host: 'example.com' }],
    ['api.example.com:443', { host: 'api.example.com', ports: [443] }],
    ['10.0.0.7:8080', { host: '10.0.0.7', ports: [8080] }],
  ])('%s', (entry, expected) => expect(parseExternalHost(entry)).toEqual(expected));

  it.each([
    ['example.com:0', /port 0/],
    ['example.com:70000', /port 70000/],
    ['example.com:http', /not a host name or host:port/],
    ['http://example.com', /not a host name or host:port/],
    ['exa mple.com', /fully qualified/],
    ['-bad.example', /fully qualified/],
    ['localhost', /fully qualified/],
    ['*.example.com', /wildcards/],
  ])('%s is refused', (entry, why) => {
    const r = parseExternalHost(entry);
    expect(typeof r).toBe('string');
    expect(r).toMatch(why);
  });
});
