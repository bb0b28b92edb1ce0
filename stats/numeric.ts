/** Small numeric helpers shared by the statistics; all return null instead of NaN so results stay JSON. */
import { compareStrings } from '../core/index.ts';

export function mean(values: ArrayLike<number>): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] ?? 0;
  return sum / values.length;
}

/** Unbiased sample variance (divisor n − 1); null below two values. */
export function sampleVariance(values: ArrayLike<number>): number | null {
  const m = mean(values);
  if (m === null || values.length < 2) return null;
  let ss = 0;
  for (let i = 0; i < values.length; i++) ss += ((values[i] ?? 0) - m) ** 2;
  return ss / (values.length - 1);
}

/**
 * Quantile of ascending `sorted` at probability p by linear interpolation
 * between order statistics (Hyndman–Fan type 7, R's and NumPy's default),
 * so a CI endpoint does not jump with the resample count's parity.
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) throw new RangeError('quantile of an empty sample');
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const a = sorted[lo] ?? 0;
  const b = sorted[hi] ?? 0;
  return a + (h - lo) * (b - a);
}

/** Lexicographic order of string tuples, element by element. */
export function byTuple(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareStrings(a[i] ?? '', b[i] ?? '');
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/**
 * Group items by a tuple key; groups come back in tuple order so results do
 * not depend on input order.
 */
export function groupSorted<T>(items: Iterable<T>, key: (item: T) => readonly string[]): [readonly string[], T[]][] {
  const groups = new Map<string, [readonly string[], T[]]>();
  for (const item of items) {
    const k = key(item);
    const id = JSON.stringify(k);
    const group = groups.get(id);
    if (group === undefined) groups.set(id, [k, [item]]);
    else group[1].push(item);
  }
  return [...groups.values()].sort((x, y) => byTuple(x[0], y[0]));
}

/** num ÷ den, null when den is 0; never −0, which would not survive a JSON round trip. */
export function ratio(num: number, den: number): number | null {
  if (den === 0) return null;
  const r = num / den;
  return r === 0 ? 0 : r;
}
