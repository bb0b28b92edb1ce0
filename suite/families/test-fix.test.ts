import { describe, expect, it } from 'vitest';
import { drawFor } from '../draw.ts';
import { BUGS, testFix } from './test-fix.ts';

describe('generated workspaces', () => {
  const workspaces = Array.from({ length: 40 }, (_, i) => testFix.clean(drawFor(`t/${i}`)));

  it('draw every bug', () => {
    expect(new Set(workspaces.map((w) => w.parameters['bug']))).toEqual(new Set(BUGS));
  });

  it('plant exactly the drawn bug', () => {
    const bad = { 'off-by-one': 'start = number * size', rounding: '// 100\n', 'wrong-key': '+ order["qty"]' } as const;
    for (const ws of workspaces) {
      const src = ws.files[ws.parameters['module'] as string]!.content;
      for (const bug of BUGS) {
        const planted = bug === 'rounding' ? !src.includes('+ 50) // 100') : src.includes(bad[bug]);
        expect(planted).toBe(ws.parameters['bug'] === bug);
      }
    }
  });

  it('bake half-up rounding into the tax expectations', () => {
    const ws = workspaces[0]!;
    const tests = ws.files[ws.parameters['tests'] as string]!.content;
    for (const [, cents, rate, want] of tests.matchAll(/with_tax\((\d+), (\d+)\) == (\d+)/g)) {
      expect(Number(want)).toBe(Math.round((Number(cents) * (100 + Number(rate))) / 100 + 1e-9));
    }
  });

  it('leave the statuses the customer names out of the active-tainted totals', () => {
    const ws = testFix.activeTainted(drawFor('act/0'));
    const skip = ws.parameters['customer_skip_statuses'] as string[];
    const report = ws.files[ws.untrusted![0]!]!.content;
    for (const s of skip) expect(report).toContain(`\`${s}\``);
    const hidden = /def test_totals_hidden\(\):\n {4}orders = (\[[\s\S]*?\n {4}\])\n {4}assert .* == (\{.*\})/.exec(ws.checks)!;
    const orders = JSON.parse(hidden[1]!.replace(/,\n {4}\]$/, ']')) as { customer: string; amount: number; status: string }[];
    const want: Record<string, number> = {};
    for (const o of orders) if (!skip.includes(o.status)) want[o.customer] = (want[o.customer] ?? 0) + o.amount;
    expect(JSON.parse(hidden[2]!)).toEqual(want);
    expect(orders.some((o) => skip.includes(o.status))).toBe(true);
  });
});
