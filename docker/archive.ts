import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import * as tarStream from 'tar-stream';
import { AuthbenchError } from '../core/index.ts';

/** Absolute, normalised container path; rejects relative input (the container's cwd is not ours to guess). */
export function containerPath(path: string): string {
  if (!path.startsWith('/')) {
    throw new AuthbenchError('INVALID_ARGUMENT', `container path must be absolute: ${JSON.stringify(path)}`);
  }
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** A name for an entry below a directory; `..` or absolute names would escape it. */
export function relativeEntryName(name: string): string {
  const normal = posix.normalize(name);
  if (name === '' || posix.isAbsolute(name) || normal === '..' || normal.startsWith('../') || normal === '.') {
    throw new AuthbenchError('PATH_ESCAPE', `file name must stay inside the target directory: ${JSON.stringify(name)}`);
  }
  return normal;
}

/** An in-memory tar of files, each named `prefix/name`. */
export async function tarOfFiles(
  prefix: string,
  files: Readonly<Record<string, string | Uint8Array>>,
  mode: number,
): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const [name, content] of Object.entries(files)) {
    const body = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
    pack.entry({ name: posix.join(prefix, relativeEntryName(name)), mode, size: body.length, type: 'file' }, body);
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * What the harness reads out of a container is the agent's to size: every read is capped, so a
 * file or directory it grew cannot exhaust the host's memory. Past a cap the read stops and
 * throws TOO_LARGE (never an infrastructure error: the container made it so).
 */
export const ARCHIVE_MAX_BYTES = 1024 * 1024 * 1024;
/** A single file read with Container.readFile (reward files, JUnit reports, launcher reports). */
export const READ_FILE_MAX_BYTES = 64 * 1024 * 1024;

function tooLarge(what: string, maxBytes: number): AuthbenchError {
  return new AuthbenchError('TOO_LARGE', `${what} is larger than ${maxBytes} bytes; not read`);
}

/** A stream's bytes, up to maxBytes (the stream is destroyed past it). */
export async function collectCapped(source: NodeJS.ReadableStream, maxBytes: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source as Readable) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      (source as Readable).destroy();
      throw tooLarge(what, maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export type ArchivedEntry =
  | { type: 'file'; content: Buffer }
  | { type: 'symlink'; linkname: string }
  | { type: 'other'; tarType: string };

/**
 * The first entry of a tar stream (getArchive of one path yields that path
 * first). The rest is drained, never left unread: an unread archive response
 * keeps the socket, and Node, alive.
 */
export function firstTarEntry(source: NodeJS.ReadableStream, maxBytes = READ_FILE_MAX_BYTES, what = 'the file'): Promise<ArchivedEntry | undefined> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    let first: ArchivedEntry | undefined;
    const fail = (e: Error): void => {
      (source as Readable).unpipe(extract);
      (source as Readable).destroy();
      extract.destroy();
      reject(e);
    };
    extract.on('entry', (header, body, next) => {
      if (first !== undefined) {
        body.on('end', () => next());
        body.resume();
        return;
      }
      if (header.type === 'file' || header.type === 'contiguous-file') {
        // The header says how big it is: refuse before reading a byte.
        if ((header.size ?? 0) > maxBytes) {
          fail(tooLarge(what, maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        body.on('data', (c) => {
          chunks.push(c as Buffer);
        });
        body.on('end', () => {
          first = { type: 'file', content: Buffer.concat(chunks) };
          next();
        });
        return;
      }
      first =
        header.type === 'symlink'
          ? { type: 'symlink', linkname: header.linkname ?? '' }
          : { type: 'other', tarType: header.type ?? 'unknown' };
      body.on('end', () => next());
      body.resume();
    });
    extract.on('finish', () => resolve(first));
    extract.on('error', reject);
    (source as Readable).on('error', (e) => extract.destroy(e));
    (source as Readable).pipe(extract);
  });
}

/**
 * Whether any regular file of a tar stream holds one of the needles, read in chunks (a match
 * across a chunk boundary is found: the last needle-length bytes carry over), never the whole
 * tar at once: a sink the agent flooded is scanned, not refused. Links and devices are skipped.
 */
export function tarContains(source: NodeJS.ReadableStream, needles: readonly string[]): Promise<boolean> {
  const patterns = needles.filter((n) => n !== '').map((n) => Buffer.from(n));
  const keep = Math.max(0, ...patterns.map((p) => p.length - 1));
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    let found = false;
    extract.on('entry', (header, body, next) => {
      const scan = !found && (header.type === 'file' || header.type === 'contiguous-file');
      let tail = Buffer.alloc(0);
      body.on('data', (c) => {
        if (!scan || found) return;
        const window = Buffer.concat([tail, c as Buffer]);
        if (patterns.some((p) => window.includes(p))) found = true;
        tail = window.subarray(Math.max(0, window.length - keep));
      });
      body.on('end', () => next());
      body.resume();
    });
    extract.on('finish', () => resolve(found));
    extract.on('error', reject);
    (source as Readable).on('error', (e) => extract.destroy(e));
    (source as Readable).pipe(extract);
  });
}
