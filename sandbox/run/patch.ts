/**
 * Keep the compiler's filesystem snapshot current without listing the whole
 * container again after every command: the command's own trace says what it
 * created, removed and renamed. Pure. Only successful calls change the tree.
 *
 * Paths in events are lexical; they are resolved through the snapshot's
 * symlinks (the parent directory's realpath joined with the name) so entries
 * land where the kernel put them. Modes of new entries are not in the trace:
 * they are recorded as 0o644 (files) / 0o755 (directories) — the compiler
 * only uses type and existence.
 *
 * Symlinks carry their resolved target exactly as a fresh listing would give
 * it (the compiler trusts a link only when a baseline listing has the same
 * link resolving to the same place, so a stale or guessed target would be a
 * hole): after a change every link it can have moved is resolved again from
 * its link text (the same code `parseSnapshot` uses; every link when a
 * directory or a link went or changed, else the dangling ones, the new ones
 * and those that led to a file that went — `resolveStaleLinks` says why that
 * is enough), so a link whose target was removed, renamed, or replaced by
 * another link changes with it. A
 * symlink whose target is outside the snapshot stays unresolved, as a fresh
 * listing would leave it. The trace gives a new link's text only resolved
 * against the link's directory as the command named it; when the kernel put
 * the link elsewhere (the directory was reached through a symlink) and
 * relative and absolute readings of the text disagree, its text is unknown
 * and the link is recorded unresolved (never followed) rather than guessed.
 */
import { posix } from 'node:path';
import { compareStrings } from '../../core/index.ts';
import { normalizePattern, patchedSnapshot, resolveLinks, resolveStaleLinks, viewSnapshot, type FsEntry, type FsSnapshot } from '../paths/index.ts';
import type { TraceEvent } from '../trace/index.ts';

const CHANGING = new Set(['create', 'write', 'truncate', 'unlink', 'rename', 'mkdir', 'rmdir', 'link', 'symlink']);

/** Does this event change which paths exist? (Plain writes may create: O_CREAT.) */
export function changesTree(e: TraceEvent): boolean {
  if (e.kind !== 'file' || e.result === null || e.result < 0) return false;
  if (e.op === 'write' || e.op === 'truncate') return e.may_create === true;
  return CHANGING.has(e.op);
}

export interface PatchOptions {
  /**
   * Which links are resolved again after a change: `affected` (the default) only those the change
   * can have moved; `all`, every link, as before this shortcut — what tests hold `affected` to.
   */
  relink?: 'affected' | 'all';
}

export function applyFileEvents(snapshot: FsSnapshot, events: readonly TraceEvent[], options: PatchOptions = {}): FsSnapshot {
  const relevant = events.filter(changesTree);
  if (relevant.length === 0) return snapshot;
  const byPath = new Map<string, FsEntry>();
  for (const e of snapshot.entries) byPath.set(e.path, e);
  let view = viewSnapshot(snapshot);
  // dirty: the view events are placed through is stale; changed: the links need resolving again
  // (at the end, or before a new link's text is read against the tree: files included).
  let dirty = false;
  let changed = false;
  // What each path touched since the links were last resolved was then, by path.
  const touched = new Map<string, FsEntry | undefined>();
  const touch = (path: string): void => {
    if (!touched.has(path)) touched.set(path, byPath.get(path));
  };
  /*
   * Links are resolved again whenever the tree changed: later events are placed through them.
   * Most commands only add paths, or replace or remove regular files. Then only some links can
   * resolve differently (resolveStaleLinks says why): dangling links, new ones, and those that
   * resolved to a file that went (a walk meets a file only at its end). A command adding a file
   * to a ~10,000-entry snapshot then resolves a handful of links, not a thousand. A directory
   * or a link that went or changed may be on any link's way: everything is resolved again.
   */
  const settle = (): FsEntry[] => {
    let everything = options.relink === 'all';
    const stale = new Set<string>();
    const filesGone = new Set<string>();
    for (const [path, before] of touched) {
      const after = byPath.get(path);
      if (after?.type === 'symlink') stale.add(path);
      if (before === undefined || linkShape(before) === linkShape(after)) continue;
      if (before.type === 'file' || before.type === 'other') filesGone.add(path);
      else everything = true;
    }
    touched.clear();
    dirty = false;
    changed = false;
    if (everything) {
      const entries = resolveLinks([...byPath.values()]);
      for (const e of entries) byPath.set(e.path, e);
      return entries;
    }
    for (const e of byPath.values()) {
      if (e.type === 'symlink' && (e.target === undefined || filesGone.has(e.target))) stale.add(e.path);
    }
    for (const e of resolveStaleLinks(byPath, stale)) byPath.set(e.path, e);
    return [...byPath.values()];
  };
  const current = (): ReturnType<typeof viewSnapshot> => {
    if (dirty) view = viewSnapshot({ roots: snapshot.roots, entries: settle() });
    return view;
  };
  // A directory every prefix of which is a directory (no link on the way) is its own realpath.
  const plainDir = (path: string): boolean => {
    for (let at = path.indexOf('/', 1); ; at = path.indexOf('/', at + 1)) {
      if (byPath.get(at === -1 ? path : path.slice(0, at))?.type !== 'dir') return false;
      if (at === -1) return true;
    }
  };
  // The kernel's location of a lexical path: its parent resolved, the last segment kept.
  const place = (path: string): string => {
    const parent = posix.dirname(path);
    // Resolving through the view (built again after a change) only where a link may be on the way.
    const real = parent === path || parent === '/' || plainDir(parent) ? parent : current().realpath(parent);
    return real === undefined ? path : real === '/' ? `/${posix.basename(path)}` : `${real}/${posix.basename(path)}`;
  };
  const add = (entry: FsEntry): void => {
    touch(entry.path);
    byPath.set(entry.path, entry);
    dirty = true;
    changed = true;
  };
  /*
   * A new regular file changes no realpath a later event is placed through: placing resolves the
   * parent directory, and a path through the new file (or a link to it) is not a directory, so a
   * call that succeeded cannot have gone through it. Only resolving links needs it (a dangling
   * link that now points at it, a new link's text), so it leaves the view as it is: a command
   * writing many files would otherwise resolve every link in the snapshot again per file.
   */
  const addFile = (path: string): void => {
    touch(path);
    byPath.set(path, { path, type: 'file', mode: 0o644 });
    changed = true;
  };
  const removeTree = (path: string): FsEntry[] => {
    const gone: FsEntry[] = [];
    for (const [p, e] of byPath) {
      if (p === path || p.startsWith(`${path}/`)) gone.push(e);
    }
    for (const e of gone) {
      touch(e.path);
      byPath.delete(e.path);
    }
    dirty = true;
    changed = true;
    return gone;
  };

  for (const e of relevant) {
    if (e.kind !== 'file') continue;
    switch (e.op) {
      case 'create':
      case 'write':
      case 'truncate': {
        const at = place(e.path);
        if (!byPath.has(at)) addFile(at);
        break;
      }
      case 'mkdir': {
        const at = place(e.path);
        if (!byPath.has(at)) add({ path: at, type: 'dir', mode: 0o755 });
        break;
      }
      case 'unlink':
      case 'rmdir':
        removeTree(place(e.path));
        break;
      case 'rename': {
        if (e.path2 === undefined) break;
        const from = place(e.path);
        const to = place(e.path2);
        removeTree(to);
        for (const moved of removeTree(from)) add({ ...moved, path: to + moved.path.slice(from.length) });
        break;
      }
      case 'link': {
        if (e.path2 === undefined) break;
        // link(2) does not follow a final symlink: a hard link to a link is the same link text in another directory.
        const source = byPath.get(place(e.path));
        add(source === undefined ? { path: place(e.path2), type: 'file', mode: 0o644 } : { ...source, path: place(e.path2) });
        break;
      }
      case 'symlink': {
        if (e.path2 === undefined) break;
        // The link's text is read against every path, new files included (a link to one made just before).
        if (changed) dirty = true;
        const link = linkText(e.path, e.path2, current());
        add({ path: place(e.path2), type: 'symlink', mode: 0o777, ...(link === undefined ? {} : { link }) });
        break;
      }
      case 'read':
      case 'access':
      case 'chmod':
      case 'chown':
      case 'memfd':
        break;
    }
  }
  const entries = (changed ? settle() : [...byPath.values()]).sort((a, b) => compareStrings(a.path, b.path));
  // The compile that follows views the new snapshot: the index is already here.
  return patchedSnapshot(snapshot, entries, byPath);
}

/**
 * Link text for a new symlink, from the trace's reading of it: `target` is
 * the text resolved (lexically) against the directory of `linkPath` as the
 * command named it, so whether the text was relative is lost. Where that
 * directory is where the kernel put the link, both readings agree and the
 * absolute one is exact. Otherwise the relative reading is re-based on the
 * real directory; if the two land on different paths the text is unknown.
 */
function linkText(target: string, linkPath: string, view: ReturnType<typeof viewSnapshot>): string | undefined {
  const named = posix.dirname(linkPath);
  const real = view.realpath(named);
  if (real === undefined || real === named) return target;
  const rebased = normalizePattern(posix.join(real, posix.relative(named, target)));
  if (rebased === target) return target;
  const resolved = view.realpath(target);
  return resolved !== undefined && resolved === view.realpath(rebased) ? target : undefined;
}

/**
 * What resolving links sees of an entry: absent, a link with this text (or, without text, this
 * last known target), or anything else — a walk passes a file and a directory alike.
 */
function linkShape(e: FsEntry | undefined): string | undefined {
  if (e === undefined) return undefined;
  return e.type === 'symlink' ? `link:${e.link ?? `\0${e.target ?? ''}`}` : 'entry';
}
