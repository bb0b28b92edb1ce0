import { describe, expect, it } from 'vitest';
import { CpuPinningSchema, SlotPool, slotCpu, slotCpus } from './cpu-pinning.ts';

describe('slotCpus', () => {
  it('gives each slot its own CPU when there are fewer slots than CPUs', () => {
    expect(slotCpus(3, 8)).toEqual([0, 1, 2]);
    expect(slotCpus(1, 2)).toEqual([0]);
  });

  it('uses every CPU once when slots and CPUs are as many', () => {
    expect(slotCpus(2, 2)).toEqual([0, 1]);
  });

  it('shares CPUs round-robin when there are more slots than CPUs: no CPU carries two slots more than another', () => {
    const cpus = slotCpus(5, 2);
    expect(cpus).toEqual([0, 1, 0, 1, 0]);
    const load = [0, 1].map((c) => cpus.filter((x) => x === c).length);
    expect(Math.max(...load) - Math.min(...load)).toBeLessThanOrEqual(1);
    expect(slotCpus(7, 3)).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('pins everything to CPU 0 on one CPU', () => {
    expect(slotCpus(4, 1)).toEqual([0, 0, 0, 0]);
  });

  it('refuses nonsense', () => {
    expect(() => slotCpu(0, 0)).toThrow(RangeError);
    expect(() => slotCpu(-1, 2)).toThrow(RangeError);
    expect(() => slotCpu(1.5, 2)).toThrow(RangeError);
  });
});

describe('SlotPool', () => {
  it('hands out the lowest free slot, and reuses a released one', () => {
    const pool = new SlotPool(3);
    expect([pool.take(), pool.take(), pool.take()]).toEqual([0, 1, 2]);
    pool.release(1);
    expect(pool.take()).toBe(1);
    pool.release(0);
    pool.release(2);
    expect(pool.take()).toBe(0);
    expect(pool.take()).toBe(2);
  });

  it('throws when more rollouts run than it has slots, or a slot is released twice', () => {
    const pool = new SlotPool(1);
    pool.take();
    expect(() => pool.take()).toThrow(/no free slot/);
    pool.release(0);
    expect(() => pool.release(0)).toThrow(/not taken/);
  });
});

describe('CpuPinningSchema', () => {
  it('knows auto and off only', () => {
    expect(CpuPinningSchema.parse('auto')).toBe('auto');
    expect(CpuPinningSchema.safeParse('on').success).toBe(false);
  });
});
