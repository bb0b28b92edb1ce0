import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stageContribution } from './stage-contribution.ts';
import { row } from './test-rows.ts';
import type { StatsRow } from './schema.ts';

/** n pairs in one stage with constant values a (defense A) and b (defense B). */
function stage(name: string, n: number, a: number, b: number): StatsRow[] {
  return Array.from({ length: n }, (_, i) => [
    row({ scenario: `${name}-${i}`, stage: name, defense: 'A', metrics: { br: a } }),
    row({ scenario: `${name}-${i}`, stage: name, defense: 'B', metrics: { br: b } }),
  ]).flat();
}

describe('stageContribution', () => {
  it('hand example: weights by pair share, gaps B − A, shares of the aggregate', () => {
    // s: 3 pairs, A mean 1/3, B mean 1 → gap 2/3, weight 3/4, weighted ½
    // t: 1 pair, A 1, B 0 → gap −1, weight ¼, weighted −¼; aggregate ½ − ¼ = ¼
    const rows = [
      row({ scenario: 'a', stage: 's', defense: 'A', metrics: { br: 1 } }),
      row({ scenario: 'a', stage: 's', defense: 'B', metrics: { br: 1 } }),
      row({ scenario: 'b', stage: 's', defense: 'A', metrics: { br: 0 } }),
      row({ scenario: 'b', stage: 's', defense: 'B', metrics: { br: 1 } }),
      row({ scenario: 'c', stage: 's', defense: 'A', metrics: { br: 0 } }),
      row({ scenario: 'c', stage: 's', defense: 'B', metrics: { br: 1 } }),
      row({ scenario: 'd', stage: 't', defense: 'A', metrics: { br: 1 } }),
      row({ scenario: 'd', stage: 't', defense: 'B', metrics: { br: 0 } }),
      row({ scenario: 'e', stage: 't', defense: 'A', metrics: { br: 1 } }),
    ];
    const c = stageContribution(rows, 'br', 'A', 'B');
    expect(c).toMatchObject({ n: 4, mean_a: 0.5, mean_b: 0.75, aggregate_gap: 0.25, unpaired: { only_a: 1 } });
    expect(c.stages.map((s) => s.stage)).toEqual(['s', 't']);
    const [s, t] = c.stages;
    expect([s?.n, s?.weight, s?.mean_a, s?.mean_b]).toEqual([3, 0.75, 1 / 3, 1]);
    expect(s?.gap).toBeCloseTo(2 / 3, 12);
    expect(s?.weighted_gap).toBeCloseTo(0.5, 12);
    expect(s?.share).toBeCloseTo(2, 12);
    expect([t?.weight, t?.gap, t?.weighted_gap, t?.share]).toEqual([0.25, -1, -0.25, -1]);
  });

  it('reproduces paper Table 13 from its (rounded) stage means', () => {
    const rows = [
      ...stage('security', 960, 0.664, 0.6624),
      ...stage('active-tainted', 600, 0.8394, 0.8236),
      ...stage('memory-recovery', 480, 0.5249, 0.3858),
      ...stage('clean', 480, 0, 0),
    ];
    // Tool-boundary is A, v2 is B; the paper prints A − B, so the weighted gaps flip sign here.
    const c = stageContribution(rows, 'br', 'A', 'B');
    expect(c.aggregate_gap).toBeCloseTo(-0.0309, 3);
    const byStage = Object.fromEntries(c.stages.map((s) => [s.stage, s]));
    expect(byStage['security']?.weighted_gap).toBeCloseTo(-0.0006, 4);
    expect(byStage['active-tainted']?.weighted_gap).toBeCloseTo(-0.003769, 4);
    expect(byStage['memory-recovery']?.weighted_gap).toBeCloseTo(-0.026508, 4);
    expect(byStage['clean']?.share).toBe(0);
    expect(byStage['security']?.share).toBeCloseTo(0.0194, 3);
    expect(byStage['active-tainted']?.share).toBeCloseTo(0.1221, 3);
    expect(byStage['memory-recovery']?.share).toBeCloseTo(0.8585, 3);
  });

  it('a zero aggregate gap leaves shares null instead of dividing by 0', () => {
    const c = stageContribution([...stage('s', 1, 0, 1), ...stage('t', 1, 1, 0)], 'br', 'A', 'B');
    expect(c.aggregate_gap).toBe(0);
    expect(c.stages.map((s) => s.share)).toEqual([null, null]);
  });

  it('property: weights sum to 1, weighted gaps to the aggregate gap, shares to 1', () => {
    const pair = fc.record({
      stage: fc.constantFrom('security', 'active-tainted', 'clean', 'memory-recovery'),
      a: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null, freq: 8 }),
      b: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(pair, { minLength: 1, maxLength: 60 }), (pairs) => {
        const rows = pairs.flatMap((p, i) => [
          row({ scenario: `s${i}`, stage: p.stage, defense: 'A', metrics: { br: p.a } }),
          row({ scenario: `s${i}`, stage: p.stage, defense: 'B', metrics: { br: p.b } }),
        ]);
        const c = stageContribution(rows, 'br', 'A', 'B');
        if (c.aggregate_gap === null) {
          expect(c.n).toBe(0);
          return;
        }
        expect(c.aggregate_gap).toBeCloseTo((c.mean_b ?? 0) - (c.mean_a ?? 0), 9);
        expect(c.stages.reduce((s, x) => s + x.weight, 0)).toBeCloseTo(1, 9);
        expect(c.stages.reduce((s, x) => s + x.weighted_gap, 0)).toBeCloseTo(c.aggregate_gap, 9);
        if (Math.abs(c.aggregate_gap) > 1e-6) expect(c.stages.reduce((s, x) => s + (x.share ?? 0), 0)).toBeCloseTo(1, 6);
      }),
    );
  });
});
