import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countUnpaired, pairRows, pairedDelta, pairedWinRate } from './pairs.ts';
import { row } from './test-rows.ts';

const rows = [
  // s1, s2: pair on both seeds; s3: A has no row; s4: B has no row; s5: N/A under A; s6: N/A under both
  row({ scenario: 's2', defense: 'A', seed: 1, metrics: { m: 1 } }),
  row({ scenario: 's2', defense: 'B', seed: 1, metrics: { m: 1 } }),
  row({ scenario: 's1', defense: 'A', seed: 0, metrics: { m: 0 } }),
  row({ scenario: 's1', defense: 'B', seed: 0, metrics: { m: 1 } }),
  row({ scenario: 's1', defense: 'A', seed: 1, metrics: { m: 0.5 } }),
  row({ scenario: 's1', defense: 'B', seed: 1, metrics: { m: 0 } }),
  row({ scenario: 's3', defense: 'B', metrics: { m: 1 } }),
  row({ scenario: 's4', defense: 'A', metrics: { m: 1 } }),
  row({ scenario: 's5', defense: 'A', metrics: { m: null } }),
  row({ scenario: 's5', defense: 'B', metrics: { m: 0 } }),
  row({ scenario: 's6', defense: 'A', metrics: {} }),
  row({ scenario: 's6', defense: 'B', metrics: { m: null } }),
  row({ scenario: 's1', defense: 'C', seed: 0, metrics: { m: 9 } }),
];

describe('pairRows', () => {
  it('pairs by (scenario, model, seed) in key order and reports every unpaired key', () => {
    const paired = pairRows(rows, 'm', 'A', 'B');
    expect(paired.pairs.map((p) => [p.scenario, p.seed, p.a, p.b])).toEqual([
      ['s1', 0, 0, 1],
      ['s1', 1, 0.5, 0],
      ['s2', 1, 1, 1],
    ]);
    expect(paired.unpaired).toEqual({
      only_a: [{ scenario: 's4', model: 'm', seed: 0 }],
      only_b: [{ scenario: 's3', model: 'm', seed: 0 }],
      na_a: [{ scenario: 's5', model: 'm', seed: 0 }],
      na_b: [],
      na_both: 1,
    });
    expect(countUnpaired(paired.unpaired)).toEqual({ only_a: 1, only_b: 1, na_a: 1, na_b: 0, na_both: 1 });
  });

  it('does not pair across models', () => {
    const r = [row({ scenario: 's', defense: 'A', model: 'x', metrics: { m: 1 } }), row({ scenario: 's', defense: 'B', model: 'y', metrics: { m: 1 } })];
    const paired = pairRows(r, 'm', 'A', 'B');
    expect(paired.pairs).toEqual([]);
    expect(paired.unpaired.only_a).toHaveLength(1);
    expect(paired.unpaired.only_b).toHaveLength(1);
  });

  it('paired delta is the mean of B − A: (1 − 0.5 + 0) / 3', () => {
    expect(pairedDelta(pairRows(rows, 'm', 'A', 'B').pairs)).toBeCloseTo(0.5 / 3, 12);
    expect(pairedDelta([])).toBeNull();
  });

  it('win rate counts B > A, A > B and equal pairs', () => {
    expect(pairedWinRate(pairRows(rows, 'm', 'A', 'B').pairs)).toEqual({
      n: 3,
      b_higher: 1,
      a_higher: 1,
      equal: 1,
      share_b_higher: 1 / 3,
      share_a_higher: 1 / 3,
      share_equal: 1 / 3,
    });
    expect(pairedWinRate([]).share_equal).toBeNull();
  });

  it('refuses ambiguous input: a repeated key, a key split across stages, a defense against itself', () => {
    const dup = [...rows, row({ scenario: 's2', defense: 'B', seed: 1, metrics: { m: 0 } })];
    expect(() => pairRows(dup, 'm', 'A', 'B')).toThrow(/repeat one pair key under defense B/);
    const split = [row({ scenario: 's', defense: 'A', stage: 'clean', metrics: {} }), row({ scenario: 's', defense: 'B', metrics: {} })];
    expect(() => pairRows(split, 'm', 'A', 'B')).toThrow(/not their stage/);
    expect(() => pairRows(rows, 'm', 'A', 'A')).toThrow(/with itself/);
  });

  it('property: delta = mean(B) − mean(A) over pairs, whatever the row order', () => {
    const triple = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }));
    fc.assert(
      fc.property(fc.array(triple, { minLength: 1, maxLength: 30 }), fc.nat(), (values, turn) => {
        const built = values.flatMap(([a, b], i) => [
          row({ scenario: `s${i}`, defense: 'A', metrics: { m: a } }),
          row({ scenario: `s${i}`, defense: 'B', metrics: { m: b } }),
        ]);
        const k = turn % built.length;
        const shuffled = [...built.slice(k), ...built.slice(0, k)].reverse();
        const { pairs } = pairRows(shuffled, 'm', 'A', 'B');
        const meanA = values.reduce((s, [a]) => s + a, 0) / values.length;
        const meanB = values.reduce((s, [, b]) => s + b, 0) / values.length;
        expect(pairedDelta(pairs)).toBeCloseTo(meanB - meanA, 9);
        expect(pairs).toEqual(pairRows(built, 'm', 'A', 'B').pairs);
      }),
    );
  });
});
