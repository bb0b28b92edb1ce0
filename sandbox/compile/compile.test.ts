import { describe, expect, it } from 'vitest';
import { isAuthbenchError } from '../../core/index.ts';
import { CONTAINER_PATHS } from '../../validators/run.ts';
import { HARNESS_ROOT } from '../launcher/index.ts';
import { buildSnapshot } from '../paths/index.ts';
import { allowAllPolicy, denyAllPolicy } from '../policy/index.ts';
import type { Policy } from '../policy/index.ts';
import { compilePolicy, mergeGrants } from './compile.ts';
import type { CompileOptions } from './compile.ts';
import { FidelityReportSchema, renderFidelityReport } from './fidelity.ts';
import { RESERVED_PATHS } from './reserved.ts';
import type { FidelityEntry } from './fidelity.ts';

const SNAP = buildSnapshot([
  { path: '/app/in.txt', type: 'file' },
  { path: '/app/data/a.csv', type: 'file' },
  { path: '/app/data/sub/b.csv', type: 'file' },
  { path: '/app/out', type: 'dir' },
  { path: '/app/run.sh', type: 'file', mode: 0o755 },
  { path: '/app/secret-link', type: 'symlink', link: '/srv/secret.txt' },
  { path: '/srv/secret.txt', type: 'file', mode: 0o600 },
  { path: '/usr/bin/dash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/sh', type: 'symlink', link: 'dash' },
  { path: '/bin', type: 'symlink', link: 'usr/bin' },
  { path: '/lib/x86_64-linux-gnu/libc.so.6', type: 'file' },
  { path: '/dev/null', type: 'other', mode: 0o666 },
  { path: '/out.txt', type: 'file' },
]);

const NO_IMPLICIT = { read: [], write: [], execute: [] };
const OPTS: CompileOptions = { implicit: NO_IMPLICIT, abi: 7 };

function policy(p: Partial<Policy>): Policy {
  return { read: [], write: [], execute: [], ...p };
}

function facets(p: Partial<Policy>, opts: CompileOptions = OPTS): FidelityEntry[] {
  // Per-entry facets; the run-wide kernel facets (setattr, ABI limits) are tested on their own.
  return compilePolicy(policy(p), SNAP, opts).fidelity.entries.filter((e) => e.source !== 'kernel');
}

function brief(es: FidelityEntry[]): [string, string[]][] {
  return es.map((e) => [e.kind, e.granted.map((g) => `${g.path} ${g.access.join(',')}`)]);
}

describe('compilePolicy: read axis', () => {
  it.each<[string, string, [string, string[]][], RegExp?]>([
    ['exact file', '/app/in.txt', [['exact', ['/app/in.txt read_file']]]],
    ['directory with subdirectories', '/app/data', [['widened', ['/app/data read_dir']]], /subdirectory is listable/],
    ['directory without subdirectories', '/app/out', [['exact', ['/app/out read_dir']]]],
    ['/** base', '/app/data/**', [['exact', ['/app/data read_file,read_dir']]]],
    ['glob', '/app/data/*.csv', [['exact', ['/app/data/a.csv read_file']]]],
    ['glob matching nothing', '/app/*.json', [['no-match', []]], /matches nothing/],
    ['missing file', '/app/nope.txt', [['nonexistent', []]], /does not exist/],
    ['symlink: rule on the target', '/app/secret-link', [['widened', ['/srv/secret.txt read_file']]], /reachable by that path too/],
    ['outside the roots', '/proc/self/status', [['nonexistent', []]], /does not exist/],
  ])('%s', (_name, entry, want, note) => {
    const es = facets({ read: [entry] });
    expect(brief(es)).toEqual(want);
    if (note !== undefined) expect(es[0]?.note).toMatch(note);
  });

  it('grants symlink targets that leave a /** base, naming the link', () => {
    const es = facets({ read: ['/app/**'] });
    expect(brief(es)).toEqual([
      ['exact', ['/app read_file,read_dir']],
      ['widened', ['/srv/secret.txt read_file']],
    ]);
    expect(es[1]?.note).toBe('/app/secret-link -> /srv/secret.txt leads outside /app/**: read_file on /srv/secret.txt, reachable by its own path too');
  });

  it('a read of a file the task will create is granted where the write creates it', () => {
    const es = facets({ read: ['/app/out/result.txt'], write: ['/app/out/result.txt'] });
    expect(brief(es.filter((e) => e.axis === 'read'))).toEqual([['widened', ['/app/out read_file,read_dir']]]);
  });

  it('a read glob a write glob creates matches at run time: read rights where the write creates them', () => {
    const es = facets({ read: ['/app/out/*.lock'], write: ['/app/out/*.lock'] });
    expect(brief(es.filter((e) => e.axis === 'read'))).toEqual([
      ['no-match', []],
      ['widened', ['/app/out read_file,read_dir']],
    ]);
    expect(es.find((e) => e.axis === 'read' && e.kind === 'widened')?.note).toMatch(/write entry \/app\/out\/\*\.lock creates them/);
    // Without a covering write entry, nothing beyond the matches.
    expect(brief(facets({ read: ['/app/data/*.csv'], write: ['/app/data/a.csv'] }).filter((e) => e.axis === 'read'))).toEqual([['exact', ['/app/data/a.csv read_file']]]);
  });
});

describe('compilePolicy: write axis', () => {
  it('an existing file is exact, its removal widens to the directory', () => {
    const es = facets({ write: ['/app/in.txt'] });
    expect(brief(es)).toEqual([
      ['exact', ['/app/in.txt write_file,truncate']],
      ['widened', ['/app remove_file']],
    ]);
    expect(es[1]?.note).toMatch(/any file beneath \/app can be removed/);
  });

  it('removal grants can be turned off: reported as narrowed', () => {
    const es = facets({ write: ['/app/in.txt'] }, { ...OPTS, grantRemoval: false });
    expect(brief(es)).toEqual([
      ['exact', ['/app/in.txt write_file,truncate']],
      ['narrowed', []],
    ]);
  });

  it('a file that does not exist yet: create rights on its directory, reported as widened', () => {
    const es = facets({ write: ['/app/out/result.txt'] });
    expect(brief(es)).toEqual([['widened', ['/app/out make_reg,make_dir,write_file,truncate,remove_file']]]);
    expect(es[0]?.note).toMatch(/any new file beneath \/app\/out, not only result.txt/);
    expect(es[0]?.note).toMatch(/removing any file there/);
    // Without removal grants (the runtime's implicit set) it can be created, not removed.
    expect(brief(facets({ write: ['/app/out/result.txt'] }, { ...OPTS, grantRemoval: false }))).toEqual([['widened', ['/app/out make_reg,make_dir,write_file,truncate']]]);
  });

  it('bridges missing directories up to the limit', () => {
    expect(facets({ write: ['/app/out/a/b.txt'] })[0]?.note).toMatch(/1 missing directory/);
    expect(brief(facets({ write: ['/app/out/a/b/c/d.txt'] }))).toEqual([['nonexistent', []]]);
  });

  it('never grants creation on /', () => {
    const es = facets({ write: ['/newtop/x.txt'] });
    expect(brief(es)).toEqual([['nonexistent', []]]);
    expect(es[0]?.note).toMatch(/too wide/);
  });

  it('/** on an existing directory: the write set beneath it, and its own removal', () => {
    expect(brief(facets({ write: ['/app/out/**'] }))).toEqual([
      ['exact', ['/app/out write_file,truncate,make_reg,make_dir,make_sym,make_fifo,make_sock,remove_file,remove_dir,refer']],
      ['widened', ['/app remove_dir']],
    ]);
  });

  it('a glob in the last segment: matches, plus creation of new matches', () => {
    expect(brief(facets({ write: ['/app/data/*.csv'] }))).toEqual([
      ['exact', ['/app/data/a.csv write_file,truncate']],
      ['widened', ['/app/data remove_file']],
      ['widened', ['/app/data make_reg,make_dir,write_file,truncate']],
    ]);
    expect(brief(facets({ write: ['/app/*/x.txt'] }))).toEqual([
      ['no-match', []],
      ['narrowed', []],
    ]);
  });

  it('an exact directory covers only itself: only its removal', () => {
    expect(brief(facets({ write: ['/app/data'] }))).toEqual([['widened', ['/app remove_dir']]]);
  });

  it('a file directly under / cannot be removed without a grant on /', () => {
    expect(brief(facets({ write: ['/out.txt'] }))).toEqual([
      ['exact', ['/out.txt write_file,truncate']],
      ['narrowed', []],
    ]);
  });
});

describe('compilePolicy: execute axis', () => {
  it('canonicalises, and widens when the read axis does not cover the file', () => {
    const es = facets({ execute: ['/bin/sh'] });
    expect(brief(es)).toEqual([['widened', ['/usr/bin/dash execute,read_file']]]);
    expect(es[0]?.note).toMatch(/canonicalised to \/usr\/bin\/dash/);
  });

  it('is exact when the read axis covers the file', () => {
    expect(brief(facets({ execute: ['/app/run.sh'], read: ['/app/run.sh'] }).filter((e) => e.axis === 'execute'))).toEqual([
      ['exact', ['/app/run.sh execute,read_file']],
    ]);
  });

  it('a directory is not an executable', () => {
    expect(brief(facets({ execute: ['/app'] }))).toEqual([['no-match', []]]);
  });

  it('/** bases get execute beneath', () => {
    expect(brief(facets({ execute: ['/bin/**'], read: ['/usr/**'] }).filter((e) => e.axis === 'execute'))).toEqual([
      ['exact', ['/usr/bin execute,read_file']],
    ]);
  });
});

describe('compilePolicy: rules', () => {
  it('merges grants per inode and keeps directory-only rights off files', () => {
    const { rules } = compilePolicy(policy({ read: ['/app/**', '/app/in.txt'], write: ['/app/in.txt/**'] }), SNAP, OPTS);
    expect(rules.fs).toEqual([
      { path: '/app', access: ['read_file', 'read_dir', 'remove_file'] },
      { path: '/app/in.txt', access: ['write_file', 'read_file', 'truncate'] },
      { path: '/srv/secret.txt', access: ['read_file'] },
    ]);
  });

  it('merges the implicit set and marks it', () => {
    const out = compilePolicy(denyAllPolicy(), SNAP, {
      ...OPTS,
      implicit: { read: ['/lib/**', '/nonexistent-lib/**'], write: ['/dev/null'], execute: [] },
    });
    expect(out.fidelity.entries.map((e) => [e.source, e.kind])).toEqual([
      ['implicit', 'implicit'],
      ['implicit', 'nonexistent'],
      ['implicit', 'implicit'],
    ]);
    expect(out.rules.fs.map((r) => r.path)).toEqual(['/dev/null', '/lib']);
  });

  it('filters rights to the ABI and reports what the ABI cannot do', () => {
    const out = compilePolicy(policy({ write: ['/app/out/**'] }), SNAP, { ...OPTS, abi: 1 });
    expect(out.rules.fs.find((r) => r.path === '/app/out')?.access).not.toContain('truncate');
    expect(out.rules.fs.flatMap((r) => r.access)).not.toContain('refer');
    expect(out.fidelity.entries.filter((e) => e.kind === 'abi-limited').map((e) => e.entry)).toEqual(['refer', 'truncate', 'ioctl_dev']);
    expect(out.rules.scope).toEqual([]);
  });

  it('refuses a kernel without Landlock', () => {
    let err: unknown;
    try {
      compilePolicy(denyAllPolicy(), SNAP, { ...OPTS, abi: 0 });
    } catch (e) {
      err = e;
    }
    expect(isAuthbenchError(err) && err.code === 'SANDBOX_UNAVAILABLE').toBe(true);
  });

  it('allow-all: everything on /, network unrestricted', () => {
    const out = compilePolicy(allowAllPolicy(), SNAP, OPTS);
    expect(out.rules.fs).toHaveLength(1);
    expect(out.rules.fs[0]?.path).toBe('/');
    expect(out.rules.fs[0]?.access).toEqual(expect.arrayContaining(['read_file', 'read_dir', 'execute', 'make_reg', 'remove_dir', 'refer']));
    expect(out.rules.fs[0]?.access).not.toContain('make_char');
    expect(out.tcpUnrestricted).toBe(true);
    expect(out.rules.socketDomains).toEqual(['inet', 'inet6']);
  });
});

describe('compilePolicy: setattr', () => {
  it('allows chmod/chown once the policy grants any write, and reports it', () => {
    const writes = compilePolicy(policy({ write: ['/app/in.txt'] }), SNAP, OPTS);
    expect(writes.rules.setattr).toBe(true);
    expect(writes.fidelity.entries.filter((e) => e.entry === 'setattr').map((e) => [e.source, e.kind])).toEqual([['kernel', 'widened']]);
    // The launcher lets set-id bits through with setattr; the note says why that raises nothing.
    expect(writes.fidelity.entries.find((e) => e.entry === 'setattr')?.note).toMatch(/set-user\/group-ID bits can be set too.*no_new_privs/);
    const reads = compilePolicy(policy({ read: ['/app/in.txt'], write: ['/app/*/x.json'] }), SNAP, { ...OPTS, implicit: { read: [], write: ['/dev/null'], execute: [] } });
    expect(reads.rules.setattr).toBe(false);
  });
});

describe('compilePolicy: network', () => {
  const net: Policy['network'] = { tcp_connect: [{ host: '127.0.0.1', port: 8080 }], tcp_bind: [9000], allow_all: false };

  it('ports and socket domains from the section; host-blindness reported', () => {
    const out = compilePolicy(policy({ network: net }), SNAP, OPTS);
    expect(out.rules).toMatchObject({ connectTcp: [8080], bindTcp: [9000], socketDomains: ['inet', 'inet6'] });
    expect(out.tcpUnrestricted).toBe(false);
    expect(brief(out.fidelity.entries)).toEqual([['widened', []], ['exact', []], ['widened', []]]);
    expect(out.fidelity.entries[0]?.note).toMatch(/by port only/);
  });

  it('below ABI 4 the port rules are unavailable', () => {
    const out = compilePolicy(policy({ network: net }), SNAP, { ...OPTS, abi: 3 });
    const limited = out.fidelity.entries.filter((e) => e.axis === 'network' && e.kind === 'abi-limited');
    expect(limited.map((e) => e.note)).toEqual([
      'port rules unavailable below Landlock ABI 4 (have 3): all TCP allowed',
      'port rules unavailable below Landlock ABI 4 (have 3): all TCP allowed',
    ]);
  });

  it('no section: no sockets beyond unix', () => {
    const out = compilePolicy(policy({}), SNAP, OPTS);
    expect(out.rules).toMatchObject({ connectTcp: [], bindTcp: [], socketDomains: [] });
  });
});

describe('fidelity report', () => {
  const out = compilePolicy(policy({ read: ['/app/in.txt'], write: ['/app/out/result.txt'], execute: ['/bin/sh'] }), SNAP, OPTS);

  it('matches its schema and counts kinds', () => {
    expect(FidelityReportSchema.parse(out.fidelity)).toEqual(out.fidelity);
    expect(out.fidelity.summary).toMatchObject({ facets: 4, rules: 3, byKind: { exact: 1, widened: 3 } });
  });

  it('renders as text, optionally only the differences', () => {
    const text = renderFidelityReport(out.fidelity);
    expect(text).toContain('enforcement fidelity (Landlock ABI 7): 4 facets, 3 rules — exact 1, widened 3');
    expect(text).toContain('-> /app/out  make_reg,make_dir,write_file,truncate');
    expect(text).toContain('WIDENED');
    const diff = renderFidelityReport(out.fidelity, { onlyDifferences: true });
    expect(diff).not.toContain('/app/in.txt');
    expect(diff).toContain('/app/out/result.txt');
  });
});

describe('implicit entries', () => {
  it('never widen: a missing implicit write base grants nothing on its parent', () => {
    const snap = buildSnapshot([
      { path: '/root/.ssh/authorized_keys', type: 'file' },
      { path: '/tmp', type: 'dir' },
    ]);
    const out = compilePolicy(policy({}), snap, { implicit: { read: [], write: ['/root/.cache/**', '/tmp/**'], execute: [] }, abi: 7 });
    expect(out.rules.fs.map((r) => r.path)).toEqual(['/tmp']);
    expect(out.fidelity.entries.some((e) => e.granted.some((g) => g.path === '/root'))).toBe(false);
  });
});

// An image with the harness in it, and links an image author might ship.
const HOSTILE = buildSnapshot([
  { path: '/app/in.txt', type: 'file' },
  { path: '/app/data', type: 'symlink', link: '/srv/data' },
  { path: '/app/more', type: 'symlink', link: '/srv/more.txt' },
  { path: '/app/root', type: 'symlink', link: '/' },
  { path: '/app/up', type: 'symlink', link: '..' },
  { path: '/app/t', type: 'symlink', link: '/tests' },
  { path: '/app/h', type: 'symlink', link: '/opt/authbench/bin' },
  { path: '/app/cfg', type: 'symlink', link: '/etc' },
  { path: '/app/ext', type: 'symlink', link: '/mnt/ext' },
  { path: '/srv/data/a.csv', type: 'file' },
  { path: '/srv/more.txt', type: 'file' },
  { path: '/etc/hosts', type: 'file' },
  { path: '/tests/test.sh', type: 'file' },
  { path: '/logs/agent/x.log', type: 'file' },
  { path: '/logs/verifier', type: 'dir' },
  { path: '/opt/authbench/bin/ab-launch', type: 'file', mode: 0o755 },
  { path: '/opt/other/tool', type: 'file', mode: 0o755 },
  { path: '/solution/solve.sh', type: 'file' },
  { path: '/mnt/ext/f', type: 'file' },
], ['/app', '/srv', '/etc', '/tests', '/logs', '/opt', '/solution']);

function hostile(p: Partial<Policy>, opts: CompileOptions = OPTS): FidelityEntry[] {
  return compilePolicy(policy(p), HOSTILE, opts).fidelity.entries.filter((e) => e.source !== 'kernel');
}

describe('compilePolicy: symlinks leaving a /** base', () => {
  const es = hostile({ read: ['/app/**'], write: ['/etc/hosts'] });
  const byLink = (link: string): FidelityEntry | undefined => es.find((e) => e.note.startsWith(`${link} -> `));

  it('one facet per link, each naming link -> target', () => {
    expect(brief(es.filter((e) => e.axis === 'read'))).toEqual([
      ['exact', ['/app read_file,read_dir']],
      ['narrowed', []], // cfg -> /etc
      ['widened', ['/srv/data read_file,read_dir']],
      ['narrowed', []], // ext -> outside the roots
      ['reserved', []], // h -> /opt/authbench/bin
      ['widened', ['/srv/more.txt read_file']],
      ['narrowed', []], // root -> /
      ['reserved', []], // t -> /tests
      ['narrowed', []], // up -> /
    ]);
    expect(byLink('/app/data')?.note).toBe('/app/data -> /srv/data leads outside /app/**: read_file, read_dir on /srv/data, reachable by its own path too');
  });

  it.each([
    ['/app/root', 'narrowed', '/app/root -> / leads outside /app/**, not granted: a grant on / would cover everything'],
    ['/app/up', 'narrowed', '/app/up -> / leads outside /app/**, not granted: a grant on / would cover everything'],
    ['/app/t', 'reserved', '/app/t -> /tests leads outside /app/**, not granted: /tests is reserved for the harness'],
    ['/app/h', 'reserved', '/app/h -> /opt/authbench/bin leads outside /app/**, not granted: /opt/authbench/bin lies within /opt/authbench, reserved for the harness'],
    ['/app/cfg', 'narrowed', '/app/cfg -> /etc leads outside /app/**, not granted: /etc contains /etc/hosts, which the policy names itself (its own entries decide)'],
    ['/app/ext', 'narrowed', '/app/ext -> /mnt/ext leads outside /app/**, not granted: /mnt/ext is outside the snapshot roots'],
  ])('refuses %s', (link, kind, note) => {
    expect(byLink(link)).toMatchObject({ kind, granted: [], note });
  });

  it('the image\'s own links are trusted: a baseline equal to the snapshot changes nothing', () => {
    const p = policy({ read: ['/app/**'], write: ['/etc/hosts', '/app/in.txt'] });
    expect(compilePolicy(p, HOSTILE, { ...OPTS, baseline: HOSTILE })).toEqual(compilePolicy(p, HOSTILE, OPTS));
  });

  it('a target that contains the base itself', () => {
    const snap = buildSnapshot([{ path: '/srv/app/in.txt', type: 'file' }, { path: '/srv/app/sub/back', type: 'symlink', link: '..' }]);
    const out = compilePolicy(policy({ write: ['/srv/app/sub/**'] }), snap, OPTS);
    expect(out.fidelity.entries.find((e) => e.note.startsWith('/srv/app/sub/back'))?.note).toBe(
      '/srv/app/sub/back -> /srv/app leads outside /srv/app/sub/**, not granted: /srv/app contains /srv/app/sub itself',
    );
    expect(out.rules.fs.map((r) => r.path)).toEqual(['/srv/app', '/srv/app/sub']);
    expect(out.rules.fs.find((r) => r.path === '/srv/app')?.access).toEqual(['remove_dir']);
  });
});

describe('compilePolicy: paths reserved for the harness', () => {
  it('RESERVED_PATHS starts with the launcher\'s harness root and holds the validators\' and the solution\'s places', () => {
    expect(RESERVED_PATHS[0]).toBe(HARNESS_ROOT);
    expect(RESERVED_PATHS).toEqual([HARNESS_ROOT, CONTAINER_PATHS.tests, CONTAINER_PATHS.verifierLogs, CONTAINER_PATHS.solution]);
  });

  it.each([
    ['read', '/opt/authbench/**', '/opt/authbench is reserved for the harness: nothing granted'],
    ['execute', '/opt/authbench/bin/ab-launch', '/opt/authbench/bin/ab-launch lies within /opt/authbench, reserved for the harness: nothing granted'],
    ['read', '/tests/*.sh', '/tests is reserved for the harness: nothing granted'],
    ['write', '/logs/verifier/reward.txt', '/logs/verifier/reward.txt lies within /logs/verifier, reserved for the harness: nothing granted'],
    ['read', '/solution/**', '/solution is reserved for the harness: nothing granted'],
  ] as const)('%s %s is dropped', (axis, entry, note) => {
    const out = compilePolicy(policy({ [axis]: [entry] }), HOSTILE, OPTS);
    expect(out.fidelity.entries.filter((e) => e.source !== 'kernel')).toEqual([{ axis, source: 'policy', entry, kind: 'reserved', granted: [], note }]);
    expect(out.rules.fs).toEqual([]);
    expect(out.rules.setattr).toBe(false);
  });

  it('implicit entries too, unless the caller passes its own list (gold derivation replays /solution)', () => {
    const implicit = { read: ['/solution/**'], write: [], execute: [] };
    const dropped = compilePolicy(denyAllPolicy(), HOSTILE, { ...OPTS, implicit });
    expect(brief(dropped.fidelity.entries)).toEqual([['reserved', []]]);
    const gold = compilePolicy(denyAllPolicy(), HOSTILE, { ...OPTS, implicit, reserved: RESERVED_PATHS.filter((r) => r !== '/solution') });
    expect(gold.rules.fs).toEqual([{ path: '/solution', access: ['read_file', 'read_dir'] }]);
  });

  it('an entry covering a reserved path keeps its grants and says how the harness protects it', () => {
    const es = hostile({ read: ['/opt/**', '/logs/**'] });
    expect(brief(es)).toEqual([
      ['exact', ['/opt read_file,read_dir']],
      ['reserved', []],
      ['exact', ['/logs read_file,read_dir']],
      ['reserved', []],
    ]);
    expect(es[1]?.note).toBe(
      'covers /opt/authbench, reserved for the harness: a Landlock rule cannot leave out a subtree, so the grants stand and the harness keeps it out of reach another way (/opt/authbench is a read-only mount)',
    );
    expect(es[3]?.note).toMatch(/covers \/logs\/verifier, .*\/logs\/verifier is moved aside and replaced before validation/);
    const all = compilePolicy(allowAllPolicy(), HOSTILE, OPTS).fidelity.entries.filter((e) => e.kind === 'reserved');
    expect(all.map((e) => [e.axis, e.entry])).toEqual([
      ['read', '/**'],
      ['write', '/**'],
      ['execute', '/**'],
    ]);
    expect(all[0]?.note).toMatch(/covers \/opt\/authbench, \/tests, \/logs\/verifier, \/solution, .*out of reach another way \(.*read-only mount; .*moved aside.*; .*never present during an agent episode\)$/);
  });

  it('a rule on an ancestor covers too: create rights on /logs reach /logs/verifier', () => {
    const es = hostile({ write: ['/logs/new.txt'] });
    expect(brief(es)).toEqual([
      ['widened', ['/logs make_reg,make_dir,write_file,truncate,remove_file']],
      ['reserved', []],
    ]);
  });

  it('a grant that resolves into a reserved path is dropped and reported, even through a glob or a link', () => {
    const es = hostile({ read: ['/opt/*'], execute: ['/app/h/ab-launch', '/opt/*/tool'] });
    expect(brief(es)).toEqual([
      ['reserved', []], // /opt/authbench matched by the glob
      ['exact', ['/opt/other read_dir']],
      ['reserved', []], // ... and /opt/* covers it
      ['reserved', []], // /app/h/ab-launch canonicalises into the harness
      ['widened', ['/opt/other/tool execute,read_file']],
      ['reserved', []], // /opt/*/tool reaches into /opt/authbench
    ]);
    expect(es[0]?.note).toBe("/opt/authbench is reserved for the harness: not granted (the grant's own note: read_dir applies beneath /opt/authbench: its 1 subdirectory is listable too)");
    expect(es[3]?.note).toMatch(/^\/opt\/authbench\/bin\/ab-launch lies within \/opt\/authbench, reserved for the harness: not granted \(the grant's own note: canonicalised to/);
    const out = compilePolicy(policy({ read: ['/opt/*'], execute: ['/app/h/ab-launch'] }), HOSTILE, OPTS);
    expect(out.rules.fs.map((r) => r.path)).toEqual(['/opt/other']);
  });

  it('mergeGrants drops reserved grants on its own, as the last line', () => {
    const forged: FidelityEntry = { axis: 'read', source: 'policy', entry: '/x', kind: 'exact', granted: [{ path: '/app/t', access: ['read_file', 'read_dir'] }], note: '' };
    expect(mergeGrants([forged], HOSTILE, 7)).toEqual([]);
    expect(mergeGrants([forged], HOSTILE, 7, { reserved: [] })).toEqual([{ path: '/tests', access: ['read_file', 'read_dir'] }]);
  });

  it('counts and renders the kind', () => {
    const out = compilePolicy(policy({ read: ['/tests/**'] }), HOSTILE, OPTS);
    expect(FidelityReportSchema.parse(out.fidelity)).toEqual(out.fidelity);
    expect(out.fidelity.summary.byKind.reserved).toBe(1);
    expect(renderFidelityReport(out.fidelity, { onlyDifferences: true })).toContain('RESERVED    read    /tests/**');
  });
});
