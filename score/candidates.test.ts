import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSnapshot } from '../sandbox/paths/index.ts';
import {
  buildCandidateSnapshot,
  CandidateSnapshotSchema,
  loadCandidateSnapshot,
  parseCandidateSnapshot,
  sameRoots,
  snapshotRoots,
} from './candidates.ts';

// Records in snapshotCommand's format: `<type> <mode> <path>\0` (+ link text for symlinks).
const RECORDS: [string, string?][] = [
  ['d 755 /'],
  ['l 777 /bin', 'usr/bin'],
  ['d 755 /usr'],
  ['d 755 /usr/bin'],
  ['f 755 /usr/bin/dash'],
  ['f 4755 /usr/bin/su'],
  ['f 644 /usr/bin/README'],
  ['l 777 /usr/bin/sh', 'dash'],
  ['l 777 /usr/bin/gone', 'nowhere'],
  ['d 755 /opt'],
  ['d 755 /opt/x'],
  ['f 755 /opt/x/run'],
  ['d 755 /app'],
  ['f 644 /app/a.txt'],
  ['f 755 /app/build.sh'],
  ['l 777 /app/link.txt', 'a.txt'],
  ['l 777 /app/tools', '/opt/x'],
  ['l 777 /app/run', '/opt/x/run'],
  ['d 755 /app/empty'],
  ['p 644 /app/fifo'],
];

function findOutput(records: readonly [string, string?][]): string {
  return records.map(([head, link]) => (link === undefined ? `${head}\0` : `${head}\0${link}\0`)).join('');
}

const fs = parseSnapshot(findOutput(RECORDS), ['/app', '/usr/bin', '/opt', '/bin']);
const roots = { read: ['/app'], write: ['/app/'], execute: ['/bin', '/app'] };

describe('buildCandidateSnapshot', () => {
  const c = buildCandidateSnapshot(fs, roots, { image: 'authbench/task-x:abc' });

  it('read/write: regular files and links to files, lexical; no dirs, fifos or links to dirs', () => {
    expect(c.files.read).toEqual(['/app/a.txt', '/app/build.sh', '/app/link.txt', '/app/run']);
    expect(c.files.write).toEqual(c.files.read);
  });

  it('execute: files with any execute bit, realpath\'d and de-duplicated, through a linked root', () => {
    // /bin is a link to /usr/bin: its files are found through the target. /app/run leads outside the roots.
    expect(c.files.execute).toEqual(['/app/build.sh', '/opt/x/run', '/usr/bin/dash', '/usr/bin/su']);
  });

  it('knows directories (and links to them) and every resolvable link', () => {
    expect(c.dirs).toEqual(['/', '/app', '/app/empty', '/app/tools', '/bin', '/opt', '/opt/x', '/usr', '/usr/bin']);
    expect(c.symlinks).toEqual({
      '/app/link.txt': '/app/a.txt',
      '/app/run': '/opt/x/run',
      '/app/tools': '/opt/x',
      '/bin': '/usr/bin',
      '/usr/bin/sh': '/usr/bin/dash',
    });
  });

  it('normalises and records the roots and the image', () => {
    expect(c.scored_roots).toEqual({ read: ['/app'], write: ['/app'], execute: ['/app', '/bin'] });
    expect(c.image).toBe('authbench/task-x:abc');
    expect(CandidateSnapshotSchema.parse(c)).toEqual(c);
  });

  it('is deterministic whatever the listing order', () => {
    const shuffled = parseSnapshot(findOutput([...RECORDS].reverse()), ['/app', '/usr/bin', '/opt', '/bin']);
    expect(JSON.stringify(buildCandidateSnapshot(shuffled, roots, { image: 'authbench/task-x:abc' }))).toBe(JSON.stringify(c));
  });

  it('adds ancestors of listed paths as directories even when they were not listed', () => {
    const partial = parseSnapshot(findOutput([['d 755 /srv/data'], ['f 644 /srv/data/f']]), ['/srv/data']);
    const p = buildCandidateSnapshot(partial, { read: ['/srv/data'], write: [], execute: [] });
    expect(p.dirs).toEqual(['/', '/srv', '/srv/data']);
    expect(p.files.read).toEqual(['/srv/data/f']);
  });
});

describe('roots helpers', () => {
  it('snapshotRoots lists each root once, nested ones folded into their parent', () => {
    expect(snapshotRoots({ read: ['/app', '/root'], write: ['/app/out', '/root/'], execute: ['/usr/bin', '/app'] })).toEqual([
      '/app',
      '/root',
      '/usr/bin',
    ]);
  });

  it('sameRoots ignores order, duplicates and spelling', () => {
    expect(sameRoots({ read: ['/a', '/b'], write: [], execute: ['/x/'] }, { read: ['/b', '/a', '/a'], write: [], execute: ['/x'] })).toBe(true);
    expect(sameRoots({ read: ['/a'], write: [], execute: [] }, { read: ['/a'], write: ['/a'], execute: [] })).toBe(false);
  });
});

describe('stored snapshots', () => {
  const c = buildCandidateSnapshot(fs, roots);

  it('round-trip through JSON', () => {
    expect(parseCandidateSnapshot(JSON.stringify(c), 'candidates.json')).toEqual(c);
  });

  it('reject bad JSON and bad shapes with the file named', () => {
    expect(() => parseCandidateSnapshot('{', 'x/candidates.json')).toThrow(/x\/candidates\.json is not valid JSON/);
    try {
      parseCandidateSnapshot(JSON.stringify({ ...c, schema_version: 2 }), 'x/candidates.json');
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'TRACE_UNREADABLE', file: 'x/candidates.json' });
      expect((e as { details: string[] }).details.join('\n')).toMatch(/schema_version/);
    }
  });

  it('load: undefined when missing, parsed when present', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ab-cand-'));
    try {
      expect(await loadCandidateSnapshot(join(dir, 'candidates.json'))).toBeUndefined();
      await writeFile(join(dir, 'candidates.json'), JSON.stringify(c));
      expect(await loadCandidateSnapshot(join(dir, 'candidates.json'))).toEqual(c);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
