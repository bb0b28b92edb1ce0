import { describe, expect, it } from 'vitest';
import { seedVariance } from './seed-variance.ts';
import { row } from './test-rows.ts';

describe('seedVariance', () => {
  it('averages per-scenario variance across seeds and reports the between-scenario variance', () => {
    const rows = [
      // s1: {0, 1} → variance ½, mean ½; s2: {1, 1} → variance 0, mean 1; s3: one seed → mean 0, no variance
      row({ scenario: 's1', defense: 'A', seed: 1, metrics: { m: 0 } }),
      row({ scenario: 's1', defense: 'A', seed: 2, metrics: { m: 1 } }),
      row({ scenario: 's2', defense: 'A', seed: 1, metrics: { m: 1 } }),
      row({ scenario: 's2', defense: 'A', seed: 2, metrics: { m: 1 } }),
      row({ scenario: 's3', defense: 'A', seed: 1, metrics: { m: 0 } }),
      row({ scenario: 's3', defense: 'A', seed: 2, metrics: { m: null } }),
      row({ scenario: 'c1', defense: 'A', stage: 'clean', seed: 1, metrics: { m: null } }),
    ];
    const [security, ...rest] = seedVariance(rows, 'm');
    expect(rest).toEqual([]);
    expect(security).toMatchObject({ defense: 'A', stage: 'security', n_scenarios: 3, n_scenarios_multi_seed: 2 });
    // within = (½ + 0) / 2; between = sample variance of {½, 1, 0} = (0 + ¼ + ¼) / 2
    expect(security?.within_scenario_variance).toBeCloseTo(0.25, 12);
    expect(security?.between_scenario_variance).toBeCloseTo(0.25, 12);
    // seed 1 mean (0 + 1 + 0) / 3 = ⅓, seed 2 mean (1 + 1) / 2 = 1
    expect(security?.seed_means.n_seeds).toBe(2);
    expect(security?.seed_means.mean).toBeCloseTo(2 / 3, 12);
    expect(security?.seed_means.std).toBeCloseTo(Math.sqrt(2 / 9), 12);
    expect(security?.seed_means.range).toBeCloseTo(2 / 3, 12);
  });

  it('treats each model of a scenario as its own unit and leaves undefined spreads null', () => {
    const rows = [
      row({ scenario: 's', model: 'x', defense: 'A', metrics: { m: 0 } }),
      row({ scenario: 's', model: 'y', defense: 'A', metrics: { m: 1 } }),
    ];
    expect(seedVariance(rows, 'm')).toEqual([
      {
        defense: 'A',
        stage: 'security',
        n_scenarios: 2,
        n_scenarios_multi_seed: 0,
        within_scenario_variance: null,
        between_scenario_variance: 0.5,
        seed_means: { n_seeds: 1, mean: 0.5, std: null, range: 0 },
      },
    ]);
  });
});
