/**
 * Which symlinks of a session's snapshot may be followed when compiling
 * grants. The snapshot is patched from every command's trace, so a command
 * allowed to write `/tmp/**` can `ln -s /etc /tmp/e`, and a compiler that
 * follows links would grant `/etc` to the next command. Only the links the
 * image came with are the image author's; everything the agent made or
 * changed is its own say-so.
 *
 * A symlink is trusted when the baseline — the container listed once before
 * the first command, never patched — has a symlink at the same path that
 * resolves to the same realpath, and nothing on that realpath has since
 * become a link or a file (targets are realpaths, so a target whose path now
 * passes through a link would resolve elsewhere in a fresh listing).
 * Everything else is untrusted. `trustSnapshot` returns a copy of the
 * snapshot in which untrusted links have no target: resolving through them
 * behaves like a dangling link everywhere the path module resolves (realpath,
 * execute canonicalisation, glob expansion stays lexical), and the map says
 * what each of them was and why it is not followed. Pure.
 */
import { posix } from 'node:path';
import type { FsEntry, FsSnapshot } from './snapshot.ts';
import { viewSnapshot } from './snapshot.ts';

export interface UntrustedLink {
  /** Where the link resolves in the (untrusted) snapshot; absent when it dangles there. */
  target?: string;
  /** Why it is not followed, as a phrase after "X is a symlink": `created at run time`, ... */
  reason: string;
}

export interface TrustedSnapshot {
  /** The snapshot with every untrusted symlink's `target` (and link text) removed; the input itself when all are trusted. */
  snapshot: FsSnapshot;
  /** Untrusted symlinks by path (dangling ones are left out: there is nothing to follow). */
  untrusted: ReadonlyMap<string, UntrustedLink>;
}

const cache = new WeakMap<FsSnapshot, WeakMap<FsSnapshot, TrustedSnapshot>>();

export function trustSnapshot(snapshot: FsSnapshot, baseline: FsSnapshot): TrustedSnapshot {
  const cached = cache.get(snapshot)?.get(baseline);
  if (cached !== undefined) return cached;
  const before = viewSnapshot(baseline);
  const now = viewSnapshot(snapshot);
  const untrusted = new Map<string, UntrustedLink>();
  for (const e of snapshot.entries) {
    if (e.type !== 'symlink' || e.target === undefined) continue;
    const reason = distrust(e.target, before.get(e.path), (p) => now.get(p));
    if (reason !== undefined) untrusted.set(e.path, { target: e.target, reason });
  }
  const result: TrustedSnapshot =
    untrusted.size === 0
      ? { snapshot, untrusted }
      : {
          snapshot: {
            roots: snapshot.roots,
            entries: snapshot.entries.map((e) => (untrusted.has(e.path) ? { path: e.path, type: e.type, mode: e.mode } : e)),
          },
          untrusted,
        };
  const forSnapshot = cache.get(snapshot) ?? new WeakMap<FsSnapshot, TrustedSnapshot>();
  forSnapshot.set(baseline, result);
  cache.set(snapshot, forSnapshot);
  return result;
}

/** Why a link resolving to `target` is not to be followed, or undefined when it is trusted. */
function distrust(target: string, base: FsEntry | undefined, get: (path: string) => FsEntry | undefined): string | undefined {
  if (base === undefined) return 'created at run time';
  if (base.type !== 'symlink') return `created at run time in place of a ${base.type === 'dir' ? 'directory' : base.type}`;
  if (base.target !== target) return `changed at run time (it resolved to ${base.target ?? 'nothing'} before the first command)`;
  // Same realpath as in the baseline, but a stale one if that path changed shape since.
  if (get(target)?.type === 'symlink') return `whose target ${target} became a symlink at run time`;
  for (let dir = posix.dirname(target); dir !== '/'; dir = posix.dirname(dir)) {
    const e = get(dir);
    if (e !== undefined && e.type !== 'dir') return `whose target path changed at run time (${dir} is no longer a directory)`;
  }
  return undefined;
}
