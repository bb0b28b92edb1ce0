/**
 * Paths that belong to the harness, never to a policy: the launcher and the
 * tracer (`/opt/authbench`, the launcher's HARNESS_ROOT), the validators and
 * their verdict (`/tests`, `/logs/verifier`) and the reference solution
 * (`/solution`). The compiler grants nothing within them, whatever a policy
 * says. Callers that legitimately need one pass their own list (gold
 * derivation replays the reference solution from `/solution`).
 */
import { isWithin, normalizePattern } from '../paths/index.ts';
import type { SnapshotView } from '../paths/index.ts';

export const RESERVED_PATHS: readonly string[] = ['/opt/authbench', '/tests', '/logs/verifier', '/solution'];

/**
 * How the harness keeps each reserved path out of reach where a Landlock rule
 * on an ancestor (`/**`, `/opt/**`) cannot exclude it.
 */
const KEPT_AWAY: Readonly<Record<string, string>> = {
  '/opt/authbench': '/opt/authbench is a read-only mount',
  '/tests': '/tests is moved aside and replaced before validation',
  '/logs/verifier': '/logs/verifier is moved aside and replaced before validation',
  '/solution': '/solution is never present during an agent episode',
};

export function keptAway(reserved: string): string {
  return KEPT_AWAY[reserved] ?? `${reserved} is kept out of reach by the harness`;
}

/** A reserved path, or the realpath it has in a snapshot (grants land on realpaths). */
export interface ReservedPath {
  path: string;
  /** The reserved path as configured, for notes. */
  reserved: string;
}

/**
 * The reserved paths plus where each resolves in the given views, so a grant
 * reaching one through a symlinked ancestor (`/opt` -> `/var/opt`) is caught.
 */
export function expandReserved(reserved: readonly string[], views: readonly SnapshotView[]): ReservedPath[] {
  const out: ReservedPath[] = [];
  for (const raw of reserved) {
    const r = normalizePattern(raw);
    for (const path of [r, ...views.map((v) => v.realpath(r))]) {
      if (path !== undefined && !out.some((o) => o.path === path)) out.push({ path, reserved: r });
    }
  }
  return out;
}

/** The reserved path `path` lies within, if any. */
export function reservedFor(path: string, reserved: readonly ReservedPath[]): ReservedPath | undefined {
  return reserved.find((r) => isWithin(r.path, path));
}

/** "`path` is / lies within `reserved`, reserved for the harness", for notes. */
export function reservedPhrase(path: string, reserved: string): string {
  return path === reserved ? `${path} is reserved for the harness` : `${path} lies within ${reserved}, reserved for the harness`;
}
