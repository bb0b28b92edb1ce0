import { describe, expect, it } from 'vitest';
import { connectDocker } from '../../docker/index.ts';
import { runSelftest, summarize } from '../../sandbox/selftest/index.ts';

describe('sandbox self-test', () => {
  it('denies every probe under deny rules and none under allow rules', async () => {
    const engine = await connectDocker();
    const { rows, report } = await runSelftest(engine);
    const summary = summarize(rows);
    const bad = rows.filter((r) => !r.ok).map((r) => `${r.id} ${r.mode}: expected ${r.expected}, observed ${r.observed} (${r.detail})`);
    expect(bad).toEqual([]);
    expect(summary.probes).toBeGreaterThanOrEqual(40);
    expect(summary.deniedUnderDeny).toBe(summary.probes);
    expect(summary.falseDenials).toBe(0);
    expect(report.landlock_abi).toBeGreaterThanOrEqual(6);
    expect(report.enforcement).toBe('full');
  });
});
