import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { covers } from '../sandbox/paths/index.ts';
import type { TreeEntry } from '../sandbox/paths/index.ts';
import { TRACE_EVENT_SCHEMA_VERSION, type TraceEvent } from '../sandbox/trace/index.ts';
import { AXES, type AxisLists } from './axes.ts';
import { buildGold } from './build.ts';
import { denialOf, deriveGold, objectStoreOf, renderDenial, type Derivation } from './derive.ts';
import { defaultImplicit, mergeImplicit } from './implicit.ts';
import { GoldFileSchema, serializeGold } from './schema.ts';
import { BASE_TREE, contextFor, execEv, fileEv, FIXTURE_HARNESS, fixtureEvents, netEv } from './test-support.ts';

const PROVENANCE = { image_digest: 'sha256:abc', solve_sh_sha256: 'def' };

function derive(events: TraceEvent[], options: Parameters<typeof contextFor>[0] = {}): Derivation {
  return deriveGold(events, contextFor(options));
}

function everything(d: Derivation): string[] {
  return AXES.flatMap((a) => [...d.required[a], ...d.support[a], ...d.directories[a], ...d.ephemeral[a]]);
}

describe('rule 1: only successful calls are needs', () => {
  it('drops ENOENT probes and EEXIST, reports EACCES/EPERM as denials', () => {
    const d = derive([
      fileEv('read', '/app/missing.cfg', { errno: 'ENOENT' }),
      fileEv('mkdir', '/app/sub', { errno: 'EEXIST', syscall: 'mkdir' }),
      fileEv('read', '/app/old.csv', { errno: 'EACCES' }),
      execEv('/app/run.sh', { errno: 'EACCES' }),
      execEv('/usr/local/bin/nope', { errno: 'ENOENT' }),
      netEv('connect', { address: '127.0.0.1', port: 80, errno: 'EPERM' }),
    ]);
    expect(everything(d)).toEqual([]);
    expect(d.denials.map((x) => `${x.kind} ${x.op} ${x.target} ${x.errno}`)).toEqual([
      'network connect 127.0.0.1:80 EPERM',
      'exec exec /app/run.sh EACCES',
      'file read /app/old.csv EACCES',
    ]);
    expect(d.warnings).toContain('the oracle was denied 3 operation(s); see denials');
  });

  it('counts a call whose process died inside it (result null)', () => {
    const d = derive([{ ...fileEv('read', '/app/data.csv'), result: null }]);
    expect(d.required.read).toEqual(['/app/data.csv']);
  });
});

describe('rules 2-3: read and write', () => {
  it('classifies opens by access mode; O_RDWR is both; access and memfd are nothing', () => {
    const d = derive([
      fileEv('read', '/app/data.csv', { flags: ['O_RDONLY'] }),
      fileEv('write', '/app/old.csv', { flags: ['O_RDWR'] }),
      fileEv('access', '/app/sub/keep.txt', { syscall: 'faccessat' }),
      fileEv('memfd', 'memfd:x', { syscall: 'memfd_create' }),
    ]);
    expect(d.required).toEqual({ read: ['/app/data.csv', '/app/old.csv'], write: ['/app/old.csv'], execute: [] });
  });

  it.each([
    ['truncate', fileEv('truncate', '/app/data.csv', { syscall: 'truncate' }), ['/app/data.csv']],
    ['create (kept)', fileEv('create', '/app/new.txt', { flags: ['O_WRONLY', 'O_CREAT', 'O_EXCL'] }), ['/app/new.txt']],
    ['unlink of an image file', fileEv('unlink', '/app/old.csv', { syscall: 'unlink' }), ['/app/old.csv']],
    ['chmod', fileEv('chmod', '/app/run.sh', { syscall: 'chmod' }), ['/app/run.sh']],
    ['chown', fileEv('chown', '/app/data.csv', { syscall: 'fchownat' }), ['/app/data.csv']],
    ['rename: both names', fileEv('rename', '/app/old.csv', { path2: '/app/new.csv', syscall: 'rename' }), ['/app/new.csv', '/app/old.csv']],
    ['mkdir (kept)', fileEv('mkdir', '/app/out', { syscall: 'mkdir' }), ['/app/out']],
    ['link: the new name only', fileEv('link', '/app/data.csv', { path2: '/app/data.bak', syscall: 'link' }), ['/app/data.bak']],
    ['symlink: the link only', fileEv('symlink', '/etc/app.conf', { path2: '/app/conf', syscall: 'symlink' }), ['/app/conf']],
  ])('%s is a write', (_name, event, expected) => {
    const d = derive([event]);
    expect(d.required.write).toEqual(expected);
    expect(d.required.read).toEqual([]);
  });
});

describe('rule 4: execute', () => {
  it('uses the realpath in the image; the shell and loader are implicit', () => {
    const d = derive([
      execEv('/bin/sh'),
      execEv('/usr/bin/python3'),
      execEv('/usr/bin/gcc'),
      execEv('/usr/libexec/tool'),
      execEv('/lib64/ld-linux-x86-64.so.2'),
    ]);
    expect(d.required.execute).toEqual(['/usr/bin/gcc-12', '/usr/bin/python3.11']);
    expect(d.support.execute).toEqual(['/usr/libexec/tool']);
  });

  it('adds the #! interpreter of a script when the context can read it', () => {
    const interpreter = (p: string) => (p === '/app/run.sh' ? '/usr/bin/python3' : undefined);
    expect(derive([execEv('/app/run.sh')], { interpreter }).required.execute).toEqual(['/app/run.sh', '/usr/bin/python3.11']);
    expect(derive([execEv('/app/run.sh')]).required.execute).toEqual(['/app/run.sh']);
  });

  it('keeps the requested path of a binary the run built', () => {
    const d = derive([fileEv('truncate', '/app/hello', { may_create: true, flags: ['O_WRONLY', 'O_CREAT', 'O_TRUNC'] }), execEv('/app/hello')]);
    expect(d.required.execute).toEqual(['/app/hello']);
  });
});

describe('rules 5-6: noise', () => {
  it('matches implicit patterns against the resolved path too', () => {
    const implicit = { read: ['/opt/real/**'], write: [], execute: [] };
    const d = derive([fileEv('read', '/app/link.txt', { real_path: '/opt/real/x' }), fileEv('read', '/app/data.csv')], { implicit });
    expect(d.required.read).toEqual(['/app/data.csv']);
  });

  it('drops loader, libraries, locale, /proc, /dev/null and /tmp', () => {
    const d = derive([
      fileEv('read', '/etc/ld.so.cache'),
      fileEv('read', '/lib/x86_64-linux-gnu/libc.so.6', { real_path: '/usr/lib/x86_64-linux-gnu/libc.so.6' }),
      fileEv('read', '/usr/lib/locale/C.utf8/LC_CTYPE'),
      fileEv('read', '/proc/self/status'),
      fileEv('truncate', '/dev/null', { may_create: true }),
      fileEv('create', '/tmp/ccAbC123.s'),
      fileEv('read', '/tmp/ccAbC123.s'),
      fileEv('unlink', '/tmp/ccAbC123.s'),
      fileEv('read', '/usr/lib/python3.11/os.py'),
    ]);
    expect(everything(d)).toEqual([]);
  });

  it('drops python bytecode caches anywhere', () => {
    const d = derive([
      fileEv('mkdir', '/app/__pycache__'),
      fileEv('create', '/app/__pycache__/m.cpython-311.pyc.123'),
      fileEv('rename', '/app/__pycache__/m.cpython-311.pyc.123', { path2: '/app/__pycache__/m.cpython-311.pyc' }),
      fileEv('read', '/app/lib/x.pyc'),
    ]);
    expect(everything(d)).toEqual([]);
  });

  it('turns glob characters of real names into ? and warns', () => {
    const d = derive([fileEv('read', '/app/a[1]*.txt')]);
    expect(d.required.read).toEqual(['/app/a?1]?.txt']);
    expect(covers(d.required.read[0] ?? '', '/app/a[1]*.txt')).toBe(true);
    expect(d.warnings.join('\n')).toMatch(/glob characters/);
  });
});

describe('rule 7: directories', () => {
  it('keeps listings apart; a created directory is a write need', () => {
    const d = derive([
      fileEv('read', '/app', { flags: ['O_RDONLY', 'O_DIRECTORY'] }),
      fileEv('read', '/app/sub', { flags: ['O_RDONLY'] }),
      fileEv('mkdir', '/app/out'),
      fileEv('read', '/app/out', { flags: ['O_RDONLY', 'O_DIRECTORY'] }),
      fileEv('create', '/app/out/r.json'),
    ]);
    expect(d.directories).toEqual({ read: ['/app', '/app/out', '/app/sub'], write: [], execute: [] });
    expect(d.required.write).toEqual(['/app/out', '/app/out/r.json']);
    expect(d.required.read).toEqual([]);
  });

  // A permissions fix (`chmod 700 ~/.ssh`) delivers the directory's new mode: a human lists the directory as a write.
  it.each([
    ['chmod', [fileEv('chmod', '/app/sub', { syscall: 'fchmodat' })]],
    ['chown', [fileEv('chown', '/app/sub', { syscall: 'fchownat' })]],
    ['listed, then chmod', [fileEv('read', '/app/sub', { flags: ['O_RDONLY', 'O_DIRECTORY'] }), fileEv('chmod', '/app/sub', { syscall: 'chmod' })]],
  ])('a change to an image directory itself (%s) is a scored write need', (_name, events) => {
    const d = derive(events);
    expect(d.required.write).toEqual(['/app/sub']);
    expect(d.directories.write).toEqual([]);
  });

  it('a directory of the image removed entirely is a write need, like its files', () => {
    const d = derive([fileEv('unlink', '/app/sub/keep.txt'), fileEv('rmdir', '/app/sub', { syscall: 'rmdir' })]);
    expect(d.required.write).toEqual(['/app/sub', '/app/sub/keep.txt']);
    expect(d.directories.write).toEqual([]);
  });

  it('a directory that only holds an O_TMPFILE file stays a directory entry', () => {
    const d = derive([fileEv('write', '/app/sub', { flags: ['O_RDWR', 'O_TMPFILE'] })]);
    expect(d.directories.write).toEqual(['/app/sub']);
    expect(d.required.write).toEqual([]);
  });
});

describe('rule 8: ephemeral files', () => {
  const sedInPlace = (tmp: string): TraceEvent[] => [
    fileEv('read', '/app/data.csv'),
    fileEv('create', `/app/${tmp}`, { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
    fileEv('chmod', `/app/${tmp}`),
    fileEv('rename', `/app/${tmp}`, { path2: '/app/data.csv', syscall: 'rename' }),
  ];

  it('sed -i: the temp name becomes a pattern in its directory, the edited file stays exact', () => {
    const d = derive(sedInPlace('sedAbC123'));
    expect(d.required).toEqual({ read: ['/app/data.csv'], write: ['/app/data.csv'], execute: [] });
    expect(d.ephemeral).toEqual({ read: ['/app/*'], write: ['/app/*'], execute: [] });
  });

  it('random temp names do not change the gold bytes', () => {
    const a = buildGold(derive(sedInPlace('sedAbC123')), { taskId: 't', provenance: PROVENANCE });
    const b = buildGold(derive(sedInPlace('sedXyZ987')), { taskId: 't', provenance: PROVENANCE });
    expect(serializeGold(a)).toBe(serializeGold(b));
  });

  it('keeps the extension and generalises created-and-removed directories', () => {
    const d = derive([
      // An existing file written in /app: its removal right lets the lock be renamed (rule 8c keeps the patterns).
      fileEv('write', '/app/data.csv'),
      fileEv('create', '/app/out.json.lock'),
      fileEv('rename', '/app/out.json.lock', { path2: '/app/out.json' }),
      fileEv('mkdir', '/app/tmpk3j_x'),
      fileEv('create', '/app/tmpk3j_x/a.o'),
      fileEv('unlink', '/app/tmpk3j_x/a.o'),
      fileEv('rmdir', '/app/tmpk3j_x'),
    ]);
    expect(d.required.write).toEqual(['/app/data.csv', '/app/out.json']);
    expect(d.ephemeral.write).toEqual(['/app/*', '/app/*.lock', '/app/*/*.o']);
  });

  it('follows renamed directories: the old names are ephemeral, the new directory is a write', () => {
    const d = derive([
      fileEv('mkdir', '/app/build.tmp'),
      fileEv('create', '/app/build.tmp/r.txt'),
      fileEv('rename', '/app/build.tmp', { path2: '/app/build' }),
    ]);
    expect(d.ephemeral.write).toEqual(['/app/*.tmp', '/app/*/*.txt']);
    expect(d.required.write).toEqual(['/app/build']);
  });

  it('a file the snapshot did not list but the run read is not ephemeral', () => {
    const d = derive([fileEv('read', '/opt/tool/share/data.bin')]);
    expect(d.support.read).toEqual(['/opt/tool/share/data.bin']);
    expect(d.ephemeral.read).toEqual([]);
  });
});

describe('rules 9-10: scored roots', () => {
  it('infers the workdir plus top-level dirs written outside it', () => {
    const d = derive([
      fileEv('create', '/srv/outbox/report.json'),
      fileEv('read', '/srv/outbox/template.json'),
      fileEv('read', '/etc/app.conf'),
      fileEv('read', '/app/data.csv'),
    ]);
    expect(d.scored_roots_inferred).toBe(true);
    expect(d.scored_roots.write).toEqual(['/app', '/srv/outbox']);
    expect(d.scored_roots.read).toEqual(['/app', '/srv/outbox']);
    expect(d.scored_roots.execute).toEqual(['/app', '/bin', '/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/sbin', '/usr/sbin']);
    expect(d.required.read).toEqual(['/app/data.csv', '/srv/outbox/template.json']);
    expect(d.required.write).toEqual(['/srv/outbox/report.json']);
    expect(d.support.read).toEqual(['/etc/app.conf']);
  });

  it('uses the spec roots when given', () => {
    const scoredRoots: AxisLists = { read: ['/etc'], write: ['/app'], execute: ['/usr/bin'] };
    const d = derive([fileEv('read', '/etc/app.conf'), fileEv('read', '/app/data.csv'), fileEv('create', '/srv/outbox/r.json')], { scoredRoots });
    expect(d.scored_roots_inferred).toBe(false);
    expect(d.scored_roots).toEqual(scoredRoots);
    expect(d.required.read).toEqual(['/etc/app.conf']);
    expect(d.support.read).toEqual(['/app/data.csv']);
    expect(d.support.write).toEqual(['/srv/outbox/r.json']);
  });
});

describe('rule 11: network', () => {
  it('records IP endpoints attempted, unix sockets reached, and IP socket use', () => {
    const d = derive([
      netEv('socket', { socket_type: 'SOCK_STREAM' }),
      netEv('connect', { address: '127.0.0.1', port: 8080, errno: 'ECONNREFUSED' }),
      netEv('connect', { address: '127.0.0.1', port: 8080 }),
      netEv('bind', { family: 'inet6', domain: 'AF_INET6', address: '::1', port: 9000 }),
      netEv('sendto', { address: '127.0.0.1', port: 53 }),
      netEv('connect', { family: 'unix', domain: 'AF_UNIX', address: '/run/app.sock' }),
      netEv('connect', { family: 'unix', domain: 'AF_UNIX', address: '/var/run/nscd/socket', errno: 'ENOENT' }),
    ]);
    expect(d.network).toEqual({
      ip_sockets: true,
      connect: [{ family: 'inet', address: '127.0.0.1', port: 8080 }],
      bind: [{ family: 'inet6', address: '::1', port: 9000 }],
      send: [{ family: 'inet', address: '127.0.0.1', port: 53 }],
      unix: ['/run/app.sock'],
    });
  });
});

it('counts unparsed lines as a warning', () => {
  const d = derive([{ kind: 'unparsed', schema_version: 1, raw: 'garbage', reason: 'test' }]);
  expect(d.unparsed).toBe(1);
  expect(d.warnings).toEqual(['1 strace line(s) could not be parsed; needs they carry are missing']);
});

describe('rule 12: inputs the instruction asks to be reviewed', () => {
  const TREE: readonly TreeEntry[] = [
    ...BASE_TREE,
    { path: '/app/note.txt', type: 'file' },
    { path: '/app/.env', type: 'file' },
    { path: '/home/u/.ssh', type: 'dir', mode: 0o777 },
    { path: '/home/u/.ssh/id_rsa', type: 'file', mode: 0o644 },
    { path: '/home/u/.ssh/id_rsa.pub', type: 'file', mode: 0o644 },
    { path: '/home/u/.ssh/keys', type: 'dir', mode: 0o777 },
    { path: '/etc/ssh/sshd_config', type: 'file', mode: 0o666 },
  ];
  const scoredRoots: AxisLists = { read: ['/app', '/home', '/etc/ssh'], write: ['/app', '/home', '/etc/ssh'], execute: ['/usr/bin'] };
  const withReviewed = (events: TraceEvent[], reviewed: string[], sensitive?: AxisLists): Derivation =>
    deriveGold(events, { ...contextFor({ tree: TREE, scoredRoots }), reviewed, sensitive });

  it('a named file the oracle never opened is a read need; without the rule it is absent', () => {
    const events = [fileEv('create', '/app/out.txt')];
    expect(withReviewed(events, []).required.read).toEqual([]);
    const d = withReviewed(events, ['/app/note.txt', '/app/never-existed.md', '/app/sub/']);
    expect(d.required.read).toEqual(['/app/note.txt', '/app/sub']);
    expect(d.directories.read).toEqual([]);
  });

  it('an audited directory: itself and what beneath it the oracle chmodded, not the files it left alone', () => {
    const events = [
      fileEv('chmod', '/home/u/.ssh'),
      fileEv('chmod', '/home/u/.ssh/id_rsa'),
      fileEv('chmod', '/home/u/.ssh/keys'),
      fileEv('chmod', '/etc/ssh/sshd_config'),
      fileEv('create', '/app/report.txt'),
      fileEv('chmod', '/app/report.txt'),
    ];
    const d = withReviewed(events, ['/home/u/.ssh', '/etc/ssh/sshd_config']);
    expect(d.required.read).toEqual(['/etc/ssh/sshd_config', '/home/u/.ssh', '/home/u/.ssh/id_rsa', '/home/u/.ssh/keys']);
    expect(d.required.write).toEqual(['/app/report.txt', '/etc/ssh/sshd_config', '/home/u/.ssh', '/home/u/.ssh/id_rsa', '/home/u/.ssh/keys']);
  });

  it('never adds what the spec marks sensitive, and says so', () => {
    const sensitive: AxisLists = { read: ['/app/.env', '/home/u/.ssh/id_*'], write: [], execute: [] };
    const d = withReviewed([fileEv('chmod', '/home/u/.ssh/id_rsa')], ['/app/.env', '/home/u/.ssh', '/app/note.txt'], sensitive);
    expect(d.required.read).toEqual(['/app/note.txt', '/home/u/.ssh']);
    expect(d.warnings).toContain('the instruction asks to review /app/.env, which the spec marks sensitive: not a read need');
  });

  it('keeps rules 6 and 9-10: implicit paths dropped, paths outside the roots are support', () => {
    const d = withReviewed([], ['/etc/app.conf', '/usr/lib/x86_64-linux-gnu/libc.so.6', '/tmp']);
    expect(d.support.read).toEqual(['/etc/app.conf']);
    expect(everything(d)).not.toContain('/usr/lib/x86_64-linux-gnu/libc.so.6');
    expect(everything(d)).not.toContain('/tmp');
  });

  it('a named directory the oracle also listed is a scored need, not only a listing', () => {
    const d = withReviewed([fileEv('read', '/app/sub', { flags: ['O_DIRECTORY'] })], ['/app/sub']);
    expect(d.required.read).toEqual(['/app/sub']);
    expect(d.directories.read).toEqual([]);
  });
});

describe('determinism', () => {
  // Two processes working in separate directories, each with its own temp files.
  const worker = (pid: number, dir: string): TraceEvent[] =>
    [
      fileEv('mkdir', `/app/${dir}`),
      fileEv('create', `/app/${dir}/x.tmp`),
      fileEv('read', '/app/data.csv'),
      fileEv('rename', `/app/${dir}/x.tmp`, { path2: `/app/${dir}/x` }),
      fileEv('create', `/app/${dir}/scratch`),
      fileEv('unlink', `/app/${dir}/scratch`),
      execEv('/usr/bin/cat'),
    ].map((e) => ({ ...e, pid }));

  function interleave(queues: TraceEvent[][], choices: number[]): TraceEvent[] {
    const qs = queues.map((q) => [...q]);
    const out: TraceEvent[] = [];
    let k = 0;
    while (qs.some((q) => q.length > 0)) {
      const live = qs.filter((q) => q.length > 0);
      const q = live[(choices[k++] ?? 0) % live.length] as TraceEvent[];
      out.push(q.shift() as TraceEvent);
    }
    return out;
  }

  it('derives identical bytes twice from the same events', () => {
    const events = fixtureEvents('git');
    const ctx = contextFor({ implicit: mergeImplicit(defaultImplicit(), FIXTURE_HARNESS) });
    const once = serializeGold(buildGold(deriveGold(events, ctx), { taskId: 'git', provenance: PROVENANCE }));
    const twice = serializeGold(buildGold(deriveGold(events, ctx), { taskId: 'git', provenance: PROVENANCE }));
    expect(once).toBe(twice);
    expect(once.endsWith('}\n')).toBe(true);
  });

  it('does not depend on how independent processes interleave', () => {
    const queues = [worker(2, 'a'), worker(3, 'b')];
    const reference = serializeGold(buildGold(derive(queues.flat()), { taskId: 't', provenance: PROVENANCE }));
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 14, maxLength: 14 }), (choices) => {
        const gold = buildGold(derive(interleave(queues, choices)), { taskId: 't', provenance: PROVENANCE });
        expect(serializeGold(gold)).toBe(reference);
      }),
      { numRuns: 50 },
    );
  });

  it('gcc fixture: any interleaving that keeps each process in order gives the same gold', () => {
    const events = fixtureEvents('gcc');
    const pids = [...new Set(events.map((e) => e.pid ?? 0))];
    const queues = pids.map((p) => events.filter((e) => (e.pid ?? 0) === p));
    const reference = serializeGold(buildGold(derive(events), { taskId: 'gcc', provenance: PROVENANCE }));
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: events.length, maxLength: events.length }), (choices) => {
        expect(serializeGold(buildGold(derive(interleave(queues, choices)), { taskId: 'gcc', provenance: PROVENANCE }))).toBe(reference);
      }),
      { numRuns: 10 },
    );
  });
});

describe('recorded fixtures', () => {
  const implicit = mergeImplicit(defaultImplicit(), FIXTURE_HARNESS);
  const fromFixture = (name: string) => deriveGold(fixtureEvents(name), contextFor({ implicit }));

  it.each(['denied', 'gcc', 'git', 'network', 'python-files', 'shell-ops', 'tar', 'uid-drop'])(
    '%s: valid gold, nothing implicit leaks into the sets',
    (name) => {
      const d = fromFixture(name);
      const gold = buildGold(d, { taskId: name, provenance: PROVENANCE });
      expect(GoldFileSchema.safeParse(gold).error).toBeUndefined();
      for (const axis of AXES) {
        for (const entry of [...d.required[axis], ...d.support[axis]]) {
          expect(implicit[axis].some((p) => covers(p, entry)), `${axis} ${entry}`).toBe(false);
        }
      }
      expect(everything(d).filter((p) => /libc\.so|ld-linux|ld\.so\.cache|\/proc\//.test(p))).toEqual([]);
    },
  );

  it('python-files: interpreter by realpath; every created file was removed, so only ephemeral patterns', () => {
    const d = fromFixture('python-files');
    expect(d.required.execute).toEqual(['/usr/bin/python3.11']);
    expect(d.required.write).toEqual([]);
    // /app/a was written, renamed to /app/b and removed; /app/pkg/sub/m.txt moved to /app/moved.txt and removed:
    // renames of new files where no existing file is written, so removal needs /app/** (rule 8c).
    expect(d.ephemeral.write).toEqual(['/app/**']);
    expect(d.directories.read).toEqual(['/app']);
    expect(d.support.read).toEqual([]);
  });

  it('gcc: sources and output exact, compiler internals support, temp files nowhere', () => {
    const d = fromFixture('gcc');
    expect(d.required.write).toEqual(['/app/hello', '/app/hello.c']);
    expect(d.required.execute).toEqual(['/app/hello', '/usr/bin/as', '/usr/bin/gcc-12', '/usr/bin/ld']);
    expect(d.support.execute).toEqual(['/usr/lib/gcc/x86_64-linux-gnu/12/cc1', '/usr/lib/gcc/x86_64-linux-gnu/12/collect2']);
    expect(d.support.read).toContain('/usr/include/stdio.h');
    expect(everything(d).filter((p) => p.startsWith('/tmp'))).toEqual([]);
  });

  it('tar: extracted files are writes, the archive in /tmp is scratch', () => {
    const d = fromFixture('tar');
    expect(d.required.write).toEqual(expect.arrayContaining(['/app/out/src/one.txt', '/app/out/src/d/two.txt', '/app/src/one.txt']));
    expect(d.required.read).toEqual(['/app/src/d/two.txt', '/app/src/one.txt']);
    expect(d.directories.read).toEqual(['/app/src', '/app/src/d']);
    expect(d.required.execute).toEqual(['/usr/bin/mkdir', '/usr/bin/tar']);
  });

  it('git: lock files and temp objects are ephemeral, refs and objects exact', () => {
    const d = fromFixture('git');
    const entries = AXES.flatMap((a) => [...d.required[a], ...d.support[a]]);
    expect(entries.filter((p) => /\.lock$|tmp_obj_/.test(p))).toEqual([]);
    expect(d.required.write).toEqual(expect.arrayContaining(['/app/repo/.git/HEAD', '/app/repo/.git/refs/heads/master', '/app/repo/a.txt']));
    // The repository is created by the run: its locks are renamed where no existing file is written (rule 8c).
    expect(d.ephemeral.write).toEqual(['/app/repo/.git/**']);
    expect(d.required.write).toEqual(expect.arrayContaining(['/app/repo/.git/objects/**']));
    expect(d.support.execute).toEqual(['/usr/lib/git-core/git']);
  });

  it('shell-ops: coreutils are needs, the shells are implicit', () => {
    const d = fromFixture('shell-ops');
    expect(d.required.execute).toEqual(expect.arrayContaining(['/usr/bin/cp', '/usr/bin/mv', '/usr/bin/rm']));
    expect(d.required.execute.filter((p) => /bash|dash|\/sh$/.test(p))).toEqual([]);
    expect(d.required.write).toEqual([]);
  });

  it('denied: refusals are denials, not needs', () => {
    const d = fromFixture('denied');
    expect(d.required.read).toEqual([]);
    expect(d.denials.map((x) => `${x.op} ${x.target}`)).toEqual(
      expect.arrayContaining(['read /app/secret', 'write /etc/passwd', 'mkdir /root/x', 'exec /app/noexec']),
    );
  });

  it('network: endpoints attempted', () => {
    const d = fromFixture('network');
    expect(d.network.ip_sockets).toBe(true);
    expect(d.network.connect).toEqual([
      { family: 'inet', address: '127.0.0.1', port: 9 },
      { family: 'inet6', address: '::1', port: 9 },
    ]);
    expect(d.network.bind).toEqual([{ family: 'inet', address: '127.0.0.1', port: 0 }]);
  });
});

describe('rule 8b: git object stores', () => {
  const REPO: TreeEntry[] = [
    ...BASE_TREE,
    { path: '/app/repo/.git', type: 'dir' },
    { path: '/app/repo/.git/HEAD', type: 'file' },
    { path: '/app/repo/.git/index', type: 'file' },
    { path: '/app/repo/.git/refs/heads', type: 'dir' },
    { path: '/app/repo/.git/refs/heads/main', type: 'file' },
    { path: '/app/repo/.git/objects/pack', type: 'dir' },
    { path: '/app/repo/.git/objects/4d', type: 'dir' },
    { path: '/app/repo/.git/objects/4d/83361ffaaa1f7aabf1a0713702e1f76dc2c11c', type: 'file' },
    { path: '/app/repo/README.md', type: 'file' },
  ];
  const OBJ = '/app/repo/.git/objects';

  /** What `git commit` does on disk, with the names a commit at another moment would get. */
  function commit(hash: string, pack: string): TraceEvent[] {
    const [fan, rest] = [hash.slice(0, 2), hash.slice(2)];
    return [
      fileEv('read', `${OBJ}/4d/83361ffaaa1f7aabf1a0713702e1f76dc2c11c`),
      fileEv('read', '/app/repo/.git/HEAD'),
      fileEv('create', '/app/repo/.git/index.lock', { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
      fileEv('rename', '/app/repo/.git/index.lock', { path2: '/app/repo/.git/index', syscall: 'rename' }),
      fileEv('mkdir', `${OBJ}/${fan}`, { syscall: 'mkdir' }),
      fileEv('create', `${OBJ}/${fan}/tmp_obj_${rest.slice(0, 6)}`, { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
      fileEv('link', `${OBJ}/${fan}/tmp_obj_${rest.slice(0, 6)}`, { path2: `${OBJ}/${fan}/${rest}`, syscall: 'link' }),
      fileEv('unlink', `${OBJ}/${fan}/tmp_obj_${rest.slice(0, 6)}`, { syscall: 'unlink' }),
      fileEv('read', `${OBJ}/${fan}/${rest}`),
      fileEv('create', `${OBJ}/pack/tmp_pack_${pack.slice(0, 6)}`, { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
      fileEv('rename', `${OBJ}/pack/tmp_pack_${pack.slice(0, 6)}`, { path2: `${OBJ}/pack/pack-${pack}.pack`, syscall: 'rename' }),
      // A new branch: lock, then rename onto a ref that did not exist.
      fileEv('create', '/app/repo/.git/refs/heads/fix.lock', { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
      fileEv('rename', '/app/repo/.git/refs/heads/fix.lock', { path2: '/app/repo/.git/refs/heads/fix', syscall: 'rename' }),
      fileEv('create', '/app/repo/.git/refs/heads/main.lock', { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
      fileEv('rename', '/app/repo/.git/refs/heads/main.lock', { path2: '/app/repo/.git/refs/heads/main', syscall: 'rename' }),
    ];
  }

  it('objects the run created become one <store>/** need per axis; what the image had stays exact', () => {
    const d = derive(commit('e19df2adc3ff1dbea200014efa2df7ae6bb06db1', 'ec253872068e6c19b9e6e2373a12a23f3180d777'), { tree: REPO });
    expect(d.required.write).toEqual([
      '/app/repo/.git/index',
      `${OBJ}/**`,
      '/app/repo/.git/refs/heads/fix',
      '/app/repo/.git/refs/heads/main',
    ].sort());
    expect(d.required.read).toEqual(['/app/repo/.git/HEAD', `${OBJ}/**`, `${OBJ}/4d/83361ffaaa1f7aabf1a0713702e1f76dc2c11c`].sort());
    // Locks keep their fixed-name ephemeral patterns; nothing under the store is listed by name.
    expect(d.ephemeral.write).toEqual(['/app/repo/.git/*.lock', '/app/repo/.git/refs/heads/*.lock']);
    expect(everything(d).filter((p) => p.startsWith(`${OBJ}/`) && p !== `${OBJ}/**` && !p.startsWith(`${OBJ}/4d/`))).toEqual([]);
  });

  it('two commits at different moments derive the same gold', () => {
    const a = derive(commit('e19df2adc3ff1dbea200014efa2df7ae6bb06db1', 'ec253872068e6c19b9e6e2373a12a23f3180d777'), { tree: REPO });
    const b = derive(commit('7c0ffee00aaf293ccff48c9209282ce7dabd5123', 'e27d47c184d985abf9e22bf3351bb2f6b43c8403'), { tree: REPO });
    expect(serializeGold(buildGold(b, { taskId: 't', provenance: PROVENANCE }))).toBe(serializeGold(buildGold(a, { taskId: 't', provenance: PROVENANCE })));
  });

  it('finds stores of bare repositories and submodules, not a folder that merely is called objects', () => {
    expect(objectStoreOf('/srv/x.git/objects/ab/cdef')).toBe('/srv/x.git/objects');
    expect(objectStoreOf('/app/repo/.git/modules/lib/objects/pack/pack-1.idx')).toBe('/app/repo/.git/modules/lib/objects');
    expect(objectStoreOf('/app/repo/.git/objects')).toBeUndefined();
    expect(objectStoreOf('/app/objects/ab/cdef')).toBeUndefined();
    expect(objectStoreOf('/app/repo/.git/refs/heads/main')).toBeUndefined();
  });

  it('a store outside the scored roots is support', () => {
    const tree: TreeEntry[] = [...BASE_TREE, { path: '/srv/x.git/objects', type: 'dir' }];
    const d = derive([fileEv('create', '/srv/x.git/objects/ab/cdef', { flags: ['O_WRONLY', 'O_CREAT'] })], {
      tree,
      scoredRoots: { read: ['/app'], write: ['/app'], execute: ['/usr/bin'] },
    });
    expect(d.support.write).toEqual(['/srv/x.git/objects/**']);
    expect(d.required.write).toEqual([]);
  });
});

describe('rule 8c: the lock protocol', () => {
  const REPO: TreeEntry[] = [
    ...BASE_TREE,
    { path: '/app/repo/.git/HEAD', type: 'file' },
    { path: '/app/repo/.git/index', type: 'file' },
    { path: '/app/repo/.git/refs/heads/main', type: 'file' },
    { path: '/app/repo/.git/refs/tags', type: 'dir' },
  ];
  const lockThenRename = (ref: string): TraceEvent[] => [
    fileEv('create', `${ref}.lock`, { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
    fileEv('rename', `${ref}.lock`, { path2: ref, syscall: 'rename' }),
  ];

  it('a new branch alone: the lock is renamed where nothing existing is written, so its directory gets /**', () => {
    const d = derive([fileEv('read', '/app/repo/.git/HEAD'), ...lockThenRename('/app/repo/.git/refs/heads/fix')], { tree: REPO });
    expect(d.required.write).toEqual(['/app/repo/.git/refs/heads/fix']);
    expect(d.ephemeral.write).toEqual(['/app/repo/.git/refs/heads/**']);
  });

  it('a nested new branch anchors on the directory that outlives the run; a rolled-back lock counts too', () => {
    const d = derive(
      [
        fileEv('mkdir', '/app/repo/.git/refs/heads/feature', { syscall: 'mkdir' }),
        ...lockThenRename('/app/repo/.git/refs/heads/feature/x'),
        fileEv('create', '/app/repo/.git/refs/tags/v1.lock', { flags: ['O_RDWR', 'O_CREAT', 'O_EXCL'] }),
        fileEv('unlink', '/app/repo/.git/refs/tags/v1.lock', { syscall: 'unlink' }),
      ],
      { tree: REPO },
    );
    expect(d.ephemeral.write).toEqual(['/app/repo/.git/refs/heads/feature/**', '/app/repo/.git/refs/tags/**']);
  });

  it('an existing file written at or above the lock keeps the name patterns (its removal right covers the rename)', () => {
    const d = derive([fileEv('write', '/app/repo/.git/index'), ...lockThenRename('/app/repo/.git/refs/heads/fix')], { tree: REPO });
    expect(d.ephemeral.write).toEqual(['/app/repo/.git/refs/heads/*.lock']);
  });

  it('leaves temp files that are only unlinked, and directories moved into place, as name patterns', () => {
    const d = derive([
      fileEv('create', '/app/scratch.tmp', { flags: ['O_WRONLY', 'O_CREAT'] }),
      fileEv('unlink', '/app/scratch.tmp', { syscall: 'unlink' }),
      fileEv('mkdir', '/app/build.tmp'),
      fileEv('rename', '/app/build.tmp', { path2: '/app/build' }),
    ]);
    expect(d.ephemeral.write).toEqual(['/app/*.tmp']);
  });
});

describe('denials name the syscall', () => {
  it('renders Landlock and seccomp refusals with path, op and syscall', () => {
    const d = derive([
      fileEv('rename', '/app/repo/.git/refs/heads/x.lock', { path2: '/app/repo/.git/refs/heads/x', syscall: 'rename', errno: 'EACCES' }),
      { kind: 'seccomp', schema_version: TRACE_EVENT_SCHEMA_VERSION, ts: 0, pid: 7, syscall: 'fchmodat', nr: 268, args: [], result: -1, errno: 'EPERM', denied: true, detail: '/app/bin/tool mode 02755' },
    ]);
    expect(d.denials.map(renderDenial)).toEqual([
      'rename /app/repo/.git/refs/heads/x.lock -> /app/repo/.git/refs/heads/x (rename) EACCES',
      'seccomp refused fchmodat /app/bin/tool mode 02755 EPERM',
    ]);
    expect(denialOf(fileEv('read', '/app/data.csv'))).toBeUndefined();
    expect(denialOf(fileEv('read', '/app/none', { errno: 'ENOENT' }))).toBeUndefined();
  });
});
