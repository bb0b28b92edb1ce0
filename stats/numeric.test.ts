import { describe, expect, it } from 'vitest';
import { byTuple, groupSorted, mean, quantileSorted, sampleVariance } from './numeric.ts';

describe('numeric helpers', () => {
  it('mean and sample variance (divisor n − 1), null when undefined', () => {
    const xs = [2, 4, 4, 4, 5, 5, 7, 9];
    expect(mean(xs)).toBe(5);
    expect(sampleVariance(xs)).toBeCloseTo(32 / 7, 12);
    expect(mean([])).toBeNull();
    expect(sampleVariance([3])).toBeNull();
  });

  it.each([
    [0, 1],
    [0.25, 1.75],
    [0.5, 2.5],
    [0.9, 3.7],
    [1, 4],
  ])('type-7 quantile of [1,2,3,4] at %s is %s', (p, q) => {
    expect(quantileSorted([1, 2, 3, 4], p)).toBeCloseTo(q, 12);
  });

  it('orders tuples element by element, not by their joined text', () => {
    expect(byTuple(['a', 'z'], ['a b', 'a'])).toBeLessThan(0);
    const groups = groupSorted(['b2', 'a1', 'b1', 'a2'], (s) => [s.slice(0, 1)]);
    expect(groups).toEqual([
      [['a'], ['a1', 'a2']],
      [['b'], ['b2', 'b1']],
    ]);
  });
});
