import { describe, expect, it } from 'vitest';
import { denominatorSensitivity } from './denominator.ts';
import { row } from './test-rows.ts';

const counts = (raw: number | null, reach: number | null) => ({ blast_radius_raw: raw, reachable_nodes: reach });

describe('denominatorSensitivity', () => {
  const rows = [
    // k1 (security): realized A 2/4, B 1/2, C 0/8; fixed max 8 → A 2/8, B 1/8, C 0
    row({ scenario: 'k1', defense: 'A', metrics: counts(2, 4) }),
    row({ scenario: 'k1', defense: 'B', metrics: counts(1, 2) }),
    row({ scenario: 'k1', defense: 'C', metrics: counts(0, 8) }),
    // k2 (clean): nothing reachable under A → denominator clipped to 1; fixed max 1
    row({ scenario: 'k2', stage: 'clean', defense: 'A', metrics: counts(0, 0) }),
    row({ scenario: 'k2', stage: 'clean', defense: 'B', metrics: counts(1, 1) }),
    // without both counts a row is left out
    row({ scenario: 'k3', defense: 'A', metrics: counts(5, null) }),
  ];

  it('computes means per defense and the paired delta under both denominators, all stages and per stage', () => {
    const d = denominatorSensitivity(rows, 'A', 'B');
    expect(d.scopes.map((s) => s.stage)).toEqual([null, 'clean', 'security']);
    const [all, clean, security] = d.scopes;
    expect(all?.realized).toEqual({
      means: [
        { defense: 'A', n: 2, mean: 0.25 },
        { defense: 'B', n: 2, mean: 0.75 },
        { defense: 'C', n: 1, mean: 0 },
      ],
      paired_delta: 0.5,
      n_pairs: 2,
    });
    expect(all?.fixed_max).toEqual({
      means: [
        { defense: 'A', n: 2, mean: 0.125 },
        { defense: 'B', n: 2, mean: 0.5625 },
        { defense: 'C', n: 1, mean: 0 },
      ],
      paired_delta: 0.4375,
      n_pairs: 2,
    });
    expect(security?.realized.paired_delta).toBe(0);
    expect(security?.fixed_max.paired_delta).toBe(-0.125);
    expect(clean?.fixed_max.means).toEqual([
      { defense: 'A', n: 1, mean: 0 },
      { defense: 'B', n: 1, mean: 1 },
    ]);
  });

  it('shows the ranking flip of early blocking: A stops early with a small realized region', () => {
    const flip = [row({ scenario: 'k', defense: 'A', metrics: counts(1, 2) }), row({ scenario: 'k', defense: 'B', metrics: counts(4, 10) })];
    const [all] = denominatorSensitivity(flip, 'A', 'B').scopes;
    // realized: A 0.5 > B 0.4; fixed (10): A 0.1 < B 0.4
    expect(all?.realized.paired_delta).toBeCloseTo(-0.1, 12);
    expect(all?.fixed_max.paired_delta).toBeCloseTo(0.3, 12);
  });
});
