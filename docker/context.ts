/**
 * The build context: which files are sent (Docker's .dockerignore semantics),
 * the tar that carries them, and the content hash that names the image.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, posix, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import ignore from 'ignore';
import type { Ignore } from 'ignore';
import * as tarFs from 'tar-fs';
import type * as tarStream from 'tar-stream';
import { AuthbenchError, compareStrings, hashJson, parseDockerfile } from '../core/index.ts';
import type { ContextFile } from './heredoc.ts';

export interface IgnoreRule {
  /** Cleaned pattern as Docker matches it (relative to the context root). */
  pattern: string;
  /** `!pattern`: re-include what earlier rules excluded. */
  negated: boolean;
  matcher: Ignore;
}

/**
 * Parse .dockerignore. Docker's semantics differ from .gitignore: every
 * pattern is anchored at the context root (`*.pyc` does not match `a/b.pyc`),
 * and the *last* matching rule decides, so `!dir/keep` re-includes a file even
 * though `dir` is excluded (git cannot). We use `ignore` for the glob matching
 * of each single rule (anchored with a leading `/`; a rule covering a
 * directory covers everything below it, as in Docker) and apply Docker's
 * last-match-wins ourselves.
 */
export function parseDockerignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1).trim();
    const pattern = posix.normalize(line).replace(/^\/+/, '').replace(/\/+$/, '');
    if (pattern === '' || pattern === '.') continue;
    rules.push({ pattern, negated, matcher: ignore().add(`/${pattern}`) });
  }
  return rules;
}

export function isExcluded(rules: readonly IgnoreRule[], relPath: string): boolean {
  let excluded = false;
  for (const rule of rules) {
    if (rule.matcher.ignores(relPath)) excluded = !rule.negated;
  }
  return excluded;
}

export interface ContextEntry {
  /** Relative to the context root, `/`-separated. */
  path: string;
  type: 'file' | 'directory' | 'symlink';
  /** Permission bits (incl. setuid/setgid/sticky). */
  mode: number;
  size: number;
  linkname?: string;
}

export interface BuildContext {
  root: string;
  /** Sent entries except the Dockerfile, sorted by path. */
  entries: ContextEntry[];
  dockerfile: { path: string; mode: number; mtime: Date; text: string };
}

/** A Dockerfile path relative to the context; it must stay inside it. */
export function dockerfileRelPath(dockerfile: string | undefined): string {
  const rel = posix.normalize((dockerfile ?? 'Dockerfile').replaceAll('\\', '/'));
  if (posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../')) {
    throw new AuthbenchError('PATH_ESCAPE', `Dockerfile must be inside the build context: ${dockerfile ?? ''}`);
  }
  return rel;
}

/** Whether a Dockerfile reads its build context: a COPY or ADD that is not `--from` another stage or image. */
export function readsContext(dockerfileText: string): boolean {
  return parseDockerfile(dockerfileText).instructions.some(
    (i) => (i.keyword === 'COPY' || i.keyword === 'ADD') && !/^\s*(?:--[a-z-]+(?:=\S*)?\s+)*--from[=\s]/i.test(i.args),
  );
}

export interface ReadContextOptions {
  /**
   * Send only the Dockerfile when it never reads the context: a dataset's base
   * recipes use the whole dataset as context but copy nothing from it, and
   * hashing every task of the dataset would rebuild them on any task edit.
   */
  onlyWhenRead?: boolean;
}

/** Walk the context applying .dockerignore; .dockerignore and the Dockerfile are always sent. */
export async function readBuildContext(contextDir: string, dockerfile?: string, options: ReadContextOptions = {}): Promise<BuildContext> {
  const root = resolve(contextDir);
  const dockerfilePath = dockerfileRelPath(dockerfile);
  const dockerfileAbs = join(root, ...dockerfilePath.split('/'));
  let text: string;
  let mode: number;
  let mtime: Date;
  try {
    text = await readFile(dockerfileAbs, 'utf8');
    const st = await lstat(dockerfileAbs);
    mode = st.mode & 0o7777;
    mtime = st.mtime;
  } catch (e) {
    throw new AuthbenchError('INVALID_TASK', `cannot read Dockerfile: ${(e as Error).message}`, { file: dockerfileAbs, cause: e });
  }
  if (options.onlyWhenRead === true && !readsContext(text)) return { root, entries: [], dockerfile: { path: dockerfilePath, mode, mtime, text } };
  const ignoreText = await readFile(join(root, '.dockerignore'), 'utf8').catch(() => '');
  const rules = parseDockerignore(ignoreText);
  const hasNegations = rules.some((r) => r.negated);
  const always = new Set(['.dockerignore', dockerfilePath]);

  const entries: ContextEntry[] = [];
  // Returns whether anything at or below `rel` is sent.
  const walk = async (rel: string): Promise<boolean> => {
    const names = (await readdir(rel === '' ? root : join(root, rel))).sort();
    let any = false;
    for (const name of names) {
      const child = rel === '' ? name : `${rel}/${name}`;
      const abs = join(root, child);
      const st = await lstat(abs);
      const excluded = !always.has(child) && isExcluded(rules, child);
      if (st.isDirectory()) {
        // An excluded directory is entered only when a later `!rule` could re-include something in it.
        if (excluded && !hasNegations) continue;
        const index = entries.length;
        const inside = await walk(child);
        if (!excluded || inside) {
          entries.splice(index, 0, { path: child, type: 'directory', mode: st.mode & 0o7777, size: 0 });
          any = true;
        }
        continue;
      }
      if (excluded || child === dockerfilePath) {
        if (child === dockerfilePath) any = true;
        continue;
      }
      if (st.isFile()) {
        entries.push({ path: child, type: 'file', mode: st.mode & 0o7777, size: st.size });
        any = true;
      } else if (st.isSymbolicLink()) {
        entries.push({ path: child, type: 'symlink', mode: st.mode & 0o7777, size: 0, linkname: await readlink(abs) });
        any = true;
      }
      // Sockets, fifos and devices cannot be meaningfully sent; Docker skips them too.
    }
    return any;
  };
  await walk('');
  entries.sort((a, b) => compareStrings(a.path, b.path));
  return { root, entries, dockerfile: { path: dockerfilePath, mode, mtime, text } };
}

async function fileDigest(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface ContentHashInput {
  files: readonly { path: string; type: ContextEntry['type']; mode: number; digest: string }[];
  dockerfile: { path: string; text: string };
  buildArgs: Readonly<Record<string, string>>;
  /** Resolved image IDs (or `unresolved:<ref>`) of every base image, in FROM order. */
  baseImageIds: readonly string[];
  /** Labels set on the image: they are part of the image, so a change must rebuild. */
  labels: Readonly<Record<string, string>>;
}

/** Version the recipe so a change in what we hash never reuses an old tag. */
const HASH_VERSION = 1;

export function contentHash(input: ContentHashInput): string {
  return hashJson({ v: HASH_VERSION, ...input, files: [...input.files].sort((a, b) => compareStrings(a.path, b.path)) });
}

/** Per-entry digests: file contents, or the link target for symlinks. */
export async function contextDigests(context: BuildContext): Promise<ContentHashInput['files']> {
  const out: { path: string; type: ContextEntry['type']; mode: number; digest: string }[] = [];
  for (const e of context.entries) {
    const digest =
      e.type === 'file'
        ? await fileDigest(join(context.root, ...e.path.split('/')))
        : e.type === 'symlink'
          ? `link:${e.linkname ?? ''}`
          : '';
    out.push({ path: e.path, type: e.type, mode: e.mode, digest });
  }
  return out;
}

/**
 * The context tar: exactly the listed entries (tar-fs), then the Dockerfile
 * as we will build it (after FROM substitution) under its own name, so
 * `COPY . /x` sees the same file set as an unsubstituted build would, then
 * the files the translation added (COPY heredoc bodies).
 */
export function packContext(context: BuildContext, dockerfileText: string, extraFiles: readonly ContextFile[] = []): Readable {
  const keep = new Set(context.entries.map((e) => e.path));
  const toRel = (abs: string): string => relative(context.root, abs).split(sep).join('/');
  const options = {
    ignore: (abs: string) => !keep.has(toRel(abs)),
    sort: true,
    umask: 0,
    finalize: false,
    finish: (pack: tarStream.Pack) => {
      const body = Buffer.from(dockerfileText);
      pack.entry(
        { name: context.dockerfile.path, mode: context.dockerfile.mode, size: body.length, mtime: context.dockerfile.mtime, type: 'file' },
        body,
      );
      // Directories first: the legacy builder wants a file's parent in the tar before the file.
      const dirs = new Set<string>();
      for (const f of extraFiles) {
        const parts = f.path.split('/').slice(0, -1);
        for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
      }
      for (const d of [...dirs].sort(compareStrings)) pack.entry({ name: d, type: 'directory', mode: 0o755, mtime: context.dockerfile.mtime });
      for (const f of extraFiles) pack.entry({ name: f.path, mode: f.mode, size: f.content.length, mtime: context.dockerfile.mtime, type: 'file' }, f.content);
      pack.finalize();
    },
  };
  // tar-fs v3 returns a streamx stream (pipe-compatible); @types/tar-fs predates `sort`/`umask`.
  return tarFs.pack(context.root, options) as unknown as Readable;
}
