/**
 * Expand(P) of product.md Appendix A over one axis' candidate set, fast
 * enough to score thousands of policies. `covers` (sandbox/paths) stays the
 * definition of a match; this index only avoids asking it needlessly:
 *
 * - a pattern can only cover paths within its static prefix, and in a sorted
 *   array those form one contiguous run (binary search);
 * - `covers` compares segment by segment, so candidates are split once and a
 *   glob segment is asked about each distinct name once (`covers('/seg',
 *   '/name')`), literal segments by string equality; a name that lacks the
 *   segment's literal head or tail is rejected without asking;
 * - whole expansions are memoised per pattern, since the policies of one
 *   batch share most of their entries.
 *
 * expand.test.ts checks the result against brute-force `covers`.
 */
import { compareStrings } from '../core/index.ts';
import { covers, hasRecursiveTail, isGlob, staticPrefix } from '../sandbox/paths/index.ts';

/** What one pattern contributes: candidate indices, plus the path itself for an exact non-candidate. */
export interface Expansion {
  /** Indices into `AxisIndex.paths`, ascending. */
  readonly hits: readonly number[];
  /** An exact pattern that is neither a candidate nor an existing directory. */
  readonly extra: string | undefined;
}

const NOTHING: Expansion = { hits: [], extra: undefined };

/** Memo caps, so a long-lived index cannot grow without bound. */
const MAX_MEMO_PATTERNS = 50_000;
const MAX_MEMO_SEGMENT_PAIRS = 2_000_000;

export class AxisIndex {
  /** C_a, sorted by code unit (the order binary search relies on). */
  readonly paths: readonly string[];
  readonly #position: ReadonlyMap<string, number>;
  readonly #dirs: ReadonlySet<string>;
  readonly #segments: (readonly string[] | undefined)[];
  readonly #expansions = new Map<string, Expansion>();
  readonly #segmentMatches = new Map<string, Map<string, boolean>>();
  #segmentPairs = 0;

  constructor(paths: Iterable<string>, dirs: ReadonlySet<string>) {
    this.paths = [...new Set(paths)].sort(compareStrings);
    this.#position = new Map(this.paths.map((p, i) => [p, i]));
    this.#dirs = dirs;
    this.#segments = new Array<readonly string[] | undefined>(this.paths.length);
  }

  get size(): number {
    return this.paths.length;
  }

  indexOf(path: string): number | undefined {
    return this.#position.get(path);
  }

  /** Expand one normalised (and, on the execute axis, canonicalised) pattern. */
  expand(pattern: string): Expansion {
    let out = this.#expansions.get(pattern);
    if (out === undefined) {
      out = this.#compute(pattern);
      if (this.#expansions.size >= MAX_MEMO_PATTERNS) this.#expansions.clear();
      this.#expansions.set(pattern, out);
    }
    return out;
  }

  #compute(pattern: string): Expansion {
    const recursive = hasRecursiveTail(pattern);
    if (!recursive && !isGlob(pattern)) {
      const i = this.#position.get(pattern);
      if (i !== undefined) return { hits: [i], extra: undefined };
      return this.#dirs.has(pattern) ? NOTHING : { hits: [], extra: pattern };
    }
    const base = recursive ? pattern.slice(0, -3) : pattern;
    const want = base === '' ? [''] : base.split('/');
    const tests = want.map((seg) => (isGlob(`/${seg}`) ? this.#segmentTest(seg) : undefined));
    const hits: number[] = [];
    const [lo, hi] = this.#rangeWithin(staticPrefix(pattern));
    for (let i = lo; i < hi; i++) {
      const segs = this.#segmentsOf(i);
      if (recursive ? segs.length < want.length : segs.length !== want.length) continue;
      let ok = true;
      for (let s = 1; s < want.length && ok; s++) {
        const test = tests[s];
        const name = segs[s] ?? '';
        ok = test === undefined ? want[s] === name : test(name);
      }
      if (ok) hits.push(i);
    }
    return { hits, extra: undefined };
  }

  /**
   * [lo, hi) holding every path equal to `dir` or below it. Siblings that sort
   * between `dir` and `dir/` (`dir-x`, `dir.x`) fall inside too; the segment
   * comparison rejects them.
   */
  #rangeWithin(dir: string): [number, number] {
    if (dir === '/') return [0, this.paths.length];
    // '0' is the code unit right after '/', so `dir0` bounds the `dir/…` run.
    return [lowerBound(this.paths, dir), lowerBound(this.paths, `${dir}0`)];
  }

  #segmentsOf(i: number): readonly string[] {
    let segs = this.#segments[i];
    if (segs === undefined) {
      segs = (this.paths[i] ?? '').split('/');
      this.#segments[i] = segs;
    }
    return segs;
  }

  /** One glob segment against one name, through `covers` on one-segment paths, memoised. */
  #segmentTest(seg: string): (name: string) => boolean {
    let memo = this.#segmentMatches.get(seg);
    if (memo === undefined) {
      memo = new Map();
      this.#segmentMatches.set(seg, memo);
    }
    const table = memo;
    const pattern = `/${seg}`;
    const { head, tail } = literalEnds(seg);
    return (name) => {
      let hit = table.get(name);
      if (hit === undefined) {
        hit = name.startsWith(head) && name.endsWith(tail) && covers(pattern, `/${name}`);
        if (this.#segmentPairs >= MAX_MEMO_SEGMENT_PAIRS) {
          for (const m of this.#segmentMatches.values()) m.clear();
          this.#segmentPairs = 0;
        }
        table.set(name, hit);
        this.#segmentPairs++;
      }
      return hit;
    };
  }
}

/**
 * The literal text a glob segment starts and ends with — before the first and
 * after the last of `* ? [ ]`. Any name the segment matches starts and ends
 * with them (a literal `]` or an unclosed `[` only makes them shorter), so
 * they reject most names before `covers` is asked; they never accept one.
 */
export function literalEnds(seg: string): { head: string; tail: string } {
  const first = seg.search(/[*?[\]]/);
  let last = -1;
  for (let i = seg.length - 1; i >= 0; i--) {
    if ('*?[]'.includes(seg[i] ?? '')) {
      last = i;
      break;
    }
  }
  return first < 0 ? { head: seg, tail: '' } : { head: seg.slice(0, first), tail: seg.slice(last + 1) };
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] ?? '') < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
