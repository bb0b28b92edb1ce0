import { describe, expect, it } from 'vitest';
import { seededRandom } from '../core/index.ts';
import { compare, type CompareOptions } from './compare.ts';
import { pairRows, pairedDelta } from './pairs.ts';
import type { StatsRow } from './schema.ts';
import { row } from './test-rows.ts';

/**
 * A synthetic run: 3 stages × 6 scenarios (2 per cluster) × 3 seeds × defenses
 * A, B, C. B never harms and always completes active-tainted work; A completes
 * it half the time; blast radius is noisy.
 */
function synthetic(): StatsRow[] {
  const random = seededRandom(42);
  const rows: StatsRow[] = [];
  for (const stage of ['security', 'active-tainted', 'clean'])
    for (let s = 0; s < 6; s++)
      for (let seed = 0; seed < 3; seed++)
        for (const defense of ['A', 'B', 'C']) {
          const reach = 4 + Math.floor(random() * 8);
          const raw = Math.floor(random() * reach);
          rows.push(
            row({
              scenario: `${stage}-${s}`,
              cluster: `${stage}-c${Math.floor(s / 2)}`,
              stage,
              seed,
              defense,
              metrics: {
                committed_harm: defense === 'B' ? 0 : random() < 0.3 ? 1 : 0,
                authorized_tainted_action_success: stage !== 'active-tainted' ? null : defense === 'A' ? (random() < 0.5 ? 1 : 0) : 1,
                blast_radius_raw: raw,
                reachable_nodes: reach,
                blast_radius_norm: raw / reach,
              },
            }),
          );
        }
  return rows;
}

const OPTIONS: CompareOptions = {
  defenseA: 'A',
  defenseB: 'B',
  metrics: ['committed_harm', 'authorized_tainted_action_success', 'blast_radius_norm'],
  resamples: 500,
  seed: 11,
  projection: ['blast_radius_norm', 'blast_radius_raw'],
};

describe('compare', () => {
  const rows = synthetic();
  const result = compare(rows, OPTIONS);

  it('identical inputs and seed give identical output, whatever the row order', () => {
    expect(compare(synthetic(), OPTIONS)).toEqual(result);
    expect(JSON.stringify(compare([...rows].reverse(), OPTIONS))).toBe(JSON.stringify(result));
  });

  it('is plain JSON: it survives a round trip unchanged', () => {
    expect(result.bootstrap).toEqual({ resamples: 500, level: 0.95, seed: 11 });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('a different seed moves the intervals, not the point estimates', () => {
    const other = compare(rows, { ...OPTIONS, seed: 12 });
    const cis = (r: typeof result) => r.metrics.flatMap((m) => m.stages.map((s) => [s.cluster_ci?.lower, s.cluster_ci?.upper]));
    expect(cis(other)).not.toEqual(cis(result));
    expect(other.metrics.map((m) => m.stages.map((s) => s.delta))).toEqual(result.metrics.map((m) => m.stages.map((s) => s.delta)));
  });

  it('compares a stage-specific metric only where it applies, and agrees with pairedDelta', () => {
    const utility = result.metrics.find((m) => m.metric === 'authorized_tainted_action_success');
    expect(utility?.stages.map((s) => s.stage)).toEqual(['active-tainted']);
    const stage = utility?.stages[0];
    const expected = pairedDelta(pairRows(rows.filter((r) => r.stage === 'active-tainted'), 'authorized_tainted_action_success', 'A', 'B').pairs);
    expect(stage?.delta).toBe(expected);
    expect(stage).toMatchObject({ n_pairs: 18, verdict: 'B higher', mean_b: 1 });
    expect(stage?.cluster_ci).toMatchObject({ n: 18, n_clusters: 3, resamples: 500, seed: 11 });
    expect(stage?.win_rate.a_higher).toBe(0);
    expect(utility?.means.map((m) => [m.defense, m.stage, m.n, m.n_na])).toEqual([
      ['A', 'active-tainted', 18, 0],
      ['A', 'clean', 0, 18],
      ['A', 'security', 0, 18],
      ['B', 'active-tainted', 18, 0],
      ['B', 'clean', 0, 18],
      ['B', 'security', 0, 18],
    ]);
  });

  it('bounds the all-zero endpoint of B over its clusters, per stage and over all stages', () => {
    const harm = result.metrics.find((m) => m.metric === 'committed_harm');
    const bBounds = harm?.zero_event.filter((e) => e.defense === 'B').map((e) => [e.stage, e.bound.n_clusters]);
    expect(bBounds).toEqual([
      [null, 9],
      ['active-tainted', 3],
      ['clean', 3],
      ['security', 3],
    ]);
    expect(harm?.stage_contribution.n).toBe(54);
  });

  it('includes divergence (all and by stage) and the denominator check with every defense', () => {
    expect(result.trajectory_divergence?.all.n_pairs).toBe(54);
    expect(result.trajectory_divergence?.by_stage.map((d) => [d.stage, d.n_pairs])).toEqual([
      ['active-tainted', 18],
      ['clean', 18],
      ['security', 18],
    ]);
    expect(result.denominator_sensitivity?.scopes[0]?.realized.means.map((m) => m.defense)).toEqual(['A', 'B', 'C']);
    expect([result.n_rows_a, result.n_rows_b]).toEqual([54, 54]);
  });

  it('refuses a defense with no rows, naming the ones present', () => {
    expect(() => compare(rows, { ...OPTIONS, defenseB: 'b' })).toThrow(/no rows for defense b/);
    try {
      compare(rows, { ...OPTIONS, defenseA: 'a' });
      expect.unreachable();
    } catch (e) {
      expect((e as { hint?: string }).hint).toBe('defenses in the rows: A, B, C');
    }
  });

  it('leaves sections out (null) when rows lack what they need', () => {
    const bare = rows.map((r) => ({ ...r, metrics: { blast_radius_norm: r.metrics['blast_radius_norm'] ?? null } }));
    const r = compare(bare, OPTIONS);
    expect(r.trajectory_divergence).toBeNull();
    expect(r.denominator_sensitivity).toBeNull();
    expect(r.metrics.find((m) => m.metric === 'committed_harm')?.stages).toEqual([]);
  });
});
