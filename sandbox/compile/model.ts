/**
 * A pure model of what Landlock allows, and of what a policy allows, for the
 * same filesystem operations — so the two can be compared (property test,
 * docker test, attributing a denial to a policy entry).
 *
 * Kernel model: a path is resolved to its realpath (symlinks are followed;
 * Landlock does not control following them). An operation needs certain
 * rights on certain inodes (below); a right the ruleset does not handle at the
 * ABI is allowed; a handled right is allowed on inode X iff some rule whose
 * (resolved) path is X or an ancestor of X grants it.
 *
 *   read      file: read_file on it;   directory: read_dir on it (listing)
 *   write     file: write_file on it
 *   truncate  file: truncate on it
 *   execute   file: execute on it
 *   create    new regular file: make_reg and write_file beneath its directory
 *   mkdir     new directory: make_dir beneath its directory
 *   remove    unlink/rmdir: remove_file / remove_dir beneath its directory
 *
 * Policy model (the static decision): read → the read axis, execute → the
 * execute axis (canonicalised, compared with the realpath), everything else →
 * the write axis; a read/write pattern allows a path when it covers the path
 * as written or its realpath (Landlock cannot tell aliases apart).
 */
import { covers, canonicalizeExecutables, normalizePattern, isWithin, viewSnapshot } from '../paths/index.ts';
import type { FsSnapshot, SnapshotView } from '../paths/index.ts';
import type { Policy, PolicyAxis } from '../policy/index.ts';
import type { FsAccess, FsRule } from '../launcher/index.ts';
import { LATEST_LANDLOCK_ABI, handledFsAccess } from './access.ts';
import type { FidelityEntry, FidelityReport } from './fidelity.ts';
import { posix } from 'node:path';

export const FS_OPS = ['read', 'write', 'truncate', 'execute', 'create', 'mkdir', 'remove'] as const;
export type FsOp = (typeof FS_OPS)[number];

/** One right needed on the inode at `on` (a realpath) or on any ancestor rule. */
export interface Requirement {
  access: FsAccess;
  on: string;
}

/** The rights an operation needs, or undefined when it cannot happen at all (missing file, wrong type). */
export function requirements(snapshot: FsSnapshot, path: string, op: FsOp): Requirement[] | undefined {
  const view = viewSnapshot(snapshot);
  const p = normalizePattern(path);
  switch (op) {
    case 'read':
    case 'write':
    case 'truncate':
    case 'execute': {
      const real = view.realpath(p);
      const e = real === undefined ? undefined : view.get(real);
      if (real === undefined || e === undefined) return undefined;
      if (e.type === 'dir') return op === 'read' ? [{ access: 'read_dir', on: real }] : undefined;
      const access: Record<typeof op, FsAccess> = { read: 'read_file', write: 'write_file', truncate: 'truncate', execute: 'execute' };
      if (op === 'execute' && e.type !== 'file') return undefined;
      return [{ access: access[op], on: real }];
    }
    case 'create':
    case 'mkdir': {
      const placed = placeInParent(view, p);
      if (placed === undefined || view.get(placed.path) !== undefined) return undefined;
      return op === 'create'
        ? [
            { access: 'make_reg', on: placed.parent },
            { access: 'write_file', on: placed.parent },
          ]
        : [{ access: 'make_dir', on: placed.parent }];
    }
    case 'remove': {
      const placed = placeInParent(view, p);
      const e = placed === undefined ? undefined : view.get(placed.path);
      if (placed === undefined || e === undefined) return undefined;
      return [{ access: e.type === 'dir' ? 'remove_dir' : 'remove_file', on: placed.parent }];
    }
  }
}

/** The realpath of a path's directory, and the path's own (unresolved) name placed in it. */
function placeInParent(view: SnapshotView, path: string): { parent: string; path: string } | undefined {
  if (path === '/') return undefined;
  const parent = view.realpath(posix.dirname(path));
  if (parent === undefined || view.get(parent)?.type !== 'dir') return undefined;
  return { parent, path: posix.join(parent, posix.basename(path)) };
}

/** Does a Landlock ruleset with these rules (at this ABI) let the operation through? */
export function kernelAllows(
  rules: { fs: readonly FsRule[] },
  snapshot: FsSnapshot,
  path: string,
  op: FsOp,
  abi: number = LATEST_LANDLOCK_ABI,
): boolean {
  const needs = requirements(snapshot, path, op);
  if (needs === undefined) return false;
  const view = viewSnapshot(snapshot);
  const handled = new Set(handledFsAccess(abi));
  const resolved = rules.fs.map((r) => ({ path: view.realpath(r.path), access: r.access }));
  return needs.every(
    (n) => !handled.has(n.access) || resolved.some((r) => r.path !== undefined && isWithin(r.path, n.on) && r.access.includes(n.access)),
  );
}

/** The policy axis each operation is judged on. */
export const AXIS_OF: Record<FsOp, PolicyAxis> = {
  read: 'read',
  execute: 'execute',
  write: 'write',
  truncate: 'write',
  create: 'write',
  mkdir: 'write',
  remove: 'write',
};

/** The static decision: does the policy allow this operation on this path? */
export function policyAllows(policy: Pick<Policy, PolicyAxis>, snapshot: FsSnapshot, path: string, op: FsOp): boolean {
  if (requirements(snapshot, path, op) === undefined) return false;
  const view = viewSnapshot(snapshot);
  const p = normalizePattern(path);
  const axis = AXIS_OF[op];
  if (axis === 'execute') {
    const real = view.realpath(p);
    return real !== undefined && canonicalizeExecutables(policy.execute, snapshot).some((pat) => covers(pat, real));
  }
  const aliases = [p, aliasOf(view, p, op)].filter((a): a is string => a !== undefined);
  return policy[axis].some((pat) => aliases.some((a) => covers(normalizePattern(pat), a)));
}

function aliasOf(view: SnapshotView, path: string, op: FsOp): string | undefined {
  // A created or removed name is not followed (unlink removes the link itself); only its directory is.
  if (op === 'create' || op === 'mkdir' || op === 'remove') return placeInParent(view, path)?.path;
  return view.realpath(path);
}

/**
 * The report facets whose grants let this operation through — the answer to
 * "which entry allowed that?". An abi-limited facet explains a right the ABI
 * does not handle.
 */
export function explainAccess(report: FidelityReport, snapshot: FsSnapshot, path: string, op: FsOp): FidelityEntry[] {
  const needs = requirements(snapshot, path, op) ?? [];
  const view = viewSnapshot(snapshot);
  const handled = new Set(handledFsAccess(report.abi));
  return report.entries.filter((facet) =>
    needs.some((n) =>
      facet.kind === 'abi-limited'
        ? !handled.has(n.access) && facet.granted.some((g) => g.access.includes(n.access))
        : facet.granted.some((g) => {
            const at = view.realpath(g.path);
            return at !== undefined && isWithin(at, n.on) && g.access.includes(n.access);
          }),
    ),
  );
}
