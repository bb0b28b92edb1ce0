import { describe, expect, it } from 'vitest';
import { perMinute, renderScale, roundOrder, scaleRows, type ScaleRun } from './scale.ts';

const run = (mode: ScaleRun['mode'], seconds: number, round = 0, ok = true): ScaleRun => ({ mode, round, rollouts: 8, seconds, ok });

describe('scale-out rows', () => {
  it('medians per mode over rounds, ratios to one-shard', () => {
    const rows = scaleRows([run('one-shard', 60), run('one-shard', 120, 1), run('one-shard', 80, 2), run('two-engines', 48), run('two-shards', 120, 0, false)]);
    expect(rows.map((r) => r.mode)).toEqual(['one-shard', 'two-shards', 'two-engines']);
    // one-shard: 8, 4, 6 per minute → median 6.
    expect(rows[0]).toMatchObject({ per_minute: 6, ratio: 1, runs: 3, failed_runs: 0 });
    expect(rows[1]).toMatchObject({ per_minute: 4, failed_runs: 1 });
    expect(rows[1]?.ratio).toBeCloseTo(4 / 6);
    expect(rows[2]?.ratio).toBeCloseTo(10 / 6);
    expect(perMinute({ rollouts: 3, seconds: 30 })).toBe(6);
  });

  it('has no ratio without a one-shard run, and renders one line per mode', () => {
    const rows = scaleRows([run('two-engines', 60)]);
    expect(rows).toEqual([{ mode: 'two-engines', runs: 1, per_minute: 8, ratio: null, failed_runs: 0 }]);
    const text = renderScale(scaleRows([run('one-shard', 60), run('two-engines', 30)]), { rollouts: 8, slots: 2, load: [1.5] });
    expect(text).toMatch(/one-shard\s+8\.0 \/min\s+1\.00×/);
    expect(text).toMatch(/two-engines\s+16\.0 \/min\s+2\.00×/);
  });

  it('rotates the order of the modes from round to round', () => {
    expect(roundOrder(0)).toEqual(['one-shard', 'two-shards', 'two-engines']);
    expect(roundOrder(1)).toEqual(['two-shards', 'two-engines', 'one-shard']);
    expect(roundOrder(3)).toEqual(roundOrder(0));
  });
});
