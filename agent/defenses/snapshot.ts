/**
 * Workspace snapshots for the rollback defense, through the container's
 * archive API: the daemon's tar of each root (measured 60–120 ms per MB), and
 * the listing of what exists under the roots read from that tar's entries.
 * Restoring removes what appeared or changed type since the listing and
 * unpacks the tars over the rest, so changed and deleted files come back with
 * their modes and owners.
 *
 * Nothing here runs a program of the image. These steps happen during the
 * episode, after commands that may have replaced `find`, `rm`, `mkdir`, `cat`
 * or `sh` (any policy that lets the agent write /usr/bin allows it): the
 * harness runs as root outside every sandbox, so running one of those would
 * run the agent's code with the harness's rights. Listings and file contents
 * come from the daemon's tars; removing paths and creating a missing parent
 * are done by the static `ab-launch` on the harness's read-only mount
 * (`--fs-remove`, `--fs-mkdir`, sandbox/launcher/ab-harness.c), which never
 * follows a symlink. The builders, the tar reading and the listing diff are
 * pure (no container access); takeSnapshot, readWorkspace and restoreSnapshot
 * are the only container access.
 */
import { posix } from 'node:path';
import * as tarStream from 'tar-stream';
import { AuthbenchError, compareStrings } from '../../core/index.ts';
import type { Container, ExecOptions } from '../../docker/index.ts';
import { isWithin, normalizePattern, staticPrefix } from '../../sandbox/paths/index.ts';
import { HARNESS_ROOT } from '../../sandbox/run/index.ts';

/** Snapshots above this size are not taken (the command still runs under the kernel). */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
/** The static harness binary on the read-only harness mount (sandbox/launcher's LAUNCHER_PATH). */
export const HARNESS_LAUNCHER = posix.join(HARNESS_ROOT, 'bin/ab-launch');
/** How the harness's own filesystem steps run: as root, from /, never a user name or directory the agent could have changed. */
const HARNESS_EXEC = { user: '0:0', workdir: '/' } as const;
/** A name the tar could not carry exactly (not valid UTF-8) decodes with this character. */
const LOSSY = '\uFFFD';

/** path → type letter, as `find -printf %y` says it (f, d, l, c, b, p; `?` for anything else). */
export type Listing = ReadonlyMap<string, string>;

/** What is under the roots, read from the daemon's tars of them. */
export interface WorkspaceState {
  listing: Map<string, string>;
  /** The regular files asked for (`contentOf`) and no larger than the cap, path → content. */
  files: Map<string, Buffer>;
}

export interface WorkspaceSnapshot extends WorkspaceState {
  roots: string[];
  /** The daemon's tar of each root that existed (its basename as the top entry). */
  archives: { root: string; tar: Buffer }[];
  bytes: number;
  ms: number;
}

/** Which files' contents to keep while reading a tar, and at most how many bytes of each. */
export interface ContentRequest {
  contentOf: (path: string) => boolean;
  capBytes: number;
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
    .sort((a, b) => a.length - b.length || compareStrings(a, b));
  const roots: string[] = [];
  for (const c of candidates) if (!roots.some((r) => isWithin(r, c))) roots.push(c);
  return roots;
}

/** The type letter of a tar entry type (a hard link is a regular file). Pure. */
export function tarTypeLetter(type: string | null | undefined): string {
  switch (type ?? '') {
    case 'file':
    case 'contiguous-file':
    case 'link':
      return 'f';
    case 'directory':
      return 'd';
    case 'symlink':
      return 'l';
    case 'character-device':
      return 'c';
    case 'block-device':
      return 'b';
    case 'fifo':
      return 'p';
    default:
      return '?';
  }
}

/**
 * The container path of an entry of the daemon's tar of `root` (named after
 * the root's basename: `app/`, `app/x` for `/app`); undefined for a name that
 * does not lie within the root. Pure.
 */
export function entryPath(root: string, name: string): string | undefined {
  const path = posix.join(posix.dirname(root), name).replace(/\/+$/, '');
  return path !== '' && isWithin(root, path) ? path : undefined;
}

/** Read the daemon's tar of `root` into `into`: every entry listed, the requested files' contents kept. No container access. */
export function readTar(root: string, tar: Uint8Array, into: WorkspaceState, content?: ContentRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    extract.on('entry', (header, body, next) => {
      const path = entryPath(root, header.name);
      const letter = tarTypeLetter(header.type);
      if (path !== undefined) into.listing.set(path, letter);
      const wanted = path !== undefined && (header.type === 'file' || header.type === 'contiguous-file') && content !== undefined && (header.size ?? 0) <= content.capBytes && content.contentOf(path);
      if (!wanted) {
        body.on('end', () => next());
        body.resume();
        return;
      }
      const chunks: Buffer[] = [];
      body.on('data', (c) => void chunks.push(c as Buffer));
      body.on('end', () => {
        into.files.set(path, Buffer.concat(chunks));
        next();
      });
    });
    extract.on('finish', () => resolve());
    extract.on('error', reject);
    extract.end(Buffer.from(tar));
  });
}

/**
 * What the restore must remove before unpacking, topmost only (removing a
 * directory removes what is in it), sorted. Pure:
 * - every path that is new or changed type since `before` — a directory the
 *   command replaced with a symlink (say to /etc) is removed as the link, so
 *   the unpacking that follows creates a real directory there instead of
 *   writing through the link;
 * - for a name the tar could not carry exactly (not valid UTF-8: it decodes
 *   with U+FFFD, so it cannot be named to the remover), its nearest ancestor
 *   with a clean name: the ancestor is removed whole and comes back from the
 *   snapshot (at worst the root itself).
 */
export function createdSince(before: Listing, after: Listing): string[] {
  const fresh = new Set<string>();
  for (const [p, type] of after) {
    if (p.includes(LOSSY)) {
      let clean = posix.dirname(p);
      while (clean.includes(LOSSY) && clean !== '/') clean = posix.dirname(clean);
      if (clean !== '/') fresh.add(clean);
    } else if (before.get(p) !== type) {
      fresh.add(p);
    }
  }
  const sorted = [...fresh].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && isWithin(q, p)));
}

/** A memory entry after a command, as the scrub check reads it. */
export type EntryAfter = { kind: 'file'; text: string } | { kind: 'deleted' } | { kind: 'other' };

/**
 * A path inside the roots after a command, from the tars' listing. Pure:
 * `file` (a regular file whose content was read), `deleted` (absent, with
 * every ancestor up to its root a real directory or absent too), `other`
 * (anything else: a symlink, a directory, unread content, or an ancestor the
 * command turned into a symlink — absent "through a link" is not deleted).
 */
export function entryAfter(state: WorkspaceState, roots: readonly string[], path: string): EntryAfter {
  const root = roots.find((r) => isWithin(r, path));
  if (root === undefined) return { kind: 'other' };
  const type = state.listing.get(path);
  if (type !== undefined) {
    const content = state.files.get(path);
    return type === 'f' && content !== undefined ? { kind: 'file', text: content.toString('utf8') } : { kind: 'other' };
  }
  for (let up = path; up !== root; ) {
    up = posix.dirname(up);
    const t = state.listing.get(up);
    if (t !== undefined) return t === 'd' ? { kind: 'deleted' } : { kind: 'other' };
  }
  return { kind: 'deleted' };
}

/** The remover's exec: the paths go NUL-separated on stdin, so any number fit (argv would not). Pure. */
export function fsRemoveExec(paths: readonly string[]): ExecOptions {
  return { cmd: [HARNESS_LAUNCHER, '--fs-remove', '--stdin'], stdin: paths.map((p) => `${p}\0`).join(''), ...HARNESS_EXEC, timeoutMs: 300_000 };
}

/** `mkdir -p` of the paths, never through a symlink. Pure. */
export function fsMkdirExec(paths: readonly string[]): ExecOptions {
  return { cmd: [HARNESS_LAUNCHER, '--fs-mkdir', '--', ...paths], ...HARNESS_EXEC, timeoutMs: 30_000 };
}

/** One line of `--fs-remove` / `--fs-mkdir` output. */
export interface FsLine {
  path: string;
  /** --fs-remove: what was removed; null when nothing was there. */
  removed?: string | null;
  /** --fs-mkdir: how many components were created. */
  created?: number;
  error?: string;
  /** The component on the way that is not a directory (a symlink, a file), with `error`. */
  through?: string;
}

/** The JSON lines of `--fs-remove` / `--fs-mkdir`; anything else is left out (the caller counts paths). Pure. */
export function parseFsOutput(stdout: string): FsLine[] {
  const out: FsLine[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const v = value as Record<string, unknown>;
    if (typeof v.path !== 'string') continue;
    out.push({
      path: v.path,
      ...(typeof v.removed === 'string' || v.removed === null ? { removed: v.removed } : {}),
      ...(typeof v.created === 'number' ? { created: v.created } : {}),
      ...(typeof v.error === 'string' ? { error: v.error } : {}),
      ...(typeof v.through === 'string' ? { through: v.through } : {}),
    });
  }
  return out;
}

function archiveAccess(container: Container): Required<Pick<Container, 'archive' | 'extractArchive'>> {
  if (container.archive === undefined || container.extractArchive === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'workspace snapshots need a container with archive access (archive/extractArchive)');
  }
  return {
    archive: (path, maxBytes) => container.archive?.(path, maxBytes) ?? Promise.resolve(undefined),
    extractArchive: (dir, tar) => container.extractArchive?.(dir, tar) ?? Promise.resolve(),
  };
}

/** Run one of the harness's filesystem steps; a harness that cannot run or answers nothing per path is a harness fault. */
async function harnessFs(container: Container, what: string, options: ExecOptions, paths: readonly string[]): Promise<Map<string, FsLine>> {
  const r = await container.exec(options);
  const lines = new Map(parseFsOutput(r.stdout).map((l) => [l.path, l]));
  const missing = paths.filter((p) => !lines.has(p));
  if (r.timedOut || (r.exitCode !== 0 && r.exitCode !== 1) || missing.length > 0) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `rollback could not ${what}`, {
      details: [r.timedOut ? 'timed out' : `exit ${String(r.exitCode)}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`, ...(missing.length > 0 ? [`no answer for ${missing.slice(0, 3).join(', ')}`] : [])],
      hint: `the helper is ${HARNESS_LAUNCHER} on the harness mount; is the harness mounted?`,
    });
  }
  return lines;
}

/** A read past its cap: the command grew the workspace beyond what the harness reads. */
export function isTooLarge(e: unknown): boolean {
  return e instanceof AuthbenchError && e.code === 'TOO_LARGE';
}

/**
 * What is under the roots now (the listing, and the requested files' contents), from the
 * daemon's tars; at most maxBytes of tar in all, past which it throws TOO_LARGE (isTooLarge).
 */
export async function readWorkspace(container: Container, roots: readonly string[], content?: ContentRequest, maxBytes: number = MAX_SNAPSHOT_BYTES): Promise<WorkspaceState> {
  const { archive } = archiveAccess(container);
  const state: WorkspaceState = { listing: new Map(), files: new Map() };
  let budget = maxBytes;
  for (const root of roots) {
    const tar = await archive(root, budget);
    if (tar === undefined) continue;
    budget -= tar.length;
    await readTar(root, tar, state, content);
  }
  return state;
}

/** Snapshot the roots; a snapshot past `maxBytes` is refused with a reason instead (a harness fault throws). */
export async function takeSnapshot(
  container: Container,
  roots: readonly string[],
  maxBytes: number = MAX_SNAPSHOT_BYTES,
  content?: ContentRequest,
): Promise<WorkspaceSnapshot | { refused: string; bytes: number }> {
  const started = performance.now();
  const { archive } = archiveAccess(container);
  const archives: WorkspaceSnapshot['archives'] = [];
  let bytes = 0;
  for (const root of roots) {
    // Read no further than the budget: past it the snapshot is refused, never buffered whole.
    let tar: Buffer | undefined;
    try {
      tar = await archive(root, maxBytes - bytes);
    } catch (e) {
      if (isTooLarge(e)) return { refused: `the workspace is larger than ${maxBytes} bytes`, bytes: maxBytes + 1 };
      throw e;
    }
    if (tar === undefined) continue;
    bytes += tar.length;
    archives.push({ root, tar });
  }
  // The listing is the tars' own entries: exactly what the restore can put back.
  const state: WorkspaceState = { listing: new Map(), files: new Map() };
  for (const { root, tar } of archives) await readTar(root, tar, state, content);
  return { roots: [...roots], ...state, archives, bytes, ms: performance.now() - started };
}

/** What a restore did: the paths it removed, and the roots it could not put back (with why). */
export interface RestoreOutcome {
  removed: string[];
  skipped: string[];
}

/**
 * Put the roots back as they were: remove what appeared or changed type since
 * the snapshot, then unpack the tars. `after` is the listing now, when the
 * caller already read it (nothing ran since).
 *
 * A restore must never write outside the roots, whatever the command left:
 * - the parent each tar unpacks into is made a real directory first
 *   (`--fs-mkdir`, which refuses to go through a symlink); a root whose
 *   parent the command turned into a symlink or a file is not restored at all
 *   (reported in `skipped`) — unpacking there would follow the link;
 * - inside the roots, what changed type (a directory the command replaced with
 *   a symlink to /etc, say) is removed before anything is unpacked, as the link
 *   itself (`--fs-remove` never follows one), so no path the tar names passes
 *   through a link the command made;
 * - the unpacking is the daemon's, which resolves every path inside the
 *   container's own filesystem (never the host's), and once the removals are
 *   done every directory on the way is one the snapshot had.
 * Nothing of the agent's runs meanwhile: its command ended and left no process.
 * A workspace the command grew past MAX_SNAPSHOT_BYTES is not listed: its roots are
 * removed whole and unpacked from the snapshot.
 */
export async function restoreSnapshot(container: Container, snapshot: WorkspaceSnapshot, after?: Listing): Promise<RestoreOutcome> {
  const { extractArchive } = archiveAccess(container);
  const skipped: string[] = [];
  const blocked = new Set<string>();
  const parents = [...new Set(snapshot.archives.map(({ root }) => posix.dirname(root)))];
  if (parents.length > 0) {
    const made = await harnessFs(container, `recreate ${parents.join(', ')}`, fsMkdirExec(parents), parents);
    for (const parent of parents) {
      const line = made.get(parent);
      if (line?.error === undefined) continue;
      if (line.through === undefined) {
        throw new AuthbenchError('SANDBOX_UNAVAILABLE', `rollback could not recreate ${parent}`, { details: [line.error] });
      }
      for (const { root } of snapshot.archives) {
        if (posix.dirname(root) !== parent) continue;
        blocked.add(root);
        skipped.push(`${root}: not restored, ${line.through} is no longer a directory (a symlink or a file)`);
      }
    }
  }
  const open = snapshot.roots.filter((r) => !blocked.has(r));
  let targets: string[];
  try {
    const now = after ?? (await readWorkspace(container, open)).listing;
    targets = createdSince(snapshot.listing, now).filter((p) => ![...blocked].some((r) => isWithin(r, p)));
  } catch (e) {
    // The command grew the roots past what the harness lists: put them back whole instead
    // (each root removed, then unpacked from its tar; one that had none stays removed).
    if (!isTooLarge(e)) throw e;
    targets = open;
  }
  const removed: string[] = [];
  if (targets.length > 0) {
    const lines = await harnessFs(container, 'remove what the command created', fsRemoveExec(targets), targets);
    for (const p of targets) {
      const line = lines.get(p);
      if (line?.error === undefined) {
        removed.push(p);
        continue;
      }
      // A non-directory on the way can only be above a root without a tar (one with a tar had its parent checked above).
      const root = snapshot.roots.find((r) => isWithin(r, p));
      if (line.through !== undefined && root !== undefined && !snapshot.archives.some((a) => a.root === root)) {
        skipped.push(`${p}: not removed, ${line.through} is no longer a directory (a symlink or a file)`);
        continue;
      }
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `rollback could not remove ${p}`, { details: [line.error, ...(line.through === undefined ? [] : [`through ${line.through}`])] });
    }
  }
  for (const { root, tar } of snapshot.archives) {
    if (!blocked.has(root)) await extractArchive(posix.dirname(root), tar);
  }
  return { removed, skipped };
}
