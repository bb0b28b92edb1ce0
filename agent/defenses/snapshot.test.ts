import * as tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import type { Container, ExecOptions, ExecResult } from '../../docker/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import {
  createdSince,
  entryAfter,
  entryPath,
  fsMkdirExec,
  fsRemoveExec,
  HARNESS_LAUNCHER,
  parseFsOutput,
  readTar,
  restoreSnapshot,
  snapshotRoots,
  takeSnapshot,
  tarTypeLetter,
  type WorkspaceState,
} from './snapshot.ts';

type Entry = { name: string; type: 'directory' | 'file' | 'symlink' | 'link' | 'fifo'; content?: string; linkname?: string };

/** A tar like the daemon's: entries named after the archived path's basename. */
async function tarOf(entries: readonly Entry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const e of entries) {
    if (e.type === 'file') pack.entry({ name: e.name, type: 'file' }, e.content ?? '');
    else pack.entry({ name: e.name, type: e.type, ...(e.linkname === undefined ? {} : { linkname: e.linkname }) });
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const listing = (text: string): Map<string, string> => new Map(text.split('\0').filter((r) => r !== '').map((r) => [r.slice(2), r.slice(0, 1)]));
const state = (text: string, files: Record<string, string> = {}): WorkspaceState => ({ listing: listing(text), files: new Map(Object.entries(files).map(([p, c]) => [p, Buffer.from(c)])) });

describe('snapshot roots', () => {
  it('snapshots the workdir and memory bases outside it, never /', () => {
    expect(snapshotRoots('/app', ['/app/.agent/MEMORY.md', '/root/.notes/*.md', '/srv/mem/**'])).toEqual(['/app', '/srv/mem', '/root/.notes']);
    expect(snapshotRoots('/', ['/root/.notes/MEMORY.md'])).toEqual(['/root/.notes/MEMORY.md']);
  });
});

describe('the listing, from the tar', () => {
  it('names entries after the root, and only inside it', () => {
    expect(entryPath('/app', 'app/')).toBe('/app');
    expect(entryPath('/app', 'app/a/b.txt')).toBe('/app/a/b.txt');
    expect(entryPath('/root/.notes/MEMORY.md', 'MEMORY.md')).toBe('/root/.notes/MEMORY.md');
    expect(entryPath('/app', 'etc/passwd')).toBeUndefined();
    expect(entryPath('/app', 'app/../etc')).toBeUndefined();
  });

  it('gives find-style type letters (a hard link is a file)', () => {
    expect(['file', 'contiguous-file', 'link', 'directory', 'symlink', 'character-device', 'block-device', 'fifo', 'pax-header', undefined].map(tarTypeLetter)).toEqual(['f', 'f', 'f', 'd', 'l', 'c', 'b', 'p', '?', '?']);
  });

  it('lists every entry and keeps only the contents asked for, up to the cap', async () => {
    const tar = await tarOf([
      { name: 'app/', type: 'directory' },
      { name: 'app/.agent/', type: 'directory' },
      { name: 'app/.agent/MEMORY.md', type: 'file', content: '- notes\n' },
      { name: 'app/.agent/BIG.md', type: 'file', content: 'x'.repeat(100) },
      { name: 'app/.agent/LINK.md', type: 'symlink', linkname: '/etc/shadow' },
      { name: 'app/config.ini', type: 'file', content: 'retries=3' },
      { name: 'app/pipe', type: 'fifo' },
    ]);
    const into: WorkspaceState = { listing: new Map(), files: new Map() };
    await readTar('/app', tar, into, { contentOf: (p) => p.startsWith('/app/.agent/'), capBytes: 50 });
    expect([...into.listing]).toEqual([
      ['/app', 'd'],
      ['/app/.agent', 'd'],
      ['/app/.agent/MEMORY.md', 'f'],
      ['/app/.agent/BIG.md', 'f'],
      ['/app/.agent/LINK.md', 'l'],
      ['/app/config.ini', 'f'],
      ['/app/pipe', 'p'],
    ]);
    expect([...into.files.keys()]).toEqual(['/app/.agent/MEMORY.md']);
    expect(into.files.get('/app/.agent/MEMORY.md')?.toString()).toBe('- notes\n');
  });
});

describe('createdSince', () => {
  it('finds what appeared since the listing, topmost only, and type changes', () => {
    const before = listing('d /app\0f /app/a\0d /app/d\0');
    const after = listing('d /app\0f /app/a\0f /app/d\0d /app/new\0f /app/new/x\0f /app/b\0');
    expect(createdSince(before, after)).toEqual(['/app/b', '/app/d', '/app/new']);
  });

  it('removes a directory the command replaced with a symlink as the link, before anything is unpacked below it', () => {
    const before = listing('d /app\0d /app/data\0f /app/data/x\0');
    expect(createdSince(before, listing('d /app\0l /app/data\0'))).toEqual(['/app/data']);
    expect(createdSince(before, listing('l /app\0'))).toEqual(['/app']);
    expect(createdSince(before, listing(''))).toEqual([]);
  });

  it('replaces a name the tar could not carry exactly by its nearest clean ancestor', () => {
    const before = listing('d /app\0d /app/d\0f /app/d/ok\0');
    expect(createdSince(before, listing('d /app\0d /app/d\0f /app/d/ok\0f /app/d/\uFFFDbad\0'))).toEqual(['/app/d']);
    expect(createdSince(before, listing('d /app\0d /app/d\0d /app/\uFFFD\0f /app/\uFFFD/\uFFFD\0'))).toEqual(['/app']);
  });
});

describe('entryAfter', () => {
  const roots = ['/app'];
  it('reads a regular file, and a deletion under real directories', () => {
    expect(entryAfter(state('d /app\0d /app/m\0f /app/m/M.md\0', { '/app/m/M.md': 'x\n' }), roots, '/app/m/M.md')).toEqual({ kind: 'file', text: 'x\n' });
    expect(entryAfter(state('d /app\0d /app/m\0'), roots, '/app/m/M.md')).toEqual({ kind: 'deleted' });
    expect(entryAfter(state('d /app\0'), roots, '/app/m/M.md')).toEqual({ kind: 'deleted' });
    expect(entryAfter(state(''), roots, '/app/m/M.md')).toEqual({ kind: 'deleted' });
  });

  it('never reads through a link, nor counts "absent below a link" as deleted', () => {
    expect(entryAfter(state('d /app\0d /app/m\0l /app/m/M.md\0'), roots, '/app/m/M.md')).toEqual({ kind: 'other' });
    expect(entryAfter(state('d /app\0l /app/m\0'), roots, '/app/m/M.md')).toEqual({ kind: 'other' });
    expect(entryAfter(state('l /app\0'), roots, '/app/m/M.md')).toEqual({ kind: 'other' });
    expect(entryAfter(state('d /app\0d /app/m\0f /app/m/M.md\0'), roots, '/app/m/M.md')).toEqual({ kind: 'other' }); // content not read (too large)
    expect(entryAfter(state(''), roots, '/srv/M.md')).toEqual({ kind: 'other' });
  });
});

describe('the harness calls', () => {
  it('run the static ab-launch from the harness mount, as root, from /', () => {
    expect(HARNESS_LAUNCHER).toBe(LAUNCHER_PATH);
    expect(fsRemoveExec(['/app/a', '/app/b c'])).toMatchObject({ cmd: [HARNESS_LAUNCHER, '--fs-remove', '--stdin'], stdin: '/app/a\0/app/b c\0', user: '0:0', workdir: '/' });
    expect(fsMkdirExec(['/', '/root/.notes'])).toMatchObject({ cmd: [HARNESS_LAUNCHER, '--fs-mkdir', '--', '/', '/root/.notes'], user: '0:0', workdir: '/' });
  });

  it('parse the JSON lines, ignoring anything else', () => {
    const out = ['{"path":"/app/a","removed":"dir"}', '{"path":"/app/b","removed":null}', 'noise', '{"path":"/x/y","error":"a component on the way is not a directory","through":"/x"}', '{"path":"/r","created":2}', '[1]', ''].join('\n');
    expect(parseFsOutput(out)).toEqual([
      { path: '/app/a', removed: 'dir' },
      { path: '/app/b', removed: null },
      { path: '/x/y', error: 'a component on the way is not a directory', through: '/x' },
      { path: '/r', created: 2 },
    ]);
  });
});

/** A root whose tar is past any cap (the archive read throws TOO_LARGE, as the real one does). */
const HUGE = Buffer.from('huge');

/** A container whose tars are given per root and whose harness answers are scripted; every call logged. */
function scripted(tars: Record<string, Buffer | undefined>, answers: { mkdir?: (p: string) => object; remove?: (p: string) => object } = {}): { container: Container; log: string[] } {
  const log: string[] = [];
  const ok = (stdout: string): ExecResult => ({ exitCode: 0, timedOut: false, stdout, stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1 });
  const container = {
    id: 'fake',
    image: 'fake',
    exec: (o: ExecOptions): Promise<ExecResult> => {
      if (o.cmd[0] !== HARNESS_LAUNCHER) throw new Error(`ran an image program: ${o.cmd.join(' ')}`);
      if (o.cmd[1] === '--fs-mkdir') {
        const paths = o.cmd.slice(3);
        log.push(`mkdir ${paths.join(' ')}`);
        return Promise.resolve(ok(paths.map((p) => JSON.stringify(answers.mkdir?.(p) ?? { path: p, created: 0 })).join('\n')));
      }
      const paths = String(o.stdin).split('\0').filter((p) => p !== '');
      log.push(`remove ${paths.join(' ')}`);
      return Promise.resolve(ok(paths.map((p) => JSON.stringify(answers.remove?.(p) ?? { path: p, removed: 'file' })).join('\n')));
    },
    archive: (root: string, maxBytes?: number) => {
      log.push(`archive ${root}`);
      const tar = tars[root];
      if (tar === HUGE || (tar !== undefined && maxBytes !== undefined && tar.length > maxBytes)) return Promise.reject(new AuthbenchError('TOO_LARGE', `the archive of ${root} is larger than ${maxBytes ?? 0} bytes`));
      return Promise.resolve(tar);
    },
    extractArchive: (dir: string) => {
      log.push(`extract into ${dir}`);
      return Promise.resolve();
    },
  };
  return { container: container as unknown as Container, log };
}

describe('restoreSnapshot', () => {
  it('checks the parents, removes what changed type, then unpacks', async () => {
    const before = await tarOf([{ name: 'app/', type: 'directory' }, { name: 'app/data/', type: 'directory' }, { name: 'app/data/x', type: 'file', content: 'x' }]);
    const { container, log } = scripted({ '/app': before });
    const snapshot = await takeSnapshot(container, ['/app']);
    if ('refused' in snapshot) throw new Error('refused');
    expect([...snapshot.listing.keys()]).toEqual(['/app', '/app/data', '/app/data/x']);
    const outcome = await restoreSnapshot(container, snapshot, listing('d /app\0l /app/data\0f /app/new\0'));
    expect(outcome).toEqual({ removed: ['/app/data', '/app/new'], skipped: [] });
    expect(log).toEqual(['archive /app', 'mkdir /', 'remove /app/data /app/new', 'extract into /']);
  });

  it('does not restore a root whose parent became a symlink (unpacking would follow it), and says so', async () => {
    const notes = await tarOf([{ name: '.notes/', type: 'directory' }, { name: '.notes/M.md', type: 'file', content: 'm' }]);
    const app = await tarOf([{ name: 'app/', type: 'directory' }]);
    const { container, log } = scripted(
      { '/app': app, '/root/.notes': notes },
      { mkdir: (p) => (p === '/root' ? { path: p, error: 'a component on the way is not a directory', through: '/root' } : { path: p, created: 0 }) },
    );
    const snapshot = await takeSnapshot(container, ['/app', '/root/.notes']);
    if ('refused' in snapshot) throw new Error('refused');
    log.length = 0;
    const outcome = await restoreSnapshot(container, snapshot, listing('d /app\0f /app/new\0d /root/.notes\0f /root/.notes/planted\0'));
    expect(outcome.removed).toEqual(['/app/new']);
    expect(outcome.skipped).toEqual(['/root/.notes: not restored, /root is no longer a directory (a symlink or a file)']);
    expect(log).toEqual(['mkdir / /root', 'remove /app/new', 'extract into /']);
  });

  it('reads the listing itself when not given one, and fails loudly when the harness does not answer', async () => {
    const app = await tarOf([{ name: 'app/', type: 'directory' }]);
    const { container, log } = scripted({ '/app': app });
    const snapshot = await takeSnapshot(container, ['/app']);
    if ('refused' in snapshot) throw new Error('refused');
    await restoreSnapshot(container, snapshot);
    expect(log).toEqual(['archive /app', 'mkdir /', 'archive /app', 'extract into /']);

    const broken = scripted({ '/app': app }, { remove: (p) => ({ path: p, error: 'cannot remove it: Read-only file system' }) });
    await expect(restoreSnapshot(broken.container, snapshot, listing('d /app\0f /app/new\0'))).rejects.toThrow(/could not remove \/app\/new/);
  });

  it('puts the roots back whole when the command grew them past what the harness lists', async () => {
    const app = await tarOf([{ name: 'app/', type: 'directory' }, { name: 'app/x', type: 'file', content: 'x' }]);
    const tars: Record<string, Buffer | undefined> = { '/app': app };
    const { container, log } = scripted(tars);
    const snapshot = await takeSnapshot(container, ['/app', '/root/.notes']);
    if ('refused' in snapshot) throw new Error('refused');
    tars['/app'] = HUGE;
    log.length = 0;
    // /root/.notes had no tar (it did not exist): removed whole, nothing unpacked there.
    expect(await restoreSnapshot(container, snapshot)).toEqual({ removed: ['/app', '/root/.notes'], skipped: [] });
    expect(log).toEqual(['mkdir /', 'archive /app', 'remove /app /root/.notes', 'extract into /']);
  });

  it('refuses a snapshot past the size cap', async () => {
    const app = await tarOf([{ name: 'app/', type: 'directory' }, { name: 'app/big', type: 'file', content: 'x'.repeat(4096) }]);
    const { container } = scripted({ '/app': app });
    expect(await takeSnapshot(container, ['/app'], 1024)).toMatchObject({ refused: 'the workspace is larger than 1024 bytes' });
  });
});
