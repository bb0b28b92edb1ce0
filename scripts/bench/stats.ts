/** Summaries of repeated timings. Pure. Medians, because this shared machine's noise is one-sided (stalls). */

export interface Summary {
  n: number;
  median: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
}

/** Linear-interpolated quantile of an unsorted sample (q in [0, 1]). */
export function quantile(sample: readonly number[], q: number): number {
  if (sample.length === 0) throw new RangeError('quantile of an empty sample');
  if (q < 0 || q > 1) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const sorted = [...sample].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] ?? 0;
  const b = sorted[hi] ?? 0;
  return a + (b - a) * (pos - lo);
}

export function median(sample: readonly number[]): number {
  return quantile(sample, 0.5);
}

export function summarize(sample: readonly number[]): Summary {
  return {
    n: sample.length,
    median: median(sample),
    p25: quantile(sample, 0.25),
    p75: quantile(sample, 0.75),
    min: Math.min(...sample),
    max: Math.max(...sample),
  };
}

/** Ratio of medians; NaN when the baseline is zero (never happens with real timings, but never divide silently). */
export function ratio(value: Summary, baseline: Summary): number {
  return baseline.median === 0 ? Number.NaN : value.median / baseline.median;
}

export type Verdict = 'ok' | 'over';

/** Informational only: the benchmark never fails on it. */
export function verdict(value: number, limit: number): Verdict {
  return value <= limit ? 'ok' : 'over';
}
