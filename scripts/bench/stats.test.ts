import { describe, expect, it } from 'vitest';
import { plan } from './plan.ts';
import { median, quantile, ratio, summarize, verdict } from './stats.ts';

describe('quantile / median', () => {
  it.each([
    [[5], 0.5, 5],
    [[3, 1, 2], 0.5, 2],
    [[4, 1, 3, 2], 0.5, 2.5],
    [[10, 20, 30, 40, 50], 0.25, 20],
    [[10, 20], 0.75, 17.5],
    [[7, 1, 9], 0, 1],
    [[7, 1, 9], 1, 9],
  ])('quantile(%j, %d) = %d', (sample, q, expected) => {
    expect(quantile(sample, q)).toBeCloseTo(expected, 10);
  });

  it('does not reorder its input', () => {
    const sample = [3, 1, 2];
    median(sample);
    expect(sample).toEqual([3, 1, 2]);
  });

  it('rejects an empty sample and q outside [0, 1]', () => {
    expect(() => quantile([], 0.5)).toThrow(/empty/);
    expect(() => quantile([1], 1.5)).toThrow(/q must be/);
  });
});

describe('summarize / ratio / verdict', () => {
  it('summarizes a sample; a stall moves the max, not the median', () => {
    expect(summarize([10, 11, 12, 13, 500])).toEqual({ n: 5, median: 12, p25: 11, p75: 13, min: 10, max: 500 });
  });

  it('ratio is of medians, NaN over a zero baseline', () => {
    expect(ratio(summarize([30, 30, 99]), summarize([10, 20, 20]))).toBe(1.5);
    expect(ratio(summarize([1]), summarize([0]))).toBeNaN();
  });

  it.each([
    [1.49, 1.5, 'ok'],
    [1.5, 1.5, 'ok'],
    [1.51, 1.5, 'over'],
  ])('verdict(%d, %d) = %s', (value, limit, expected) => {
    expect(verdict(value, limit)).toBe(expected);
  });
});

describe('plan', () => {
  it('uses the requested reps for pinned and round-trip runs, fewer unpinned', () => {
    const p = plan(15, false);
    expect(p.pinned).toEqual({ warmup: 2, reps: 15 });
    expect(p.roundTrip).toEqual({ warmup: 2, reps: 15 });
    expect(p.unpinned.reps).toBe(8);
    expect(p.evalPath).toEqual({ warmup: 1, reps: 8 });
    expect(p.rollouts).toBeGreaterThanOrEqual(4);
  });

  it('never runs more unpinned rounds than asked for', () => {
    expect(plan(2, false).unpinned.reps).toBe(2);
  });

  it('--quick is CI-sized whatever --reps says', () => {
    const p = plan(40, true);
    expect(p.pinned.reps).toBe(5);
    expect(p.unpinned.reps).toBeLessThan(5);
    expect(p.evalPath.reps).toBeLessThan(5);
    expect(p.rollouts).toBeLessThan(plan(40, false).rollouts);
  });
});
