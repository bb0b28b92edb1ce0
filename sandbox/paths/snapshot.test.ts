import { describe, expect, it } from 'vitest';
import { compareStrings } from '../../core/index.ts';
import { covers } from './patterns.ts';
import { buildSnapshot, expandPattern, FsSnapshotSchema, parseSnapshot, resolveLinks, selectEntries, SELECTIONS_KEPT_MAX, snapshotCommand, viewSnapshot } from './snapshot.ts';

// Literal output of snapshotCommand(['/']) on a small merged-/usr tree (GNU find 4.9).
const FIND_OUTPUT = [
  'd 755 /',
  'd 755 /app',
  'l 777 /app/dangling', '/nowhere',
  'd 755 /app/sub',
  'f 644 /app/a.txt',
  'f 644 /app/sub/line\nbreak.txt',
  'd 755 /usr',
  'd 755 /usr/bin',
  'f 4755 /usr/bin/dash',
  'l 777 /usr/bin/sh', 'dash',
  'l 777 /usr/bin/rsh', '../bin/sh',
  'l 777 /bin', 'usr/bin',
  'l 777 /app/tools', '/bin',
  'd 755 /dev',
  'c 666 /dev/null',
  '',
].join('\0');

describe('snapshotCommand', () => {
  it('is a pure find argv with NUL-separated records', () => {
    expect(snapshotCommand(['/', '/dev/'])).toEqual([
      'find', '/', '/dev', '-xdev', '(', '-type', 'l', '-printf', 'l %m %p\\0%l\\0', ')', '-o', '-printf', '%y %m %p\\0',
    ]);
  });
  it('refuses relative or no roots', () => {
    expect(() => snapshotCommand([])).toThrow(/at least one root/);
    expect(() => snapshotCommand(['app'])).toThrow(/not absolute/);
  });
});

describe('parseSnapshot', () => {
  const snap = parseSnapshot(FIND_OUTPUT);
  const byPath = new Map(snap.entries.map((e) => [e.path, e]));

  it('reads types, octal modes and paths with odd characters', () => {
    expect(FsSnapshotSchema.parse(snap)).toEqual(snap);
    expect(byPath.get('/usr/bin/dash')).toEqual({ path: '/usr/bin/dash', type: 'file', mode: 0o4755 });
    expect(byPath.get('/app/sub')?.type).toBe('dir');
    expect(byPath.get('/dev/null')?.type).toBe('other');
    expect(byPath.has('/app/sub/line\nbreak.txt')).toBe(true);
  });

  it('resolves symlink targets to realpaths: relative, chained, through linked directories', () => {
    expect(byPath.get('/usr/bin/sh')?.target).toBe('/usr/bin/dash');
    expect(byPath.get('/usr/bin/rsh')?.target).toBe('/usr/bin/dash');
    expect(byPath.get('/bin')?.target).toBe('/usr/bin');
    expect(byPath.get('/app/tools')?.target).toBe('/usr/bin');
  });

  it('keeps the link text the targets were resolved from', () => {
    expect(byPath.get('/usr/bin/rsh')).toEqual({ path: '/usr/bin/rsh', type: 'symlink', mode: 0o777, link: '../bin/sh', target: '/usr/bin/dash' });
    expect(byPath.get('/app/dangling')?.link).toBe('/nowhere');
  });

  it('leaves dangling links without a target', () => {
    expect(byPath.get('/app/dangling')?.type).toBe('symlink');
    expect(byPath.get('/app/dangling')?.target).toBeUndefined();
  });

  it('infers roots, or takes them as given', () => {
    expect(snap.roots).toEqual(['/']);
    expect(parseSnapshot('d 755 /app\0f 644 /app/x\0d 755 /etc\0').roots).toEqual(['/app', '/etc']);
    expect(parseSnapshot('d 755 /app\0', ['/app/']).roots).toEqual(['/app']);
  });

  it('rejects garbage', () => {
    expect(() => parseSnapshot('hello world\0')).toThrow(/unparseable/);
  });
});

describe('viewSnapshot', () => {
  const view = viewSnapshot(parseSnapshot(FIND_OUTPUT));
  it.each([
    ['/bin/sh', '/usr/bin/dash'],
    ['/app/tools/rsh', '/usr/bin/dash'],
    ['/app/a.txt', '/app/a.txt'],
    ['/app/missing', undefined],
    ['/app/dangling', undefined],
    ['/', '/'],
  ])('realpath(%s) = %s', (path, want) => expect(view.realpath(path)).toBe(want));

  it('lists descendants lexically, without siblings sharing a prefix', () => {
    const snap = buildSnapshot([{ path: '/app/x', type: 'file' }, { path: '/apple', type: 'file' }, { path: '/app/d/y', type: 'file' }]);
    expect(viewSnapshot(snap).descendants('/app').map((e) => e.path)).toEqual(['/app/d', '/app/d/y', '/app/x']);
  });

  it('knows which paths are inside its roots', () => {
    const v = viewSnapshot(buildSnapshot([{ path: '/app/x', type: 'file' }], ['/app']));
    expect(v.known('/app/y')).toBe(true);
    expect(v.known('/etc/passwd')).toBe(false);
    expect(v.realpath('/app/x')).toBe('/app/x');
  });
});

describe('expandPattern', () => {
  const snap = parseSnapshot(FIND_OUTPUT);
  it.each([
    ['/app/*.txt', ['/app/a.txt']],
    ['/app/*', ['/app/a.txt', '/app/dangling', '/app/sub', '/app/tools']],
    ['/app/sub/**', ['/app/sub', '/app/sub/line\nbreak.txt']],
    ['/usr/bin/?ash', ['/usr/bin/dash']],
    ['/bin/*', []], // lexical: the tree behind a symlinked directory is not searched
    ['/nope/*', []],
  ])('%s', (pattern, want) => expect(expandPattern(pattern, snap).map((e) => e.path)).toEqual(want));

  it('expands a static base with /** and a glob by depth (the fast paths) exactly as matching every entry would', () => {
    const tree = buildSnapshot([
      { path: '/app/sub/deep/x', type: 'file' },
      { path: '/app/sub2/y', type: 'file' },
      { path: '/app/subx', type: 'file' },
      { path: '/app/link', type: 'symlink', link: '/etc' },
      { path: '/etc/passwd', type: 'file' },
      // Sorts between /app/sub and what is below it.
      { path: '/app/sub-a/z', type: 'file' },
    ]);
    // Entries whose parent is not listed (below a mount point the listing did not enter, patched in from a trace).
    const orphans = { roots: tree.roots, entries: [...tree.entries, { path: '/mnt/x/y', type: 'file' as const, mode: 0o644 }].sort((a, b) => compareStrings(a.path, b.path)) };
    const patterns = ['/**', '/app/**', '/app/sub/**', '/app/sub/deep/x/**', '/nope/**', '/app/link/**', '/app/sub*', '/app/*/deep', '/app/s?b/**', '/*', '/app/sub*/*/x', '/app/sub', '/app', '/', '/app/sub/deep/x', '/app/*/*/x', '/*/*', '/app/link', '/app/link/*'];
    // A glob before the `/**`, at every depth.
    patterns.push('/*/**', '/app/sub*/**', '/app/*/deep/**', '/*/sub*/**', '/a?p/*/**', '/mnt/*/**', '/*/x/**', '/app/[a-s]ub/**');
    for (const snapshot of [tree, orphans]) {
      for (const pattern of patterns) {
        const naive = snapshot.entries.filter((e) => covers(pattern, e.path)).map((e) => e.path);
        expect(expandPattern(pattern, snapshot).map((e) => e.path), pattern).toEqual(naive);
      }
    }
    expect(expandPattern('/mnt/*/**', orphans).map((e) => e.path)).toEqual(['/mnt/x/y']);
    expect(expandPattern('/app/sub/**', tree).map((e) => e.path)).toEqual(['/app/sub', '/app/sub/deep', '/app/sub/deep/x']);
  });
});

describe('buildSnapshot', () => {
  it('implies ancestors and resolves links like a real listing', () => {
    const snap = buildSnapshot([{ path: '/a/b/c', type: 'file' }, { path: '/l', type: 'symlink', link: 'a/b' }]);
    expect(snap.entries.map((e) => e.path)).toEqual(['/', '/a', '/a/b', '/a/b/c', '/l']);
    expect(viewSnapshot(snap).realpath('/l/c')).toBe('/a/b/c');
  });
});

describe('resolveLinks', () => {
  const snap = parseSnapshot(FIND_OUTPUT);

  it('resolves every link again from its text, as a fresh listing of the changed tree would', () => {
    // /usr/bin/dash replaced by a directory, /usr/bin/sh still says "dash": it now leads there, and rsh through it.
    const changed = snap.entries.map((e) => (e.path === '/usr/bin/dash' ? { path: e.path, type: 'dir' as const, mode: 0o755 } : e));
    const again = new Map(resolveLinks(changed).map((e) => [e.path, e]));
    expect(again.get('/usr/bin/sh')?.target).toBe('/usr/bin/dash');
    // Removed: every link through it dangles.
    const removed = new Map(resolveLinks(snap.entries.filter((e) => e.path !== '/usr/bin/dash')).map((e) => [e.path, e]));
    expect(removed.get('/usr/bin/sh')?.target).toBeUndefined();
    expect(removed.get('/usr/bin/rsh')?.target).toBeUndefined();
    expect(removed.get('/bin')?.target).toBe('/usr/bin');
  });

  it('keeps unchanged entries as they are, and falls back to the last target when the text is unknown', () => {
    const same = resolveLinks(snap.entries);
    expect(same.every((e, i) => e === snap.entries[i])).toBe(true);
    const noText = [
      { path: '/', type: 'dir' as const, mode: 0o755 },
      { path: '/d', type: 'dir' as const, mode: 0o755 },
      { path: '/l', type: 'symlink' as const, mode: 0o777, target: '/d' },
    ];
    expect(resolveLinks(noText)[2]?.target).toBe('/d');
    expect(resolveLinks(noText.filter((e) => e.path !== '/d'))[1]?.target).toBeUndefined();
  });
});

describe('selectEntries', () => {
  it('remembers a selection per snapshot and key, up to a bound', () => {
    const snap = buildSnapshot([{ path: '/a/x', type: 'file' }]);
    let computed = 0;
    const select = (key: string): readonly unknown[] =>
      selectEntries(snap, key, () => true, () => {
        computed++;
        return [...snap.entries];
      });
    const first = select('k0');
    expect(select('k0')).toBe(first);
    expect(computed).toBe(1);
    for (let i = 1; i < SELECTIONS_KEPT_MAX; i++) select(`k${i}`);
    expect(computed).toBe(SELECTIONS_KEPT_MAX);
    // Past the bound: computed each time, never kept.
    select('one-more');
    select('one-more');
    expect(computed).toBe(SELECTIONS_KEPT_MAX + 2);
    expect(select('k0')).toBe(first);
  });
});

