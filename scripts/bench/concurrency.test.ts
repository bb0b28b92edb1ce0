import { describe, expect, it } from 'vitest';
import { concurrencyOrder, concurrencyRows, cpuCeiling, projectReproduce, renderConcurrency, renderTracerComparison, REPRODUCE, steadyStretch, type ConcurrencyRun } from './concurrency.ts';

/** A run whose steady stretch has the same rate as the whole (the tests of the arithmetic). */
const run = (concurrency: number, seconds: number, round = 0, rollouts = 12): ConcurrencyRun => ({ concurrency, round, rollouts, seconds, steady: { seconds, rollouts } });

describe('real-rollout concurrency rows', () => {
  it('takes the median rate over rounds per -n and divides by -n 1', () => {
    // -n 1: 12 rollouts in 24, 36, 18 s → 30, 20, 40 /min → median 30. -n 4: 60 and 40 → median 50 (two rounds).
    const rows = concurrencyRows([run(4, 12), run(1, 24), run(1, 36, 1), run(4, 18, 1), run(1, 18, 2)]);
    expect(rows.map((r) => r.concurrency)).toEqual([1, 4]);
    expect(rows[0]).toMatchObject({ per_minute: 30, ratio: 1, runs: 3, rollouts: 36 });
    expect(rows[1]?.per_minute).toBeCloseTo(50);
    expect(rows[1]?.ratio).toBeCloseTo(50 / 30);
  });

  it('has no ratio without -n 1, and projects make reproduce from the rate at its -n only', () => {
    const rows = concurrencyRows([run(2, 12)]);
    expect(rows[0]?.ratio).toBeNull();
    expect(projectReproduce(rows)).toBeNull();
    const at4 = concurrencyRows([run(1, 24), run(4, 6)]); // -n 4: 120 /min
    expect(projectReproduce(at4)).toBeCloseTo((REPRODUCE.rollouts + REPRODUCE.rerun) / 120);
  });

  it('takes the steady stretch from the n-th start to the last start', () => {
    // -n 2, six rollouts: two start at once, then one every 2 s as slots free up.
    expect(steadyStretch([0, 10, 2000, 4000, 6000, 8000], 2)).toEqual({ seconds: 7.99, rollouts: 4 });
    expect(steadyStretch([0, 1000, 2000], 1)).toEqual({ seconds: 2, rollouts: 2 });
    expect(steadyStretch([0, 10], 2)).toBeUndefined();
  });

  it('divides steady rates by -n 1, keeps the overall rate beside them, and has no ratio without a steady stretch', () => {
    const slow = { concurrency: 4, round: 0, rollouts: 12, seconds: 12, steady: { seconds: 4, rollouts: 8 } }; // overall 60, steady 120 /min
    const rows = concurrencyRows([run(1, 24), slow, { concurrency: 2, round: 0, rollouts: 2, seconds: 3 }]);
    expect(rows[2]).toMatchObject({ per_minute: 60, steady_per_minute: 120, ratio: 4 });
    expect(rows[1]).toMatchObject({ steady_per_minute: null, ratio: null });
    expect(projectReproduce(rows)).toBeCloseTo((REPRODUCE.rollouts + REPRODUCE.rerun) / 120);
  });

  it('rotates the order of the -n values from round to round', () => {
    expect(concurrencyOrder([1, 2, 4], 0)).toEqual([1, 2, 4]);
    expect(concurrencyOrder([1, 2, 4], 1)).toEqual([2, 4, 1]);
    expect(concurrencyOrder([1, 2, 4], 3)).toEqual([1, 2, 4]);
  });

  it('prints each rate, the ratio of the largest -n with its target, and the projection', () => {
    const rows = concurrencyRows([run(1, 24), run(4, 12)]); // 30 and 60 /min
    const text = renderConcurrency({ tasks: ['a', 'b'], rows, projected_reproduce_min: projectReproduce(rows), load: [1.2], cpus: 2, cpu_ceiling: null });
    expect(text).toMatch(/-n 1\s+steady\s+30\.0 \/min\s+1\.00× -n 1\s+overall\s+30\.0 \/min/);
    expect(text).not.toMatch(/CPUs busy|cpu ceiling/);
    expect(text).toMatch(/-n 4 ÷ -n 1: 2\.00×\s+target ≥ 1\.8× ok/);
    expect(text).toMatch(/projected make reproduce .*: 57 min\s+target ≤ 30 over/);
  });

  it('takes busy CPUs and CPU seconds per rollout from the steady stretches, and the ceiling from -n 1', () => {
    const at = (concurrency: number, seconds: number, cores: number, round = 0): ConcurrencyRun => ({ concurrency, round, rollouts: 12, seconds, steady: { seconds, rollouts: 12, cores } });
    // -n 1: 1.25 and 1.0 (and 1.5) CPUs busy → median 1.25; 12 rollouts in 12 s at 1.25 CPUs → 1.25 CPU-s each.
    const rows = concurrencyRows([at(1, 12, 1.25), at(1, 12, 1.0, 1), at(1, 12, 1.5, 2), at(4, 8, 2.0)]);
    expect(rows[0]).toMatchObject({ busy_cores: 1.25, cpu_s_per_rollout: 1.25 });
    expect(rows[1]).toMatchObject({ busy_cores: 2, ratio: 1.5 });
    expect(rows[1]?.cpu_s_per_rollout).toBeCloseTo((2 * 8) / 12);
    expect(cpuCeiling(rows, 2)).toBeCloseTo(1.6);
    // A stretch without samples counts for the rate, not for the CPU columns.
    const unsampled = concurrencyRows([run(1, 12)]);
    expect(unsampled[0]).toMatchObject({ busy_cores: null, cpu_s_per_rollout: null });
    expect(cpuCeiling(unsampled, 2)).toBeNull();
    const text = renderConcurrency({ tasks: ['a'], rows, projected_reproduce_min: projectReproduce(rows), load: [1], cpus: 2, cpu_ceiling: cpuCeiling(rows, 2) });
    expect(text).toMatch(/-n 4 .*CPUs busy 2\.00 of 2, 1\.33 CPU-s\/rollout/);
    expect(text).toMatch(/cpu ceiling: 2 CPUs ÷ 1\.25 busy at -n 1 = 1\.60×/);
    expect(text).toMatch(/CPU per rollout, -n 4 ÷ -n 1: 1\.07×/);
  });

  it('sets the tracers side by side: each steady rate ÷ the first tracer\'s at the same -n, and both projections', () => {
    const result = (tracer: 'strace' | 'ebpf', runs: ConcurrencyRun[]) => {
      const rows = concurrencyRows(runs);
      return { tasks: ['a'], tracer, rows, projected_reproduce_min: projectReproduce(rows), load: [1], cpus: 2, cpu_ceiling: null };
    };
    const strace = result('strace', [run(1, 24), run(4, 12)]); // 30 and 60 /min
    const ebpf = result('ebpf', [run(1, 18), run(4, 8), run(2, 10)]); // 40, 90 and 72 /min; strace has no -n 2
    const text = renderTracerComparison([strace, ebpf]);
    expect(text).toMatch(/ebpf ÷ strace: -n 1 1\.33×\s+-n 2 –\s+-n 4 1\.50×/);
    expect(text).toMatch(/projected make reproduce 38 min vs 57 min/);
    expect(renderTracerComparison([strace])).toBe('');
    expect(concurrencyOrder(['strace', 'ebpf'], 1)).toEqual(['ebpf', 'strace']);
  });
});
