import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/index.ts';
import { compilePolicy } from '../compile/index.ts';
import { buildSnapshot, viewSnapshot, type FsSnapshot, type TreeEntry } from '../paths/index.ts';
import { parseStrace, type TraceEvent } from '../trace/index.ts';
import { applyFileEvents } from './patch.ts';

const TREE: TreeEntry[] = [
  { path: '/app', type: 'dir' },
  { path: '/app/a.txt', type: 'file' },
  { path: '/app/sub', type: 'dir' },
  { path: '/app/sub/x', type: 'file' },
  { path: '/data', type: 'dir' },
  { path: '/app/link', type: 'symlink', link: '/data' },
];
const base = buildSnapshot(TREE);

function events(lines: string): TraceEvent[] {
  return parseStrace(lines, { cwd: '/app' });
}

const paths = (s: ReturnType<typeof applyFileEvents>): string[] => s.entries.map((e) => e.path);

describe('applyFileEvents', () => {
  it('adds created files and directories and drops removed ones', () => {
    const ev = events(
      [
        '100 1.0 openat(AT_FDCWD</app>, "new.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</app/new.txt>',
        '100 1.1 mkdir("/app/out", 0755) = 0',
        '100 1.2 unlink("/app/a.txt") = 0',
        '100 1.3 unlink("/app/missing") = -1 ENOENT (No such file or directory)',
      ].join('\n'),
    );
    const after = applyFileEvents(base, ev);
    expect(paths(after)).toContain('/app/new.txt');
    expect(paths(after)).toContain('/app/out');
    expect(after.entries.find((e) => e.path === '/app/out')?.type).toBe('dir');
    expect(paths(after)).not.toContain('/app/a.txt');
    expect(paths(after)).not.toContain('/app/missing');
  });

  it('moves a renamed directory with everything below it', () => {
    const after = applyFileEvents(base, events('100 1.0 rename("/app/sub", "/app/moved") = 0'));
    expect(paths(after)).toEqual(expect.arrayContaining(['/app/moved', '/app/moved/x']));
    expect(paths(after)).not.toContain('/app/sub/x');
  });

  it('places entries created through a symlinked directory where the kernel put them', () => {
    const after = applyFileEvents(base, events('100 1.0 openat(AT_FDCWD</app>, "/app/link/f", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3</data/f>'));
    expect(paths(after)).toContain('/data/f');
    expect(viewSnapshot(after).realpath('/app/link/f')).toBe('/data/f');
  });

  it('records new symlinks with their resolved target', () => {
    const after = applyFileEvents(base, events('100 1.0 symlink("/app/sub/x", "/app/lx") = 0'));
    expect(after.entries.find((e) => e.path === '/app/lx')).toMatchObject({ type: 'symlink', target: '/app/sub/x' });
  });

  it('gives a new symlink the target a fresh listing of the same tree gives it', () => {
    const after = applyFileEvents(
      base,
      events(
        [
          '100 1.0 symlink("sub/x", "/app/rel") = 0',
          '100 1.1 symlink("/app/sub", "/app/abs") = 0',
          // Through the symlinked directory: the kernel puts it in /data, and "x" is relative to /data.
          '100 1.2 openat(AT_FDCWD</app>, "/app/link/x", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3</data/x>',
          '100 1.3 symlink("x", "/app/link/lx") = 0',
          '100 1.4 symlink("/etc", "/app/link/e") = 0',
          // Created before its target exists: a listing made afterwards resolves it.
          '100 1.5 symlink("later", "/app/early") = 0',
          '100 1.6 mkdir("/app/later", 0755) = 0',
        ].join('\n'),
      ),
    );
    const fresh = buildSnapshot([
      ...TREE,
      { path: '/app/rel', type: 'symlink', link: 'sub/x' },
      { path: '/app/abs', type: 'symlink', link: '/app/sub' },
      { path: '/data/x', type: 'file' },
      { path: '/data/lx', type: 'symlink', link: 'x' },
      { path: '/data/e', type: 'symlink', link: '/etc' },
      { path: '/app/early', type: 'symlink', link: 'later' },
      { path: '/app/later', type: 'dir' },
    ]);
    const targets = (s: FsSnapshot): [string, string | undefined][] => s.entries.filter((e) => e.type === 'symlink').map((e) => [e.path, e.target]);
    expect(targets(after)).toEqual(targets(fresh));
    expect(targets(after)).toContainEqual(['/app/early', '/app/later']);
  });

  it('places many new files and the links and directories between them as a fresh listing of the same tree has them', () => {
    // New files leave the view events are placed through as it was; links and directories renew it.
    const lines: string[] = [];
    const tree: TreeEntry[] = [...TREE];
    for (let i = 0; i < 40; i++) {
      lines.push(`100 ${i}.0 openat(AT_FDCWD</app>, "/app/link/f${i}", O_WRONLY|O_CREAT, 0644) = 3</data/f${i}>`);
      tree.push({ path: `/data/f${i}`, type: 'file' });
      if (i % 10 === 3) {
        lines.push(`100 ${i}.1 symlink("f${i}", "/app/link/l${i}") = 0`);
        tree.push({ path: `/data/l${i}`, type: 'symlink', link: `f${i}` });
        lines.push(`100 ${i}.2 mkdir("/app/link/d${i}", 0755) = 0`);
        tree.push({ path: `/data/d${i}`, type: 'dir' });
        lines.push(`100 ${i}.3 symlink("/data/d${i}", "/app/to${i}") = 0`);
        tree.push({ path: `/app/to${i}`, type: 'symlink', link: `/data/d${i}` });
        lines.push(`100 ${i}.4 openat(AT_FDCWD</app>, "/app/to${i}/inner", O_WRONLY|O_CREAT, 0644) = 3</data/d${i}/inner>`);
        tree.push({ path: `/data/d${i}/inner`, type: 'file' });
      }
    }
    // A link made before its target, which a later plain file creates.
    lines.push('100 99.0 symlink("late.txt", "/app/dangling") = 0', '100 99.1 openat(AT_FDCWD</app>, "late.txt", O_WRONLY|O_CREAT, 0644) = 3</app/late.txt>');
    tree.push({ path: '/app/dangling', type: 'symlink', link: 'late.txt' }, { path: '/app/late.txt', type: 'file' });
    const after = applyFileEvents(base, events(lines.join('\n')));
    const shape = (snap: FsSnapshot): string[] => snap.entries.map((e) => `${e.path} ${e.type} ${e.target ?? ''}`);
    expect(shape(after)).toEqual(shape(buildSnapshot(tree)));
    expect(after.entries.find((e) => e.path === '/app/dangling')?.target).toBe('/app/late.txt');
  });

  it('resolves existing links again when what they lead through changes', () => {
    // /data (where /app/link leads) is removed and replaced by a link to /etc: /app/link now leads to /etc.
    const after = applyFileEvents(base, events(['100 1.0 rmdir("/data") = 0', '100 1.1 symlink("/etc", "/data") = 0'].join('\n')));
    const withEtc = applyFileEvents(buildSnapshot([...TREE, { path: '/etc', type: 'dir' }]), events(['100 1.0 rmdir("/data") = 0', '100 1.1 symlink("/etc", "/data") = 0'].join('\n')));
    expect(after.entries.find((e) => e.path === '/app/link')?.target).toBeUndefined(); // /etc is not in this tree
    expect(withEtc.entries.find((e) => e.path === '/app/link')?.target).toBe('/etc');
    expect(viewSnapshot(withEtc).realpath('/app/link')).toBe('/etc');
  });

  it('records a link whose text the trace cannot pin down as unresolved, never guessed', () => {
    // Made through /app/link (-> /data): "../sub" read relative to /data is /sub, read as the trace has it /app/sub.
    const tree = buildSnapshot([...TREE, { path: '/sub', type: 'dir' }]);
    const after = applyFileEvents(tree, events('100 1.0 symlink("../sub", "/app/link/s") = 0'));
    expect(after.entries.find((e) => e.path === '/data/s')).toEqual({ path: '/data/s', type: 'symlink', mode: 0o777 });
  });

  it('a hard link to a symlink is the same link in another place', () => {
    const after = applyFileEvents(base, events('100 1.0 link("/app/link", "/app/sub/link2") = 0'));
    expect(after.entries.find((e) => e.path === '/app/sub/link2')).toMatchObject({ type: 'symlink', link: '/data', target: '/data' });
  });

  it('returns the same snapshot when nothing changed the tree', () => {
    const ev = events('100 1.0 openat(AT_FDCWD</app>, "a.txt", O_RDONLY) = 3</app/a.txt>');
    expect(applyFileEvents(base, ev)).toBe(base);
  });
});

describe('a session snapshot patched from traces, compiled against its baseline', () => {
  // The container as listed before the first command.
  const baseline = buildSnapshot([
    { path: '/tmp', type: 'dir' },
    { path: '/etc/shadow', type: 'file', mode: 0o640 },
    { path: '/etc/passwd', type: 'file' },
    { path: '/app/out.txt', type: 'file' },
    { path: '/app/data', type: 'symlink', link: '/srv/data' },
    { path: '/srv/data/a.csv', type: 'file' },
    { path: '/opt/authbench/bin/ab-launch', type: 'file', mode: 0o755 },
  ]);
  const implicit = { read: [], write: [], execute: [] };
  const compile = (snapshot: FsSnapshot, write: string[]): ReturnType<typeof compilePolicy> =>
    compilePolicy({ read: ['/app/**'], write, execute: [] }, snapshot, { implicit, abi: 7, baseline });
  const granted = (out: ReturnType<typeof compilePolicy>): string[] => out.rules.fs.map((r) => r.path);

  it('ln -s /etc /tmp/e under write /tmp/**: the next compile grants nothing on /etc, and says why', () => {
    const after = applyFileEvents(baseline, parseStrace('200 2.0 symlink("/etc", "/tmp/e") = 0', { cwd: '/tmp' }));
    expect(after.entries.find((e) => e.path === '/tmp/e')).toMatchObject({ type: 'symlink', target: '/etc' });
    const out = compile(after, ['/tmp/**']);
    expect(granted(out)).toEqual(['/app', '/srv/data', '/tmp']);
    expect(out.fidelity.entries.some((e) => e.granted.some((g) => g.path.startsWith('/etc')))).toBe(false);
    const why = out.fidelity.entries.filter((e) => e.entry === '/tmp/**' && e.kind === 'narrowed' && e.note.includes('/tmp/e'));
    expect(why.map((e) => e.note)).toEqual(['/tmp/e -> /etc is a symlink created at run time: not followed, its target is not granted']);
    // Without the baseline the compiler follows it, as it always did (gold derivation, scoring).
    const untrusting = compilePolicy({ read: [], write: ['/tmp/**'], execute: [] }, after, { implicit, abi: 7 });
    expect(granted(untrusting)).toContain('/etc');
  });

  it('a file the policy names, replaced by a link to /etc/shadow: no write rule on /etc/shadow, the link itself stays removable', () => {
    const after = applyFileEvents(
      baseline,
      parseStrace(['300 3.0 unlink("/app/out.txt") = 0', '300 3.1 symlink("/etc/shadow", "/app/out.txt") = 0'].join('\n'), { cwd: '/app' }),
    );
    const out = compile(after, ['/app/out.txt']);
    expect(granted(out)).not.toContain('/etc/shadow');
    expect(out.rules.fs.find((r) => r.path === '/app')?.access).toContain('remove_file');
    const facets = out.fidelity.entries.filter((e) => e.entry === '/app/out.txt');
    expect(facets.map((e) => e.kind)).toEqual(['narrowed', 'widened']);
    expect(facets[0]?.note).toBe('/app/out.txt -> /etc/shadow is a symlink created at run time in place of a file: not followed');
  });

  it('a link to the harness made at run time is not followed either', () => {
    const after = applyFileEvents(baseline, parseStrace('400 4.0 symlink("/opt/authbench", "/tmp/h") = 0', { cwd: '/tmp' }));
    const out = compile(after, ['/tmp/**', '/tmp/h/bin/**']);
    expect(granted(out).some((p) => p.startsWith('/opt'))).toBe(false);
    expect(out.fidelity.entries.find((e) => e.entry === '/tmp/h/bin/**')).toMatchObject({ kind: 'narrowed', granted: [] });
    expect(out.fidelity.entries.find((e) => e.entry === '/tmp/h/bin/**')?.note).toMatch(/^\/tmp\/h -> \/opt\/authbench is a symlink created at run time: not followed/);
  });

  it('the image\'s own links are still followed after unrelated changes', () => {
    const after = applyFileEvents(baseline, parseStrace('500 5.0 mkdir("/tmp/work", 0755) = 0', { cwd: '/tmp' }));
    const out = compile(after, ['/tmp/**']);
    expect(granted(out)).toContain('/srv/data');
    expect(out.fidelity.entries.filter((e) => e.entry === '/app/**')).toEqual([
      { axis: 'read', source: 'policy', entry: '/app/**', kind: 'exact', granted: [{ path: '/app', access: ['read_file', 'read_dir'] }], note: '' },
      {
        axis: 'read',
        source: 'policy',
        entry: '/app/**',
        kind: 'widened',
        granted: [{ path: '/srv/data', access: ['read_file', 'read_dir'] }],
        note: '/app/data -> /srv/data leads outside /app/**: read_file, read_dir on /srv/data, reachable by its own path too',
      },
    ]);
    expect(out.fidelity.entries.filter((e) => e.kind === 'narrowed' && e.note.includes('run time'))).toEqual([]);
  });
});

describe('applyFileEvents resolving only the links a change can move', () => {
  // Small name spaces, so random trees and commands collide: links into links, dangling links
  // that later resolve, files replaced by links, directories renamed under links.
  const NAMES = ['a', 'b', 'c'];
  const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const randomPath = (random: () => number): string => {
    const depth = 1 + Math.floor(random() * 3);
    return `/r/${Array.from({ length: depth }, () => pick(random, NAMES)).join('/')}`;
  };
  const linkText = (random: () => number, at: string): string => {
    const target = randomPath(random);
    if (random() < 0.5) return target;
    // The same target written relative to the link's directory.
    const rel = posix.relative(posix.dirname(at), target);
    return rel === '' ? '.' : rel;
  };
  const randomTree = (random: () => number): TreeEntry[] => {
    const tree = new Map<string, TreeEntry>([['/r', { path: '/r', type: 'dir' }]]);
    for (let i = 0; i < 14; i++) {
      const path = randomPath(random);
      // Every ancestor is a directory (buildSnapshot implies missing ones).
      if ([...tree.values()].some((e) => e.type !== 'dir' && path.startsWith(`${e.path}/`))) continue;
      if ([...tree.keys()].some((p) => p.startsWith(`${path}/`))) continue;
      const kind = random();
      tree.set(path, kind < 0.35 ? { path, type: 'dir' } : kind < 0.7 ? { path, type: 'file' } : { path, type: 'symlink', link: linkText(random, path) });
    }
    return [...tree.values()];
  };
  const randomCommand = (random: () => number, t: number): string => {
    const path = randomPath(random);
    const other = randomPath(random);
    const at = `100 ${t}.0`;
    switch (Math.floor(random() * 6)) {
      case 0:
        return `${at} openat(AT_FDCWD</r>, "${path}", O_WRONLY|O_CREAT, 0644) = 3<${path}>`;
      case 1:
        return `${at} mkdir("${path}", 0755) = 0`;
      case 2:
        return `${at} unlink("${path}") = 0`;
      case 3:
        return `${at} rmdir("${path}") = 0`;
      case 4:
        return `${at} rename("${path}", "${other}") = 0`;
      default:
        return `${at} symlink("${linkText(random, other)}", "${other}") = 0`;
    }
  };

  it('gives what resolving every link again gives, on random trees and commands', () => {
    const random = seededRandom(21);
    let differentTargets = 0;
    for (let round = 0; round < 400; round++) {
      let affected = buildSnapshot(randomTree(random));
      let all = affected;
      // A few commands in a row, as a session patches one after another.
      for (let command = 0; command < 3; command++) {
        const lines = Array.from({ length: 1 + Math.floor(random() * 5) }, (_, i) => randomCommand(random, i));
        const ev = parseStrace(lines.join('\n'), { cwd: '/r' });
        const before = new Map(affected.entries.map((e) => [e.path, e.target]));
        affected = applyFileEvents(affected, ev);
        all = applyFileEvents(all, ev, { relink: 'all' });
        expect(affected, `round ${round}, command ${command}:\n${lines.join('\n')}`).toEqual(all);
        differentTargets += affected.entries.filter((e) => e.type === 'symlink' && before.has(e.path) && before.get(e.path) !== e.target).length;
      }
    }
    // The commands did move existing links (else the comparison would prove little).
    expect(differentTargets).toBeGreaterThan(50);
  });
});

describe('a compile of a patched snapshot (selections carried from its parent)', () => {
  // Directories a policy names with globs and `/**`, and links between them; commands add,
  // remove, rename and link there, so carried selections (expansions, links and directories
  // below a base) must change with them.
  const TOP = ['/app', '/usr/lib', '/tmp'];
  const NAMES = ['a', 'b', 'x.so', 'y-gnu'];
  const randomPath = (random: () => number): string => {
    const top = TOP[Math.floor(random() * TOP.length)] as string;
    const depth = 1 + Math.floor(random() * 3);
    return `${top}/${Array.from({ length: depth }, () => NAMES[Math.floor(random() * NAMES.length)]).join('/')}`;
  };
  const randomTree = (random: () => number): TreeEntry[] => {
    const tree = new Map<string, TreeEntry>(TOP.map((p) => [p, { path: p, type: 'dir' }]));
    for (let i = 0; i < 30; i++) {
      const path = randomPath(random);
      if ([...tree.values()].some((e) => e.type !== 'dir' && path.startsWith(`${e.path}/`))) continue;
      if ([...tree.keys()].some((p) => p.startsWith(`${path}/`))) continue;
      const kind = random();
      tree.set(path, kind < 0.4 ? { path, type: 'dir' } : kind < 0.8 ? { path, type: 'file' } : { path, type: 'symlink', link: randomPath(random) });
    }
    return [...tree.values()];
  };
  const randomCommand = (random: () => number, t: number): string => {
    const path = randomPath(random);
    const other = randomPath(random);
    switch (Math.floor(random() * 6)) {
      case 0:
        return `100 ${t}.0 openat(AT_FDCWD</app>, "${path}", O_WRONLY|O_CREAT, 0644) = 3<${path}>`;
      case 1:
        return `100 ${t}.0 mkdir("${path}", 0755) = 0`;
      case 2:
        return `100 ${t}.0 unlink("${path}") = 0`;
      case 3:
        return `100 ${t}.0 rmdir("${path}") = 0`;
      case 4:
        return `100 ${t}.0 rename("${path}", "${other}") = 0`;
      default:
        return `100 ${t}.0 symlink("${randomPath(random)}", "${other}") = 0`;
    }
  };
  const policy = {
    read: ['/app/**', '/usr/lib/*-gnu/**', '/usr/lib/*.so', '/app/*/b', '/tmp/a'],
    write: ['/tmp/**', '/app/a/*', '/usr/lib/*/x.so/**'],
    execute: ['/usr/lib/*/b', '/app/a/x.so'],
  };
  const implicit = { read: ['/usr/lib/*/*.so/**'], write: [], execute: ['/usr/lib/y-gnu/*'] };

  it('is the compile of the same tree listed afresh, command after command', () => {
    const random = seededRandom(7);
    let carried = 0;
    for (let round = 0; round < 150; round++) {
      const baseline = buildSnapshot(randomTree(random));
      const options = { implicit, abi: 7, baseline };
      let snapshot = baseline;
      compilePolicy(policy, snapshot, options);
      for (let command = 0; command < 4; command++) {
        const lines = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => randomCommand(random, i));
        const next = applyFileEvents(snapshot, parseStrace(lines.join('\n'), { cwd: '/app' }));
        if (next !== snapshot) carried++;
        snapshot = next;
        // The same entries in a snapshot object of their own: nothing remembered, nothing carried.
        const fresh = { roots: [...snapshot.roots], entries: snapshot.entries.map((e) => ({ ...e })) };
        expect(compilePolicy(policy, snapshot, options), `round ${round}, command ${command}:\n${lines.join('\n')}`).toEqual(compilePolicy(policy, fresh, options));
      }
    }
    expect(carried).toBeGreaterThan(300);
  });
});
