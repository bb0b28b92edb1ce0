/**
 * Minimality by delta debugging (Zeller's ddmin) over gold entries. `test`
 * runs the oracle with a subset of the entries (plus support and implicit,
 * which the caller adds) and says whether its validator still passes.
 *
 * Order of work: the full set (it must pass, else the gold is not sufficient
 * and nothing is removed), the empty set (shortcut when no entry matters),
 * then ddmin to a 1-minimal subset, then one removal test per entry of that
 * subset against the full set.
 *
 * - necessary: entries of the 1-minimal subset (removing any one of them from
 *   it breaks the oracle).
 * - alternatives: necessary entries the oracle can still do without when only
 *   that one is removed from the full set — another entry stands in for it.
 * - notNeeded: every other entry (the oracle passed without them together).
 * When the time budget runs out, the current passing subset is reported as
 * necessary (unproven) and `budgetExhausted` is set. Results are memoised per
 * subset, so a non-monotone oracle cannot make ddmin loop.
 */
import { AXES, mapAxes, type Axis } from './axes.ts';
import type { GoldFile } from './schema.ts';

export interface MinimizeProgress {
  phase: 'full' | 'empty' | 'ddmin' | 'alternatives';
  tests: number;
  /** Size of the smallest passing subset found so far. */
  size: number;
}

export interface MinimizeOptions {
  /** Stop after this many milliseconds (checked before each test). Default: no limit. */
  budgetMs?: number | undefined;
  onProgress?: ((p: MinimizeProgress) => void) | undefined;
  /** Clock in milliseconds (injectable for tests). Default performance.now. */
  now?: (() => number) | undefined;
}

export interface MinimizeResult<T> {
  /** The full set passed. When false nothing was ablated and every entry is reported necessary. */
  sufficient: boolean;
  /** The smallest passing subset found (1-minimal unless the budget ran out). */
  minimal: T[];
  necessary: T[];
  alternatives: T[];
  notNeeded: T[];
  budgetExhausted: boolean;
  tests: number;
}

class BudgetExhausted extends Error {}

export async function minimize<T>(
  entries: readonly T[],
  test: (subset: readonly T[]) => Promise<boolean>,
  options: MinimizeOptions = {},
): Promise<MinimizeResult<T>> {
  const now = options.now ?? (() => performance.now());
  const deadline = options.budgetMs === undefined ? Infinity : now() + options.budgetMs;
  const cache = new Map<string, boolean>();
  let tests = 0;
  let phase: MinimizeProgress['phase'] = 'full';
  const all = entries.map((_, i) => i);
  let current = all;

  const run = async (subset: readonly number[], force = false): Promise<boolean> => {
    const key = subset.join(',');
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    if (!force && now() >= deadline) throw new BudgetExhausted('minimize: time budget exhausted');
    tests += 1;
    const ok = await test(subset.map((i) => entries[i] as T));
    cache.set(key, ok);
    options.onProgress?.({ phase, tests, size: ok && subset.length < current.length ? subset.length : current.length });
    return ok;
  };

  const result = (necessary: readonly number[], alternatives: readonly number[], exhausted: boolean, sufficient = true): MinimizeResult<T> => {
    const keep = new Set(necessary);
    const pick = (idx: Iterable<number>) => [...idx].sort((a, b) => a - b).map((i) => entries[i] as T);
    return {
      sufficient,
      minimal: pick(keep),
      necessary: pick(keep),
      alternatives: pick(alternatives),
      notNeeded: pick(all.filter((i) => !keep.has(i))),
      budgetExhausted: exhausted,
      tests,
    };
  };

  if (!(await run(all, true))) return result(all, [], false, false);
  try {
    phase = 'empty';
    if (all.length === 0 || (await run([]))) return result([], [], false);
    phase = 'ddmin';
    current = await ddmin(all, run, (c) => {
      current = c;
    });
    phase = 'alternatives';
    const alternatives: number[] = [];
    for (const i of current) {
      if (await run(all.filter((j) => j !== i))) alternatives.push(i);
    }
    return result(current, alternatives, false);
  } catch (e) {
    if (e instanceof BudgetExhausted) return result(current, [], true);
    throw e;
  }
}

async function ddmin(
  start: readonly number[],
  run: (subset: readonly number[]) => Promise<boolean>,
  progress: (c: number[]) => void,
): Promise<number[]> {
  let c = [...start];
  let n = 2;
  while (c.length >= 2) {
    const chunks = split(c, n);
    let reduced = false;
    for (const chunk of chunks) {
      if (await run(chunk)) {
        c = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      for (const chunk of chunks) {
        const drop = new Set(chunk);
        const complement = c.filter((i) => !drop.has(i));
        if (await run(complement)) {
          c = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) {
      progress(c);
      continue;
    }
    if (n >= c.length) break;
    n = Math.min(c.length, n * 2);
  }
  return c;
}

function split(c: readonly number[], n: number): number[][] {
  const out: number[][] = [];
  let from = 0;
  for (let i = 0; i < n; i++) {
    const to = from + Math.floor((c.length - from) / (n - i));
    out.push(c.slice(from, to));
    from = to;
  }
  return out.filter((chunk) => chunk.length > 0);
}

/** One gold entry: an axis and a required path. */
export interface GoldEntry {
  axis: Axis;
  path: string;
}

/** The required entries of a gold file, in axis then path order: what `minimize` ablates. */
export function goldEntries(gold: GoldFile): GoldEntry[] {
  return AXES.flatMap((axis) => gold.required[axis].map((path) => ({ axis, path })));
}

/** The gold file with its `minimal` section set from a minimize result over goldEntries. */
export function withMinimal(gold: GoldFile, result: MinimizeResult<GoldEntry>): GoldFile {
  const byAxis = (list: readonly GoldEntry[]) => mapAxes((axis) => list.filter((e) => e.axis === axis).map((e) => e.path));
  return {
    ...gold,
    minimal: {
      necessary: byAxis(result.necessary),
      not_needed: byAxis(result.notNeeded),
      budget_exhausted: result.budgetExhausted,
      tests: result.tests,
    },
  };
}
