/**
 * The validation phase's Docker round trips, fewer: each archive call costs the daemon a
 * chrooted tar process (~0.1 s on a loaded 2-core machine, a third of the container floor),
 * so what prepareValidation put in with three calls (the tests, an empty /logs/verifier, the
 * JUnit plugin) goes in as one tar extracted at `/`, and what a validator left in
 * /logs/verifier (JUnit files, reward files) comes out as one tar of that directory.
 * Pure builders and parsers; run.ts does the I/O.
 */
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import * as tarStream from 'tar-stream';
import { AuthbenchError } from '../core/index.ts';

/** One entry of the tar, its name relative to `/` (no leading slash). */
export type BundleEntry =
  | { type: 'directory'; name: string; mode: number; mtime?: Date }
  | { type: 'file'; name: string; mode: number; content: Uint8Array; mtime?: Date }
  | { type: 'symlink'; name: string; linkname: string; mtime?: Date };

/** What the validation phase puts in place, besides the tests (already named `tests/...`). */
export interface BundleInput {
  /** The task's tests/ as entries below `tests/` (the directory itself first). */
  tests: readonly BundleEntry[];
  /** The empty directory the validators write their verdicts to (e.g. `/logs/verifier`). */
  verifierLogs: string;
  /** The phase's fresh directory (e.g. `/.authbench-validation-…`); its `python/` holds `files`. */
  harnessDir: string;
  pythonFiles: Readonly<Record<string, string>>;
}

function relative(path: string): string {
  const normal = posix.normalize(path);
  if (!posix.isAbsolute(normal) || normal === '/') throw new AuthbenchError('INVALID_ARGUMENT', `validation bundle: not an absolute path below /: ${JSON.stringify(path)}`);
  return normal.slice(1).replace(/\/$/, '');
}

function checkedName(name: string): string {
  const normal = posix.normalize(name);
  if (name === '' || posix.isAbsolute(name) || normal === '.' || normal === '..' || normal.startsWith('../')) {
    throw new AuthbenchError('PATH_ESCAPE', `validation bundle: entry name must stay below /: ${JSON.stringify(name)}`);
  }
  return normal.replace(/\/$/, '');
}

/**
 * Every entry of the bundle, in extraction order (a directory before what it holds). Owner
 * 0:0 throughout (the daemon keeps archived owners with copyUIDGID: root's, as before when it
 * mapped them itself). Missing parents (`/logs`) the daemon creates 0755, as it did. Pure.
 */
export function validationBundleEntries(input: BundleInput): BundleEntry[] {
  const logs = relative(input.verifierLogs);
  const harness = relative(input.harnessDir);
  return [
    ...input.tests.map((e) => ({ ...e, name: checkedName(e.name) })),
    { type: 'directory', name: logs, mode: 0o755 },
    { type: 'directory', name: harness, mode: 0o755 },
    { type: 'directory', name: `${harness}/python`, mode: 0o755 },
    ...Object.entries(input.pythonFiles).map(([name, source]): BundleEntry => ({ type: 'file', name: `${harness}/python/${checkedName(name)}`, mode: 0o644, content: Buffer.from(source) })),
  ];
}

/** The tar of `entries` (root-owned). */
export async function tarOf(entries: readonly BundleEntry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const e of entries) {
    const common = { name: e.name, uid: 0, gid: 0, ...(e.mtime === undefined ? {} : { mtime: e.mtime }) };
    if (e.type === 'file') pack.entry({ ...common, type: 'file', mode: e.mode, size: e.content.length }, Buffer.from(e.content));
    else if (e.type === 'directory') pack.entry({ ...common, type: 'directory', mode: e.mode });
    else pack.entry({ ...common, type: 'symlink', linkname: e.linkname, mode: 0o777 });
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * `entries` as `ab-launch --install-bundle` reads them on stdin (ab-harness.c): "ABB1", then per
 * entry a type byte ('d', 'f', 'l'), mode u32, mtime i64 seconds (-1: none), the name and the
 * data (content or link target), each u32-length-prefixed, big-endian. What the tar carried
 * (owner root, modes, link targets, file mtimes) without a daemon round trip. Pure.
 */
export function installBundleOf(entries: readonly BundleEntry[]): Buffer {
  const parts: Buffer[] = [Buffer.from('ABB1')];
  for (const e of entries) {
    const name = Buffer.from(checkedName(e.name));
    const data = e.type === 'file' ? Buffer.from(e.content) : e.type === 'symlink' ? Buffer.from(e.linkname) : Buffer.alloc(0);
    const head = Buffer.alloc(1 + 4 + 8 + 4);
    head.write(e.type === 'file' ? 'f' : e.type === 'symlink' ? 'l' : 'd', 0, 'latin1');
    head.writeUInt32BE(e.type === 'symlink' ? 0o777 : e.mode & 0o7777, 1);
    head.writeBigInt64BE(e.mtime === undefined ? -1n : BigInt(Math.floor(e.mtime.getTime() / 1000)), 5);
    head.writeUInt32BE(name.length, 13);
    const size = Buffer.alloc(4);
    size.writeUInt32BE(data.length, 0);
    parts.push(head, name, size, data);
  }
  return Buffer.concat(parts);
}

/** A top-level entry of a directory's archive, as the validators' readers need it. */
export type VerifierEntry = { type: 'file'; content: Buffer } | { type: 'other' };

/**
 * The files directly in the directory a daemon archived (its entries named `<dir>/<file>`), by
 * file name. Anything but a regular file (a symlink the validator or a service left, a fifo) is
 * `other`: the caller reads that one path on its own, as it always did. Undefined when the
 * archived path is not a directory (a symlink to one: the daemon archives the link, where a
 * read of a file below it follows it). Pure.
 */
export async function directoryFiles(tar: Buffer, dirName: string): Promise<Map<string, VerifierEntry> | undefined> {
  const out = new Map<string, VerifierEntry>();
  let isDirectory = false;
  const extract = tarStream.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const name = posix.normalize(header.name).replace(/\/$/, '');
      const file = name.startsWith(`${dirName}/`) ? name.slice(dirName.length + 1) : undefined;
      if (name === dirName && header.type === 'directory') isDirectory = true;
      const keep = file !== undefined && file !== '' && !file.includes('/');
      const chunks: Buffer[] = [];
      stream.on('data', (c) => {
        if (keep && header.type === 'file') chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        if (keep) out.set(file, header.type === 'file' ? { type: 'file', content: Buffer.concat(chunks) } : { type: 'other' });
        next();
      });
      stream.on('error', reject);
      stream.resume();
    });
    extract.on('finish', () => resolve());
    extract.on('error', reject);
  });
  Readable.from([tar]).pipe(extract);
  await done;
  return isDirectory ? out : undefined;
}
