import { describe, expect, it } from 'vitest';
import { renderEbpfBench, type EbpfBenchRow } from './ebpf.ts';
import { summarize } from './stats.ts';

const ms = (median: number) => summarize([median, median, median]);

describe('renderEbpfBench', () => {
  const row: EbpfBenchRow = {
    id: 'find',
    label: 'find /usr',
    untracedBefore: ms(100),
    untracedAfter: ms(300),
    strace: ms(500),
    traced: { native: { summary: ms(240), lost: 0, events: 1234 }, bpftrace: { summary: ms(3000), lost: 7, events: 1200 } },
  };

  it('prints both backends beside strace, against the mean of the untraced medians', () => {
    const text = renderEbpfBench({ rows: [row], skippedBackends: {} });
    const line = text.split('\n').find((l) => l.includes('find /usr')) ?? '';
    // Baseline (100 + 300) / 2 = 200 ms: strace 2.50×, native 1.20×, bpftrace 15.00×.
    expect(line).toMatch(/200 ms\s+2\.50×\s+1\.20×\s+15\.00×\s+100 \/ 300 ms\s+1234 \(0\) \/ 1200 \(7\)/);
  });

  it('says which backend was skipped and why, and shows a dash for it', () => {
    const { bpftrace: _b, ...onlyNative } = row.traced;
    const text = renderEbpfBench({ rows: [{ ...row, traced: onlyNative }], skippedBackends: { bpftrace: 'bpftrace is not installed' } });
    expect(text).toContain('bpftrace skipped: bpftrace is not installed');
    expect(text.split('\n').find((l) => l.includes('find /usr'))).toMatch(/1\.20×\s+—\s/);
    expect(renderEbpfBench({ skipped: 'native: not root' })).toContain('skipped: native: not root');
  });

  it('prints one command through the session per tracer, what each adds to the untraced one, and eBPF ÷ strace', () => {
    const text = renderEbpfBench({ rows: [row], perCommand: { untraced: ms(4), strace: ms(16), ebpf: ms(10) }, skippedBackends: {} });
    expect(text).toMatch(/untraced 4\.0 ms, strace 16\.0 ms \(\+12\.0 ms\), eBPF hub 10\.0 ms \(\+6\.0 ms\): eBPF ÷ strace 0\.63×/);
    expect(renderEbpfBench({ rows: [row], skippedBackends: {} })).not.toContain('one command');
  });

  it('prints the loaded runs at each reader priority, events with what was lost', () => {
    const underLoad = { loops: 6, finds: 30, runs: [{ nice: 0, events: 31_560, lost: 25_985 }, { nice: -10, events: 32_880, lost: 0 }, { nice: 0, events: 32_878, lost: 1 }, { nice: -10, events: 32_887, lost: 0 }] };
    const text = renderEbpfBench({ rows: [row], underLoad, skippedBackends: {} });
    expect(text).toMatch(/6 busy loops on the host, 30 × find \/usr in one command.*nice 0: 31560 \(25985\), 32878 \(1\); at nice -10 \(eval's\): 32880 \(0\), 32887 \(0\)/);
    expect(renderEbpfBench({ rows: [row], skippedBackends: {} })).not.toContain('under CPU load');
  });
});
