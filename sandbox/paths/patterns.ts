/**
 * Path patterns as AuthBench defines them (product.md Appendix A): absolute
 * POSIX paths, `\` read as `/`, normalised, `* ? [...]` matching within one
 * segment, an optional trailing `/**` that matches the base and everything
 * below. Pure: no filesystem access.
 */
import { posix } from 'node:path';
import { Minimatch } from 'minimatch';

const GLOB_CHARS = /[*?[]/;
const SEGMENT_OPTIONS = { dot: true, nobrace: true, noext: true, noglobstar: true, nocomment: true, nonegate: true } as const;

/** Normalise slashes, `.`, `..` and `//`; keeps a trailing `/**`. Does not validate. */
export function normalizePattern(raw: string): string {
  const slashed = raw.replaceAll('\\', '/');
  const normal = posix.normalize(slashed);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** Why a pattern is invalid, or undefined when it is valid. Expects a normalised pattern. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'empty path';
  if (!pattern.startsWith('/')) return 'not an absolute path';
  const body = pattern.endsWith('/**') ? pattern.slice(0, -3) : pattern;
  if (body.includes('**')) return '`**` is only allowed as a trailing `/**`';
  return undefined;
}

export function isGlob(pattern: string): boolean {
  const body = pattern.endsWith('/**') ? pattern.slice(0, -3) : pattern;
  return GLOB_CHARS.test(body);
}

export function hasRecursiveTail(pattern: string): boolean {
  return pattern === '/**' || pattern.endsWith('/**');
}

/** The longest leading run of glob-free segments: the directory a pattern cannot leave. */
export function staticPrefix(pattern: string): string {
  const base = hasRecursiveTail(pattern) ? pattern.slice(0, -3) || '/' : pattern;
  const segments = base.split('/');
  const fixed: string[] = [];
  for (const s of segments) {
    if (GLOB_CHARS.test(s)) break;
    fixed.push(s);
  }
  const joined = fixed.join('/');
  return joined === '' ? '/' : joined;
}

/** Does `pattern` cover the absolute, normalised `path`? Case-sensitive. */
export function covers(pattern: string, path: string): boolean {
  if (hasRecursiveTail(pattern)) {
    const base = pattern.slice(0, -3);
    if (base === '') return path.startsWith('/');
    const baseSegs = base.split('/');
    const pathSegs = path.split('/');
    if (pathSegs.length < baseSegs.length) return false;
    return baseSegs.every((seg, i) => segmentMatches(seg, pathSegs[i] ?? ''));
  }
  const patSegs = pattern.split('/');
  const pathSegs = path.split('/');
  if (patSegs.length !== pathSegs.length) return false;
  return patSegs.every((seg, i) => segmentMatches(seg, pathSegs[i] ?? ''));
}

/** Compiled segment globs: a compile matches one pattern against thousands of entries. Bounded; pure in effect. */
const segmentMatchers = new Map<string, Minimatch>();
const SEGMENT_MATCHERS_MAX = 4096;

function segmentMatches(patternSeg: string, pathSeg: string): boolean {
  if (!GLOB_CHARS.test(patternSeg)) return patternSeg === pathSeg;
  let m = segmentMatchers.get(patternSeg);
  if (m === undefined) {
    if (segmentMatchers.size >= SEGMENT_MATCHERS_MAX) segmentMatchers.clear();
    m = new Minimatch(patternSeg, SEGMENT_OPTIONS);
    segmentMatchers.set(patternSeg, m);
  }
  return m.match(pathSeg);
}

/** Is `path` (exact, normalised) equal to `root` or below it? */
export function isWithin(root: string, path: string): boolean {
  if (root === '/') return path.startsWith('/');
  return path === root || path.startsWith(`${root}/`);
}

/** Does every path the pattern can cover lie within `root`? */
export function patternWithin(root: string, pattern: string): boolean {
  return isWithin(root, staticPrefix(pattern));
}

/**
 * Can the pattern cover `root` or anything below it? (`/**`, `/opt/**` and
 * `/opt/*` reach into `/opt/authbench`; `/opt` and `/app/**` do not.)
 */
export function patternReaches(pattern: string, root: string): boolean {
  // Every compile asks this of each of the policy's entries and each reserved path, again per command.
  const key = `${pattern}\0${root}`;
  let reaches = reachCache.get(key);
  if (reaches === undefined) {
    if (reachCache.size >= REACH_CACHE_MAX) reachCache.clear();
    reaches = computeReaches(pattern, root);
    reachCache.set(key, reaches);
  }
  return reaches;
}

/** patternReaches by pattern and root. Bounded; pure in effect. */
const reachCache = new Map<string, boolean>();
const REACH_CACHE_MAX = 16_384;

function computeReaches(pattern: string, root: string): boolean {
  if (covers(pattern, root)) return true;
  if (root === '/') return pattern.startsWith('/');
  const body = hasRecursiveTail(pattern) ? pattern.slice(0, -3) : pattern;
  const segs = body.split('/');
  const rootSegs = root.split('/');
  // A longer pattern reaches below the root when its leading segments cover the root itself.
  return segs.length > rootSegs.length && covers(segs.slice(0, rootSegs.length).join('/'), root);
}
