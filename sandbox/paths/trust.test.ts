import { describe, expect, it } from 'vitest';
import { buildSnapshot, viewSnapshot } from './snapshot.ts';
import type { TreeEntry } from './snapshot.ts';
import { trustSnapshot } from './trust.ts';

const IMAGE: TreeEntry[] = [
  { path: '/usr/bin/dash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/sh', type: 'symlink', link: 'dash' },
  { path: '/bin', type: 'symlink', link: 'usr/bin' },
  { path: '/srv/data/x.csv', type: 'file' },
  { path: '/srv/v1/a', type: 'file' },
  { path: '/srv/v2/a', type: 'file' },
  { path: '/app/data', type: 'symlink', link: '/srv/data' },
  { path: '/app/current', type: 'symlink', link: '../srv/v1' },
  { path: '/app/out.txt', type: 'file' },
  { path: '/etc/shadow', type: 'file', mode: 0o640 },
  { path: '/tmp', type: 'dir' },
];
const baseline = buildSnapshot(IMAGE);

function after(changes: (tree: TreeEntry[]) => TreeEntry[]): ReturnType<typeof trustSnapshot> {
  return trustSnapshot(buildSnapshot(changes(IMAGE.slice())), baseline);
}

describe('trustSnapshot', () => {
  it('trusts the links the baseline has, resolving the same: the snapshot comes back as it is', () => {
    const same = buildSnapshot(IMAGE);
    const t = trustSnapshot(same, baseline);
    expect(t.untrusted.size).toBe(0);
    expect(t.snapshot).toBe(same);
    expect(trustSnapshot(same, baseline)).toBe(t); // cached per (snapshot, baseline)
  });

  it('a link text rewritten to the same place stays trusted', () => {
    expect(after((t) => t.map((e) => (e.path === '/app/current' ? { ...e, link: '/srv/v1' } : e))).untrusted.size).toBe(0);
  });

  it.each<[string, (t: TreeEntry[]) => TreeEntry[], string, RegExp]>([
    ['created at run time', (t) => [...t, { path: '/tmp/e', type: 'symlink', link: '/etc' }], '/tmp/e', /^created at run time$/],
    [
      'a file the image had, replaced by a link',
      (t) => t.map((e) => (e.path === '/app/out.txt' ? { path: e.path, type: 'symlink', link: '/etc/shadow' } : e)),
      '/app/out.txt',
      /in place of a file/,
    ],
    [
      'a link pointed elsewhere',
      (t) => t.map((e) => (e.path === '/app/current' ? { ...e, link: '../srv/v2' } : e)),
      '/app/current',
      /changed at run time \(it resolved to \/srv\/v1 before the first command\)/,
    ],
    [
      'an intermediate link changed, so the same text resolves elsewhere',
      (t) => [...t.filter((e) => !e.path.startsWith('/srv/data')), { path: '/srv/data', type: 'symlink', link: '/etc' }],
      '/app/data',
      /changed at run time/,
    ],
  ])('distrusts %s', (_name, change, path, reason) => {
    const t = after(change);
    expect(t.untrusted.get(path)?.reason).toMatch(reason);
    const entry = t.snapshot.entries.find((e) => e.path === path);
    expect(entry).toEqual({ path, type: 'symlink', mode: 0o777 });
    // Resolution through it dangles; everything else still resolves.
    expect(viewSnapshot(t.snapshot).realpath(path)).toBeUndefined();
    expect(viewSnapshot(t.snapshot).realpath('/bin/sh')).toBe('/usr/bin/dash');
  });

  it('distrusts a link whose recorded target went stale (a patched snapshot that was not re-resolved)', () => {
    const current = buildSnapshot(IMAGE);
    const stale = {
      roots: current.roots,
      entries: [
        ...current.entries.filter((e) => !e.path.startsWith('/srv/data')),
        { path: '/srv/data', type: 'symlink' as const, mode: 0o777, target: '/etc' },
      ],
    };
    // /app/data still says /srv/data, which is now itself a link.
    expect(stale.entries.find((e) => e.path === '/app/data')?.target).toBe('/srv/data');
    const t = trustSnapshot(stale, baseline);
    expect(t.untrusted.get('/app/data')?.reason).toMatch(/became a symlink/);
    expect(t.untrusted.get('/srv/data')?.reason).toMatch(/in place of a directory/);
  });

  it('ignores dangling links: there is nothing to follow', () => {
    expect(after((t) => [...t, { path: '/tmp/gone', type: 'symlink', link: '/nowhere' }]).untrusted.size).toBe(0);
  });
});
