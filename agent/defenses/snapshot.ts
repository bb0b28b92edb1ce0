/**
 * Workspace snapshots for the rollback defense, through the container's
 * archive API: a listing of what exists under each root plus the daemon's tar
 * of it (measured 60–120 ms per MB). Restoring removes what appeared since
 * the listing and unpacks the tars over the rest, so changed and deleted files
 * come back with their modes and owners. The builders and the listing diff
 * are pure; the two async functions are the only container access.
 */
import { posix } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import type { Container } from '../../docker/index.ts';
import { isWithin, normalizePattern, staticPrefix } from '../../sandbox/paths/index.ts';

/** Snapshots above this size are not taken (the command still runs under the kernel). */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
const LISTING_CAP_BYTES = 64 * 1024 * 1024;

/** path → `find -printf %y` type letter (f, d, l, ...). */
export type Listing = ReadonlyMap<string, string>;

export interface WorkspaceSnapshot {
  roots: string[];
  listing: Listing;
  /** The daemon's tar of each root that existed (its basename as the top entry). */
  archives: { root: string; tar: Buffer }[];
  bytes: number;
  ms: number;
}

/**
 * What to snapshot: the workdir and the fixed base of each memory entry
 * (`/app/.agent/*.md` → `/app/.agent`), without roots inside other roots and
 * never `/` (the whole filesystem is no workspace). Pure.
 */
export function snapshotRoots(workdir: string, memoryPatterns: readonly string[]): string[] {
  const candidates = [workdir, ...memoryPatterns.map((p) => staticPrefix(normalizePattern(p)))]
    .map(normalizePattern)
    .filter((r) => r.startsWith('/') && r !== '/')
    .sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  const roots: string[] = [];
  for (const c of candidates) if (!roots.some((r) => isWithin(r, c))) roots.push(c);
  return roots;
}

/** argv listing every path under the roots that exist, NUL-separated `<type> <path>`. */
export function listingArgv(roots: readonly string[]): string[] {
  const script = 'for r in "$@"; do if [ -e "$r" ] || [ -L "$r" ]; then find "$r" -xdev -printf \'%y %p\\0\'; fi; done';
  return ['sh', '-c', script, 'list', ...roots];
}

export function parseListing(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of stdout.split('\0')) {
    if (record.length < 3 || record[1] !== ' ') continue;
    out.set(record.slice(2), record.slice(0, 1));
  }
  return out;
}

/** Paths that are new or changed type since `before`, topmost only (removing a directory removes what is in it), sorted. Pure. */
export function createdSince(before: Listing, after: Listing): string[] {
  const fresh = [...after].filter(([p, type]) => before.get(p) !== type).map(([p]) => p).sort();
  return fresh.filter((p) => !fresh.some((q) => q !== p && isWithin(q, p)));
}

async function list(container: Container, roots: readonly string[]): Promise<Map<string, string>> {
  const r = await container.exec({ cmd: listingArgv(roots), timeoutMs: 120_000, outputCapBytes: LISTING_CAP_BYTES });
  if (r.exitCode !== 0 || r.timedOut || r.stdoutTruncated) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `could not list the workspace for a rollback snapshot (${roots.join(', ')})`, {
      details: [r.timedOut ? 'timed out' : r.stdoutTruncated ? 'listing too large' : `exit ${String(r.exitCode)}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`],
    });
  }
  return parseListing(r.stdout);
}

function archiveAccess(container: Container): Required<Pick<Container, 'archive' | 'extractArchive'>> {
  if (container.archive === undefined || container.extractArchive === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'workspace snapshots need a container with archive access (archive/extractArchive)');
  }
  return {
    archive: (path) => container.archive?.(path) ?? Promise.resolve(undefined),
    extractArchive: (dir, tar) => container.extractArchive?.(dir, tar) ?? Promise.resolve(),
  };
}

/** Snapshot the roots; a snapshot past `maxBytes` is refused with a reason instead (a harness fault throws). */
export async function takeSnapshot(
  container: Container,
  roots: readonly string[],
  maxBytes: number = MAX_SNAPSHOT_BYTES,
): Promise<WorkspaceSnapshot | { refused: string; bytes: number }> {
  const started = performance.now();
  const { archive } = archiveAccess(container);
  const listing = await list(container, roots);
  const archives: WorkspaceSnapshot['archives'] = [];
  let bytes = 0;
  for (const root of roots) {
    const tar = await archive(root);
    if (tar === undefined) continue;
    bytes += tar.length;
    if (bytes > maxBytes) return { refused: `the workspace is larger than ${maxBytes} bytes`, bytes };
    archives.push({ root, tar });
  }
  return { roots: [...roots], listing, archives, bytes, ms: performance.now() - started };
}

/** Put the roots back as they were: remove what appeared since, unpack the tars. Returns the removed paths. */
export async function restoreSnapshot(container: Container, snapshot: WorkspaceSnapshot): Promise<string[]> {
  const { extractArchive } = archiveAccess(container);
  const removed = createdSince(snapshot.listing, await list(container, snapshot.roots));
  const fail = (what: string, r: { exitCode: number | null; stderr: string }): never => {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `rollback could not ${what}`, { details: [`exit ${String(r.exitCode)}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`] });
  };
  if (removed.length > 0) {
    const r = await container.exec({ cmd: ['rm', '-rf', '--', ...removed], timeoutMs: 120_000 });
    if (r.exitCode !== 0) fail('remove what the command created', r);
  }
  for (const { root, tar } of snapshot.archives) {
    const parent = posix.dirname(root);
    // The command may have removed the parent too (it is inside another root only when the roots overlap, which they do not).
    const r = await container.exec({ cmd: ['mkdir', '-p', '--', parent], timeoutMs: 30_000 });
    if (r.exitCode !== 0) fail(`recreate ${parent}`, r);
    await extractArchive(parent, tar);
  }
  return removed;
}
