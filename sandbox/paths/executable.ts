/**
 * Execute-axis canonicalisation (product.md Appendix A): a path is compared by
 * its realpath inside the image, so `/bin/sh` and `/usr/bin/dash` agree on a
 * merged-/usr image. The resolver is injected — a container exec of
 * `realpath -e`, or `snapshotResolver` over an FsSnapshot — so this stays pure.
 */
import { hasRecursiveTail, isGlob, normalizePattern, staticPrefix } from './patterns.ts';
import type { FsSnapshot } from './snapshot.ts';
import { viewSnapshot } from './snapshot.ts';

/** realpath inside the image; undefined when the path does not exist there. */
export type RealpathResolver = (path: string) => Promise<string | undefined>;

/**
 * Canonicalise one execute-axis pattern. An exact path becomes its realpath; a
 * glob or `/**` pattern keeps its wildcard tail and has its static directory
 * prefix realpath'd. Unresolvable paths come back normalised but unchanged
 * (they will simply match nothing).
 */
export async function canonicalizeExecutable(path: string, resolve: RealpathResolver): Promise<string> {
  const pattern = normalizePattern(path);
  const lookup = lookupPath(pattern);
  return rebuild(pattern, lookup, await resolve(lookup));
}

/** A synchronous realpath over a snapshot, for the batch form and the compiler. */
export function snapshotResolver(snapshot: FsSnapshot): (path: string) => string | undefined {
  const view = viewSnapshot(snapshot);
  return (path) => view.realpath(normalizePattern(path));
}

/**
 * Canonicalise many execute-axis patterns against one snapshot. Order is kept.
 * Resolves through every symlink that has a target: to leave out links made at
 * run time, pass the trusted copy (`trustSnapshot`), as the compiler does.
 */
export function canonicalizeExecutables(paths: readonly string[], snapshot: FsSnapshot): string[] {
  const resolve = snapshotResolver(snapshot);
  return paths.map((p) => canonicalizeSync(p, resolve));
}

function canonicalizeSync(path: string, resolve: (p: string) => string | undefined): string {
  const pattern = normalizePattern(path);
  const lookup = lookupPath(pattern);
  return rebuild(pattern, lookup, resolve(lookup));
}

/** The part of a pattern that names a concrete path: all of it, or its static prefix. */
function lookupPath(pattern: string): string {
  return isGlob(pattern) || hasRecursiveTail(pattern) ? staticPrefix(pattern) : pattern;
}

function rebuild(pattern: string, lookup: string, real: string | undefined): string {
  if (real === undefined || real === lookup) return pattern;
  if (lookup === pattern) return real;
  return normalizePattern(`${real}/${pattern.slice(lookup.length)}`);
}
