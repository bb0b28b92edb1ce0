import { describe, expect, it } from 'vitest';
import { DEFAULT_PROJECTION, trajectoryDivergence } from './divergence.ts';
import { row } from './test-rows.ts';

const PROJECTION = ['blast_radius_norm', 'cascade_depth'];

function both(scenario: string, cluster: string, a: Record<string, number | null>, b: Record<string, number | null>) {
  return [row({ scenario, cluster, defense: 'A', metrics: a }), row({ scenario, cluster, defense: 'B', metrics: b })];
}

const rows = [
  // k1: same outcome, same trajectory
  ...both('k1', 'x', { committed_harm: 0, blast_radius_norm: 0.5, cascade_depth: 2 }, { committed_harm: 0, blast_radius_norm: 0.5, cascade_depth: 2 }),
  // k2: same outcome, spread differs
  ...both('k2', 'x', { committed_harm: 0, blast_radius_norm: 0.5, cascade_depth: 2 }, { committed_harm: 0, blast_radius_norm: 0.25, cascade_depth: 2 }),
  // k3: outcomes differ → not conditioned on
  ...both('k3', 'y', { committed_harm: 1, blast_radius_norm: 0.9, cascade_depth: 3 }, { committed_harm: 0, blast_radius_norm: 0, cascade_depth: 0 }),
  // k4: same outcome; cascade N/A on one side only → differs; a field outside the projection is ignored
  ...both('k4', 'y', { committed_harm: 0, cascade_depth: null, policy_rule: 1 }, { committed_harm: 0, cascade_depth: 2, policy_rule: 2 }),
  // k5: outcome N/A under A → not a pair
  ...both('k5', 'z', { committed_harm: null, cascade_depth: 1 }, { committed_harm: 0, cascade_depth: 5 }),
];

describe('trajectoryDivergence', () => {
  it('rates divergence among equal-outcome pairs only, with per-field rates', () => {
    const d = trajectoryDivergence(rows, 'A', 'B', PROJECTION);
    expect(d).toMatchObject({ n_pairs: 4, n_equal_outcome: 3, n_diverged: 2, projection: PROJECTION });
    expect(d.rate).toBeCloseTo(2 / 3, 12);
    expect(d.per_field).toEqual([
      { field: 'blast_radius_norm', n_differ: 1, rate: 1 / 3 },
      { field: 'cascade_depth', n_differ: 1, rate: 1 / 3 },
    ]);
    // equal-outcome pairs sit in clusters x (0, 1) and y (1): the CI covers the rate and stays in [0, 1]
    expect(d.ci).toMatchObject({ method: 'cluster', n: 3, n_clusters: 2 });
    expect(d.ci?.estimate).toBeCloseTo(2 / 3, 12);
    expect(d.ci?.lower).toBeGreaterThanOrEqual(0);
    expect(d.ci?.upper).toBeLessThanOrEqual(1);
  });

  it('a pair differing in both fields counts once', () => {
    const r = both('k', 'c', { committed_harm: 0, blast_radius_norm: 1, cascade_depth: 1 }, { committed_harm: 0, blast_radius_norm: 0, cascade_depth: 0 });
    const d = trajectoryDivergence(r, 'A', 'B', PROJECTION);
    expect([d.n_diverged, d.rate, d.per_field.map((f) => f.n_differ)]).toEqual([1, 1, [1, 1]]);
  });

  it('no equal-outcome pair: rate and CI are null, not 0', () => {
    const d = trajectoryDivergence(rows.slice(4, 6), 'A', 'B', PROJECTION);
    expect(d).toMatchObject({ n_pairs: 1, n_equal_outcome: 0, rate: null, ci: null });
  });

  it('defaults to the defense-invariant projection and refuses an empty one', () => {
    expect(trajectoryDivergence(rows, 'A', 'B').projection).toEqual(DEFAULT_PROJECTION);
    expect(() => trajectoryDivergence(rows, 'A', 'B', [])).toThrow(/names no metric/);
  });
});
