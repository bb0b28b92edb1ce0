import { describe, expect, it } from 'vitest';
import { machineRatio, machineRows, renderMachineScaling, type MachineRun, type MachineScaling } from './machine-scaling.ts';

const run = (concurrency: number, round: number, seconds: number): MachineRun => ({ concurrency, round, repeats: 10, seconds });

describe('machine scaling', () => {
  it('rates every n by all its processes\' runs over the wall time, medians over rounds, each ÷ 1 at once', () => {
    const rows = machineRows([run(4, 0, 20), run(1, 0, 2), run(2, 0, 2.5), run(1, 1, 3), run(4, 1, 30), run(2, 1, 2.5), run(1, 2, 2.5)]);
    expect(rows.map((r) => r.concurrency)).toEqual([1, 2, 4]);
    // 1 at once: 10/2, 10/3, 10/2.5 → median 4 /s; 2 at once: 20/2.5 = 8 /s; 4 at once: 40/20 = 2, 40/30 → median of two.
    expect(rows[0]).toMatchObject({ runs: 3, per_second: 4, ratio: 1 });
    expect(rows[1]?.per_second).toBe(8);
    expect(rows[1]?.ratio).toBe(2);
    expect(rows[2]?.per_second).toBeCloseTo((2 + 40 / 30) / 2, 10);
    expect(rows[2]?.ratio).toBeCloseTo((2 + 40 / 30) / 2 / 4, 10);
  });

  it('has no ratio without a row for 1 at once', () => {
    expect(machineRows([run(2, 0, 1)])[0]?.ratio).toBeNull();
  });

  it('sets authbench\'s -n k ÷ -n 1 against the machine\'s k ÷ 1, and skips what either lacks', () => {
    const m: MachineScaling = { image: 'authbench/base:bookworm', workload: "python3 -c 'import pytest'", repeats: 10, rows: machineRows([run(1, 0, 2), run(4, 0, 5)]) };
    expect(machineRatio(m, 4)).toBe(1.6);
    expect(machineRatio(m, 2)).toBeNull();
    const text = renderMachineScaling(m, [
      { tracer: 'strace', concurrency: 4, ratio: 1.44 },
      { tracer: 'ebpf', concurrency: 4, ratio: null },
      { tracer: 'strace', concurrency: 2, ratio: 1.3 },
    ]);
    expect(text).toContain('4 at once    8.00 /s  1.60× 1 at once');
    expect(text).toContain('authbench (strace) -n 4 ÷ -n 1 1.44× = 90% of the machine\'s 1.60× for this work');
    expect(text).not.toContain('ebpf');
    expect(text).not.toContain('-n 2 ÷');
  });
});
