/**
 * Keep the compiler's filesystem snapshot current without listing the whole
 * container again after every command: the command's own trace says what it
 * created, removed and renamed. Pure. Only successful calls change the tree.
 *
 * Paths in events are lexical; they are resolved through the snapshot's
 * symlinks (the parent directory's realpath joined with the name) so entries
 * land where the kernel put them. Modes of new entries are not in the trace:
 * they are recorded as 0o644 (files) / 0o755 (directories) — the compiler
 * only uses type and existence. A symlink whose target is outside the
 * snapshot stays unresolved, as a fresh listing would leave it.
 */
import { posix } from 'node:path';
import { viewSnapshot, type FsEntry, type FsSnapshot } from '../paths/index.ts';
import type { TraceEvent } from '../trace/index.ts';

const CHANGING = new Set(['create', 'write', 'truncate', 'unlink', 'rename', 'mkdir', 'rmdir', 'link', 'symlink']);

/** Does this event change which paths exist? (Plain writes may create: O_CREAT.) */
export function changesTree(e: TraceEvent): boolean {
  if (e.kind !== 'file' || e.result === null || e.result < 0) return false;
  if (e.op === 'write' || e.op === 'truncate') return e.may_create === true;
  return CHANGING.has(e.op);
}

export function applyFileEvents(snapshot: FsSnapshot, events: readonly TraceEvent[]): FsSnapshot {
  const relevant = events.filter(changesTree);
  if (relevant.length === 0) return snapshot;
  const byPath = new Map<string, FsEntry>(snapshot.entries.map((e) => [e.path, e]));
  let view = viewSnapshot(snapshot);
  let dirty = false;
  const current = (): ReturnType<typeof viewSnapshot> => {
    if (dirty) {
      view = viewSnapshot({ roots: snapshot.roots, entries: [...byPath.values()] });
      dirty = false;
    }
    return view;
  };
  // The kernel's location of a lexical path: its parent resolved, the last segment kept.
  const place = (path: string): string => {
    const parent = posix.dirname(path);
    const real = parent === path ? parent : current().realpath(parent);
    return real === undefined ? path : real === '/' ? `/${posix.basename(path)}` : `${real}/${posix.basename(path)}`;
  };
  const add = (entry: FsEntry): void => {
    byPath.set(entry.path, entry);
    dirty = true;
  };
  const removeTree = (path: string): FsEntry[] => {
    const gone: FsEntry[] = [];
    for (const [p, e] of byPath) {
      if (p === path || p.startsWith(`${path}/`)) {
        gone.push(e);
        byPath.delete(p);
      }
    }
    dirty = true;
    return gone;
  };

  for (const e of relevant) {
    if (e.kind !== 'file') continue;
    switch (e.op) {
      case 'create':
      case 'write':
      case 'truncate': {
        const at = place(e.path);
        if (!byPath.has(at)) add({ path: at, type: 'file', mode: 0o644 });
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
        const source = byPath.get(place(e.path));
        add({ path: place(e.path2), type: source?.type ?? 'file', mode: source?.mode ?? 0o644 });
        break;
      }
      case 'symlink': {
        if (e.path2 === undefined) break;
        const target = current().realpath(e.path);
        add({ path: place(e.path2), type: 'symlink', mode: 0o777, ...(target === undefined ? {} : { target }) });
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
  const entries = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { roots: snapshot.roots, entries };
}
