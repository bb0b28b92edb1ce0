/** Number and cell formatting shared by the terminal tables and the HTML. Pure. */
import type { Verdict } from '../stats/index.ts';
import type { Cell, EndpointEntry, Interval } from './build.ts';

export const NA_TEXT = 'N/A';

export function num(x: number | null | undefined, digits = 4): string {
  return x === null || x === undefined ? NA_TEXT : x.toFixed(digits);
}

export function interval(ci: Interval | null, digits = 4): string {
  return ci === null ? '–' : `[${ci.lower.toFixed(digits)}, ${ci.upper.toFixed(digits)}]`;
}

/** `0.4000 [0.1000, 0.7000] n=10`, or `N/A` (with the N/A count) when the metric does not apply. */
export function cellText(c: Cell | undefined, digits = 4): string {
  if (c === undefined) return '';
  if (c.mean === null) return NA_TEXT;
  return `${c.mean.toFixed(digits)} ${interval(c.ci, digits)} n=${c.n}`;
}

/** `2/10 = 0.2000`, or `0/10, ≤ 0.2589 (95%, 10 clusters)` when no event happened. */
export function endpointText(e: EndpointEntry, digits = 4): string {
  if (e.n === 0) return NA_TEXT;
  if (e.zero_event !== null) {
    const b = e.zero_event;
    return `0/${e.n}, ≤ ${b.exact.toFixed(digits)} (${Math.round(b.level * 100)}%, ${b.n_clusters} cluster${b.n_clusters === 1 ? '' : 's'})`;
  }
  return `${e.events}/${e.n} = ${num(e.mean, digits)}`;
}

/** A CI crossing zero is printed as a tie whatever the point estimate says. */
export function verdictLabel(verdict: Verdict | null, a: string, b: string): string {
  switch (verdict) {
    case 'A higher':
      return `${a} higher`;
    case 'B higher':
      return `${b} higher`;
    case 'tie':
      return 'tie';
    case null:
      return 'no pairs';
  }
}
