import { describe, expect, it } from 'vitest';
import { canonicalizeExecutable, canonicalizeExecutables } from './executable.ts';
import { buildSnapshot } from './snapshot.ts';

const snap = buildSnapshot([
  { path: '/usr/bin/dash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/sh', type: 'symlink', link: 'dash' },
  { path: '/bin', type: 'symlink', link: 'usr/bin' },
  { path: '/usr/local/bin/tool', type: 'file', mode: 0o755 },
]);

describe('canonicalizeExecutable', () => {
  const table: Record<string, string> = { '/bin/sh': '/usr/bin/dash', '/bin': '/usr/bin', '/usr/bin/sh': '/usr/bin/dash' };
  const resolve = (p: string): Promise<string | undefined> => Promise.resolve(table[p]);

  it.each([
    ['/bin/sh', '/usr/bin/dash'],
    ['/bin//sh', '/usr/bin/dash'],
    ['/bin/*', '/usr/bin/*'],
    ['/bin/**', '/usr/bin/**'],
    ['/opt/missing', '/opt/missing'],
    ['/usr/local/bin/*', '/usr/local/bin/*'],
  ])('%s -> %s', async (path, want) => expect(await canonicalizeExecutable(path, resolve)).toBe(want));
});

describe('canonicalizeExecutables (snapshot batch)', () => {
  it('agrees with the image realpath and keeps order', () => {
    expect(canonicalizeExecutables(['/bin/sh', '/usr/bin/dash', '/bin/d*', '/nope', '/usr/local/bin/tool'], snap)).toEqual([
      '/usr/bin/dash',
      '/usr/bin/dash',
      '/usr/bin/d*',
      '/nope',
      '/usr/local/bin/tool',
    ]);
  });
});
