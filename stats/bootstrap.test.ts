import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusterBootstrapCi, formatCi, formatVerdict, pairBootstrapCi, verdict, type ConfidenceInterval } from './bootstrap.ts';

describe('pair bootstrap', () => {
  it('a constant sample gives a zero-width interval at that constant', () => {
    const ci = pairBootstrapCi([0.25, 0.25, 0.25]);
    expect(ci).toMatchObject({ method: 'pairs', estimate: 0.25, lower: 0.25, upper: 0.25, n: 3, n_clusters: 3, resamples: 2000, level: 0.95, seed: 0 });
  });

  it('two values {0, 1}: resample means 0, ½, 1 with chances ¼, ½, ¼, so the 95% interval is [0, 1]', () => {
    const ci = pairBootstrapCi([0, 1], { seed: 7 });
    expect(ci).toMatchObject({ estimate: 0.5, lower: 0, upper: 1 });
    // at 40% the 30th and 70th percentiles both fall in the ½ block
    expect(pairBootstrapCi([0, 1], { seed: 7, level: 0.4 })).toMatchObject({ lower: 0.5, upper: 0.5 });
  });

  it('is reproducible for a seed and moves with the seed', () => {
    const values = Array.from({ length: 50 }, (_, i) => (i * 37) % 11);
    expect(pairBootstrapCi(values, { seed: 3 })).toEqual(pairBootstrapCi(values, { seed: 3 }));
    expect(pairBootstrapCi(values, { seed: 3 })).not.toEqual(pairBootstrapCi(values, { seed: 4 }));
  });

  it('is null for an empty sample and rejects bad options', () => {
    expect(pairBootstrapCi([])).toBeNull();
    expect(() => pairBootstrapCi([1], { resamples: 0 })).toThrow(/resamples/);
    expect(() => pairBootstrapCi([1], { level: 1 })).toThrow(/level/);
    expect(() => pairBootstrapCi([1], { seed: 0.5 })).toThrow(/seed/);
  });

  it('property: bounds are ordered and lie within the sample range', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 1, maxLength: 30 }), fc.nat(), (values, seed) => {
        const ci = pairBootstrapCi(values, { seed, resamples: 200 }) as ConfidenceInterval;
        expect(ci.lower).toBeLessThanOrEqual(ci.upper);
        expect(ci.lower).toBeGreaterThanOrEqual(Math.min(...values) - 1e-12);
        expect(ci.upper).toBeLessThanOrEqual(Math.max(...values) + 1e-12);
      }),
      { numRuns: 50 },
    );
  });
});

describe('scenario-cluster bootstrap', () => {
  it('one cluster: every resample is the whole sample, so the interval has zero width (the pair bootstrap does not)', () => {
    const values = [0, 1, 0, 1];
    const clusters = ['c', 'c', 'c', 'c'];
    expect(clusterBootstrapCi(values, clusters)).toMatchObject({ method: 'cluster', estimate: 0.5, lower: 0.5, upper: 0.5, n: 4, n_clusters: 1 });
    const pairs = pairBootstrapCi(values) as ConfidenceInterval;
    expect(pairs.upper - pairs.lower).toBeGreaterThan(0);
  });

  it('keeps all observations of a sampled cluster and pools them: X=[1,1,1], Y=[0]', () => {
    // draws XX, XY, YX, YY give pooled means 1, ¾, ¾, 0 (not the mean of cluster means, ½)
    const values = [1, 1, 1, 0];
    const clusters = ['X', 'X', 'X', 'Y'];
    expect(clusterBootstrapCi(values, clusters, { seed: 1 })).toMatchObject({ estimate: 0.75, lower: 0, upper: 1, n_clusters: 2 });
    expect(clusterBootstrapCi(values, clusters, { seed: 1, level: 0.4 })).toMatchObject({ lower: 0.75, upper: 0.75 });
  });

  it('does not depend on the order of the observations', () => {
    const values = [1, 0, 0.5, 0.25, 1, 0];
    const clusters = ['a', 'b', 'c', 'a', 'b', 'c'];
    const reversed = clusterBootstrapCi([...values].reverse(), [...clusters].reverse(), { seed: 9 });
    const forward = clusterBootstrapCi(values, clusters, { seed: 9 });
    expect(reversed?.lower).toBeCloseTo(forward?.lower ?? Number.NaN, 12);
    expect(reversed?.upper).toBeCloseTo(forward?.upper ?? Number.NaN, 12);
  });

  it('rejects mismatched cluster ids', () => {
    expect(() => clusterBootstrapCi([1, 2], ['a'])).toThrow(/2 values but 1 cluster ids/);
  });

  it('handles 2000 resamples over 3000 pairs in 300 clusters', () => {
    const values = Float64Array.from({ length: 3000 }, (_, i) => ((i * 7919) % 13) / 13 - 0.5);
    const clusters = Array.from({ length: 3000 }, (_, i) => `c${i % 300}`);
    const cluster = clusterBootstrapCi(values, clusters) as ConfidenceInterval;
    const pairs = pairBootstrapCi(values) as ConfidenceInterval;
    for (const ci of [cluster, pairs]) {
      expect(ci.lower).toBeLessThan(ci.estimate);
      expect(ci.upper).toBeGreaterThan(ci.estimate);
    }
  });
});

describe('verdict and formatting', () => {
  it.each([
    [0.1, 0.2, 'B higher'],
    [-0.2, -0.1, 'A higher'],
    [-0.1, 0.1, 'tie'],
    [0, 0.1, 'tie'],
    [-0.1, 0, 'tie'],
    [0, 0, 'tie'],
  ] as const)('[%s, %s] → %s', (lower, upper, expected) => {
    expect(verdict({ lower, upper })).toBe(expected);
  });

  it('formats an interval and names the higher defense', () => {
    const ci: ConfidenceInterval = { method: 'cluster', estimate: 0.6925, lower: 0.616, upper: 0.76374, level: 0.95, resamples: 2000, seed: 0, n: 600, n_clusters: 120 };
    expect(formatCi(ci)).toBe('0.6925 [0.6160, 0.7637]');
    expect(formatCi(null)).toBe('–');
    expect(formatVerdict(ci, 'taint-only', 'intent-ledger')).toBe('intent-ledger higher');
    expect(formatVerdict({ ...ci, lower: -0.1167, upper: -0.025 }, 'tool-boundary', 'intent-ledger')).toBe('tool-boundary higher');
    expect(formatVerdict({ ...ci, lower: -0.04, upper: 0.02 }, 'a', 'b')).toBe('tie (95% CI contains 0)');
    expect(formatVerdict(null, 'a', 'b')).toBe('no pairs');
  });
});
