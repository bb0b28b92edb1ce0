/**
 * The candidate snapshot: what exists in a task image, reduced to what static
 * scoring needs (product.md Appendix A) — per axis the files under the scored
 * roots, the existing directories (an exact directory entry contributes
 * nothing), and the symlinks execute-axis canonicalisation resolves through.
 * Computed once per task image and stored as sorted JSON, so scoring many
 * policies never walks a filesystem again.
 */
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { AuthbenchError, compareStrings, formatProblem, stableStringify, zodProblems } from '../core/index.ts';
import { isWithin, normalizePattern, viewSnapshot } from '../sandbox/paths/index.ts';
import type { FsEntry, FsSnapshot, SnapshotView } from '../sandbox/paths/index.ts';
import { AxisPatternsSchema, SCORE_AXES } from './reference.ts';
import type { AxisPatterns } from './reference.ts';

export const CANDIDATES_SCHEMA_VERSION = 1;

const sortedPaths = z.array(z.string().startsWith('/')).describe('Absolute, normalised paths, sorted, no duplicates.');

export const CandidateSnapshotSchema = z
  .strictObject({
    schema_version: z.literal(CANDIDATES_SCHEMA_VERSION).describe('Format version of this file.'),
    image: z.string().optional().describe('The image the snapshot was taken from (tag or id), for provenance.'),
    scored_roots: AxisPatternsSchema.describe('The scored roots the files were collected under.'),
    files: z
      .strictObject({
        read: sortedPaths.describe('Existing files (and symlinks to files) under the read roots, lexical paths.'),
        write: sortedPaths.describe('Existing files (and symlinks to files) under the write roots, lexical paths.'),
        execute: sortedPaths.describe('Realpaths of files with an execute bit reachable under the execute roots.'),
      })
      .describe('C_a before the exact required entries are added (those come from the reference).'),
    dirs: sortedPaths.describe('Existing directories (and symlinks to directories) anywhere in the snapshot, with their ancestors.'),
    symlinks: z
      .record(z.string().startsWith('/'), z.string().startsWith('/'))
      .describe('Symlink path → its realpath in the image (dangling links omitted), e.g. `/bin` → `/usr/bin`.'),
  })
  .describe('oracle-traces/<id>/candidates.json: the image facts static scoring needs.');

export type CandidateSnapshot = z.infer<typeof CandidateSnapshotSchema>;

const EXECUTE_BITS = 0o111;

/**
 * Reduce a filesystem snapshot to the candidate snapshot for `scoredRoots`.
 * The snapshot should list every scored root completely; to canonicalise
 * execute entries such as `/bin/sh` it must also hold the links above the
 * roots (`/bin` → `/usr/bin` on merged-/usr) and the roots' ancestors.
 */
export function buildCandidateSnapshot(fs: FsSnapshot, scoredRoots: AxisPatterns, options: { image?: string } = {}): CandidateSnapshot {
  const view = viewSnapshot(fs);
  const roots = normaliseRoots(scoredRoots);
  const files: Record<(typeof SCORE_AXES)[number], Set<string>> = { read: new Set(), write: new Set(), execute: new Set() };
  for (const axis of SCORE_AXES) {
    for (const root of roots[axis]) {
      for (const { path, entry } of entriesUnder(view, root)) {
        const target = entry.type === 'symlink' ? view.resolve(path) : entry;
        if (target?.type !== 'file') continue;
        if (axis !== 'execute') files[axis].add(path);
        else if ((target.mode & EXECUTE_BITS) !== 0) files.execute.add(view.realpath(path) ?? path);
      }
    }
  }

  const symlinks: [string, string][] = [];
  const dirs = new Set<string>(['/']);
  for (const e of fs.entries) {
    if (e.type === 'symlink') {
      if (e.target !== undefined) symlinks.push([e.path, e.target]);
      if (view.resolve(e.path)?.type === 'dir') dirs.add(e.path);
    } else if (e.type === 'dir') {
      dirs.add(e.path);
    }
  }
  // Ancestors of anything listed exist and are directories (or links to them).
  for (const e of fs.entries) {
    for (let dir = posix.dirname(e.path); dir !== '/'; dir = posix.dirname(dir)) {
      if (dirs.has(dir)) break;
      if (view.get(dir)?.type !== 'symlink') dirs.add(dir);
    }
  }

  symlinks.sort(([a], [b]) => compareStrings(a, b));
  return {
    schema_version: CANDIDATES_SCHEMA_VERSION,
    ...(options.image === undefined ? {} : { image: options.image }),
    scored_roots: roots,
    files: { read: sorted(files.read), write: sorted(files.write), execute: sorted(files.execute) },
    dirs: sorted(dirs),
    symlinks: Object.fromEntries(symlinks),
  };
}

/**
 * Entries at and below a root, keyed by their path under that root. A root
 * that is itself a symlink to a directory (find lists only the link) is read
 * through its target and the paths re-prefixed with the root.
 */
function entriesUnder(view: SnapshotView, root: string): { path: string; entry: FsEntry }[] {
  const own = view.get(root);
  if (own?.type === 'symlink') {
    const real = view.realpath(root);
    if (real === undefined || view.get(real)?.type !== 'dir') return [{ path: root, entry: own }];
    return view.descendants(real).map((entry) => ({ path: `${root}${entry.path.slice(real === '/' ? 0 : real.length)}`, entry }));
  }
  const below = view.descendants(root).map((entry) => ({ path: entry.path, entry }));
  return own === undefined ? below : [{ path: root, entry: own }, ...below];
}

function normaliseRoots(roots: AxisPatterns): AxisPatterns {
  const one = (list: readonly string[]): string[] => sorted(new Set(list.map(normalizePattern)));
  return { read: one(roots.read), write: one(roots.write), execute: one(roots.execute) };
}

/** Do two root lists name the same roots (order and spelling aside)? */
export function sameRoots(a: AxisPatterns, b: AxisPatterns): boolean {
  const na = normaliseRoots(a);
  const nb = normaliseRoots(b);
  return SCORE_AXES.every((axis) => na[axis].length === nb[axis].length && na[axis].every((r, i) => r === nb[axis][i]));
}

/** Every root a snapshot must list completely for these scored roots, de-duplicated (nested roots dropped). */
export function snapshotRoots(scoredRoots: AxisPatterns): string[] {
  return foldRoots(SCORE_AXES.flatMap((axis) => scoredRoots[axis]));
}

/** Normalised, sorted, unique, and without roots that lie inside other roots. */
export function foldRoots(roots: readonly string[]): string[] {
  const all = sorted(new Set(roots.map(normalizePattern)));
  return all.filter((root) => !all.some((other) => other !== root && isWithin(other, root)));
}

export function parseCandidateSnapshot(text: string, file: string): CandidateSnapshot {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('TRACE_UNREADABLE', `${file} is not valid JSON: ${(e as Error).message}`, {
      file,
      hint: 'delete it and score again to rebuild it from the task image',
    });
  }
  const parsed = CandidateSnapshotSchema.safeParse(value);
  if (!parsed.success) {
    throw new AuthbenchError('TRACE_UNREADABLE', `${file} is not a candidate snapshot`, {
      file,
      details: zodProblems(parsed.error, file).map(formatProblem),
      hint: 'delete it and score again to rebuild it from the task image',
    });
  }
  return parsed.data;
}

/** Read a stored snapshot; undefined when the file does not exist. */
export async function loadCandidateSnapshot(file: string): Promise<CandidateSnapshot | undefined> {
  // Stored gzipped (a suite of 120 scenarios would otherwise carry ~17 MB of JSON); a plain file from before is still read.
  for (const path of file.endsWith('.gz') ? [file, file.slice(0, -'.gz'.length)] : [file]) {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new AuthbenchError('TRACE_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`, { file: path, cause: e });
    }
    let text: string;
    try {
      text = (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
    } catch (e) {
      throw new AuthbenchError('TRACE_UNREADABLE', `${path} is not valid gzip: ${(e as Error).message}`, { file: path, cause: e });
    }
    return parseCandidateSnapshot(text, path);
  }
  return undefined;
}

/** The bytes of a stored snapshot: stable JSON, gzipped without a name or time so equal snapshots give equal files. */
export function serializeCandidateSnapshot(snapshot: CandidateSnapshot): Buffer {
  return gzipSync(`${stableStringify(snapshot, 1)}\n`, { level: 9 });
}

function sorted(values: Iterable<string>): string[] {
  return [...values].sort(compareStrings);
}
