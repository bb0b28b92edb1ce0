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

export type ArchivedEntry =
  | { type: 'file'; content: Buffer }
  | { type: 'symlink'; linkname: string }
  | { type: 'other'; tarType: string };

/**
 * The first entry of a tar stream (getArchive of one path yields that path
 * first). The rest is drained, never left unread: an unread archive response
 * keeps the socket, and Node, alive.
 */
export function firstTarEntry(source: NodeJS.ReadableStream): Promise<ArchivedEntry | undefined> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    let first: ArchivedEntry | undefined;
    extract.on('entry', (header, body, next) => {
      if (first !== undefined) {
        body.on('end', () => next());
        body.resume();
        return;
      }
      if (header.type === 'file' || header.type === 'contiguous-file') {
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
 * Every regular file of a tar (as Container.archive returns it), name and content, in
 * order; links, devices and directories are skipped. Reading through the daemon's archive
 * API rather than a command inside the container means nothing the container runs can
 * change what the harness reads.
 */
export function tarFiles(tar: Uint8Array): Promise<{ name: string; content: Buffer }[]> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    const out: { name: string; content: Buffer }[] = [];
    extract.on('entry', (header, body, next) => {
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        body.on('end', () => next());
        body.resume();
        return;
      }
      const chunks: Buffer[] = [];
      body.on('data', (c) => {
        chunks.push(c as Buffer);
      });
      body.on('end', () => {
        out.push({ name: header.name, content: Buffer.concat(chunks) });
        next();
      });
    });
    extract.on('finish', () => resolve(out));
    extract.on('error', reject);
    extract.end(Buffer.from(tar));
  });
}
