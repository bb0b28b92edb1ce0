import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stratifiedMeans } from './means.ts';
import { row } from './test-rows.ts';

describe('stratifiedMeans', () => {
  it('averages per (defense, stage) over applicable rows only, never pooling stages', () => {
    const rows = [
      row({ scenario: 's1', defense: 'B', stage: 'security', metrics: { m: 1 } }),
      row({ scenario: 's2', defense: 'B', stage: 'security', metrics: { m: 0 } }),
      row({ scenario: 's3', defense: 'B', stage: 'security', metrics: { m: null } }),
      row({ scenario: 's4', defense: 'B', stage: 'security', metrics: { m: 1 } }),
      row({ scenario: 'c1', defense: 'B', stage: 'clean', metrics: { m: null } }),
      row({ scenario: 'c1', defense: 'A', stage: 'clean', metrics: { m: 0.5 } }),
      row({ scenario: 'c2', defense: 'A', stage: 'clean', metrics: {} }),
    ];
    expect(stratifiedMeans(rows, 'm')).toEqual([
      { defense: 'A', stage: 'clean', n: 1, n_na: 1, mean: 0.5 },
      { defense: 'B', stage: 'clean', n: 0, n_na: 1, mean: null },
      { defense: 'B', stage: 'security', n: 3, n_na: 1, mean: 2 / 3 },
    ]);
  });

  it('property: n + n_na counts every row, and the mean lies within the values', () => {
    const cell = fc.record({
      defense: fc.constantFrom('A', 'B'),
      stage: fc.constantFrom('security', 'clean'),
      value: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(cell, { maxLength: 40 }), (cells) => {
        const rows = cells.map((c, i) => row({ scenario: `s${i}`, defense: c.defense, stage: c.stage, metrics: { m: c.value } }));
        const strata = stratifiedMeans(rows, 'm');
        expect(strata.reduce((s, x) => s + x.n + x.n_na, 0)).toBe(rows.length);
        for (const s of strata) {
          const values = cells.filter((c) => c.defense === s.defense && c.stage === s.stage && c.value !== null).map((c) => c.value as number);
          expect(s.n).toBe(values.length);
          if (s.mean === null) expect(values).toHaveLength(0);
          else {
            expect(s.mean).toBeGreaterThanOrEqual(Math.min(...values) - 1e-12);
            expect(s.mean).toBeLessThanOrEqual(Math.max(...values) + 1e-12);
          }
        }
      }),
    );
  });
});
