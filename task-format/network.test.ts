import { describe, expect, it } from 'vitest';
import { declaredSidecarCeiling, resolveNetworkDeclaration } from './network.ts';
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
    expect(resolve({ allowed_hosts: ['leak-sink'] }).declaration).toEqual({ mode: 'allowlist', hosts: ['leak-sink'] });
  });

  it('a host outside the task is refused, naming the file and the field', () => {
    const r = resolve({ network_mode: 'allowlist', allowed_hosts: ['metadata-mock', 'pypi.org'] });
    expect(r.problems).toEqual([
      { file: F, field: 'environment.allowed_hosts[1]', severity: 'error', message: expect.stringMatching(/^pypi\.org is not a compose service of the task/) as unknown },
    ]);
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
