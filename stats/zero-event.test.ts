import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { row } from './test-rows.ts';
import { isZeroEvent, zeroEventBounds, zeroEventUpperBound } from './zero-event.ts';

describe('zeroEventUpperBound', () => {
  it('reproduces the paper: 3/504 ≈ 0.60% over 504 clusters, 3/192 ≈ 1.56% over 192', () => {
    expect(zeroEventUpperBound(504).rule_of_three).toBeCloseTo(0.005952, 6);
    expect(zeroEventUpperBound(192).rule_of_three).toBe(0.015625);
    // exact: 1 − 0.05^(1/192) = 1 − exp(ln 0.05 / 192) = 1 − exp(−0.0156028) ≈ 0.015482
    expect(zeroEventUpperBound(192).exact).toBeCloseTo(0.015482, 6);
  });

  it('one cluster: the exact bound is the level itself, the rule of three is capped at 1', () => {
    expect(zeroEventUpperBound(1)).toEqual({ n_clusters: 1, level: 0.95, exact: 0.95, rule_of_three: 1 });
    expect(zeroEventUpperBound(10, 0.9).exact).toBeCloseTo(1 - 0.1 ** 0.1, 12);
  });

  it('rejects zero clusters and impossible levels', () => {
    expect(() => zeroEventUpperBound(0)).toThrow(/at least one cluster/);
    expect(() => zeroEventUpperBound(5, 0)).toThrow(/level/);
  });

  it('property: at 95% the exact bound sits below 3/n and both shrink as n grows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (n) => {
        const b = zeroEventUpperBound(n);
        const next = zeroEventUpperBound(n + 1);
        expect(b.exact).toBeLessThan(3 / n);
        expect(next.exact).toBeLessThan(b.exact);
        expect(next.rule_of_three).toBeLessThanOrEqual(b.rule_of_three);
      }),
    );
  });
});

describe('zeroEventBounds', () => {
  it('bounds only strata whose applicable values are all 0, counting clusters, not rollouts', () => {
    const rows = [
      // A: security all 0 over 3 rollouts in 2 clusters; clean has an event
      row({ scenario: 's1', cluster: 'k1', defense: 'A', metrics: { h: 0 } }),
      row({ scenario: 's2', cluster: 'k1', defense: 'A', metrics: { h: 0 } }),
      row({ scenario: 's3', cluster: 'k2', defense: 'A', metrics: { h: 0 } }),
      row({ scenario: 's4', cluster: 'k3', defense: 'A', stage: 'clean', metrics: { h: 1 } }),
      // B: zero everywhere it applies; its memory stage is N/A only
      row({ scenario: 's1', cluster: 'k1', defense: 'B', metrics: { h: 0 } }),
      row({ scenario: 's4', cluster: 'k3', defense: 'B', stage: 'clean', metrics: { h: 0 } }),
      row({ scenario: 's5', cluster: 'k4', defense: 'B', stage: 'memory', metrics: { h: null } }),
    ];
    expect(zeroEventBounds(rows, 'h').map((e) => [e.defense, e.stage, e.n, e.bound.n_clusters])).toEqual([
      ['A', 'security', 3, 2],
      ['B', null, 2, 2],
      ['B', 'clean', 1, 1],
      ['B', 'security', 1, 1],
    ]);
  });

  it('isZeroEvent needs at least one applicable value', () => {
    expect(isZeroEvent([])).toBe(false);
    expect(isZeroEvent([0, 0])).toBe(true);
    expect(isZeroEvent([0, 0.5])).toBe(false);
  });
});
