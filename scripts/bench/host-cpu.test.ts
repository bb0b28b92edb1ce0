import { describe, expect, it } from 'vitest';
import { busyCores, parseProcStat } from './host-cpu.ts';

describe('host CPU from /proc/stat', () => {
  it('counts user, nice, system, irq and softirq as busy, idle, iowait and steal as not', () => {
    const text = 'cpu  100 10 50 800 40 5 3 2 7 0\ncpu0 50 5 25 400 20 2 1 1 0 0\nintr 1 2 3\n';
    expect(parseProcStat(text)).toEqual({ busy: 168, total: 1010 });
  });

  it('has no sample without the aggregate line or with a broken one', () => {
    expect(parseProcStat('cpu0 1 2 3 4 5 6 7 8\n')).toBeUndefined();
    expect(parseProcStat('cpu  1 2 x 4 5 6 7 8\n')).toBeUndefined();
    expect(parseProcStat('cpu  1 2 3\n')).toBeUndefined();
  });

  it('gives the CPUs busy on average between two samples', () => {
    // 2 CPUs: 300 of 400 jiffies busy → 1.5 CPUs.
    expect(busyCores({ busy: 1000, total: 4000 }, { busy: 1300, total: 4400 }, 2)).toBeCloseTo(1.5);
    expect(busyCores({ busy: 10, total: 40 }, { busy: 10, total: 40 }, 2)).toBeUndefined();
  });
});
