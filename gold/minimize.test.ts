import { describe, expect, it } from 'vitest';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import { goldEntries, minimize, withMinimal, type MinimizeProgress } from './minimize.ts';
import { GoldFileSchema } from './schema.ts';
import { contextFor, fileEv } from './test-support.ts';

const passesWith = (needed: readonly string[]) => (subset: readonly string[]) => Promise.resolve(needed.every((n) => subset.includes(n)));

describe('minimize (ddmin)', () => {
  const entries = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

  it('finds the entries the oracle needs: passes iff {a, c} present', async () => {
    const r = await minimize(entries, passesWith(['a', 'c']));
    expect(r).toMatchObject({ sufficient: true, minimal: ['a', 'c'], necessary: ['a', 'c'], alternatives: [], budgetExhausted: false });
    expect(r.notNeeded).toEqual(['b', 'd', 'e', 'f', 'g', 'h']);
    expect(r.tests).toBeGreaterThan(2);
    expect(r.tests).toBeLessThan(40);
  });

  it.each([[['h']], [['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']], [['b', 'g']], [['d']]])('needed %j', async (needed) => {
    const r = await minimize(entries, passesWith(needed));
    expect(r.necessary).toEqual(needed);
  });

  it('empty subset passing: nothing is needed', async () => {
    const r = await minimize(entries, () => Promise.resolve(true));
    expect(r).toMatchObject({ minimal: [], necessary: [], notNeeded: entries, tests: 2 });
  });

  it('an insufficient full set: nothing ablated, all reported necessary', async () => {
    const r = await minimize(entries, () => Promise.resolve(false));
    expect(r).toMatchObject({ sufficient: false, necessary: entries, notNeeded: [], tests: 1 });
  });

  it('alternatives: either b or e will do', async () => {
    const r = await minimize(entries, (s) => Promise.resolve(s.includes('a') && (s.includes('b') || s.includes('e'))));
    expect(r.necessary).toHaveLength(2);
    expect(r.necessary).toContain('a');
    expect(r.alternatives).toHaveLength(1);
    expect(['b', 'e']).toContain(r.alternatives[0]);
  });

  it('stops at the budget with the current passing subset reported necessary', async () => {
    let clock = 0;
    const test = (s: readonly string[]) => {
      clock += 10;
      return passesWith(['a', 'c'])(s);
    };
    const r = await minimize(entries, test, { budgetMs: 25, now: () => clock });
    expect(r.budgetExhausted).toBe(true);
    expect(r.tests).toBe(3);
    expect(r.necessary).toEqual(expect.arrayContaining(['a', 'c']));
    expect([...r.necessary, ...r.notNeeded].sort()).toEqual(entries);
  });

  it('reports progress and never runs the same subset twice', async () => {
    const seen = new Set<string>();
    const progress: MinimizeProgress[] = [];
    await minimize(
      entries,
      (s) => {
        const key = s.join();
        expect(seen.has(key)).toBe(false);
        seen.add(key);
        return passesWith(['c', 'f'])(s);
      },
      { onProgress: (p) => progress.push(p) },
    );
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['full', 'empty', 'ddmin', 'alternatives']));
    expect(progress.at(-1)?.size).toBe(2);
  });
});

it('withMinimal records the result per axis in the gold file', async () => {
  const gold = buildGold(
    deriveGold([fileEv('read', '/app/data.csv'), fileEv('read', '/app/old.csv'), fileEv('create', '/app/out.json')], contextFor()),
    { taskId: 't', provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc' } },
  );
  const r = await minimize(goldEntries(gold), (s) => Promise.resolve(s.some((e) => e.path === '/app/out.json')));
  const out = withMinimal(gold, r);
  expect(out.minimal).toEqual({
    necessary: { read: [], write: ['/app/out.json'], execute: [] },
    not_needed: { read: ['/app/data.csv', '/app/old.csv'], write: [], execute: [] },
    budget_exhausted: false,
    tests: r.tests,
  });
  expect(GoldFileSchema.safeParse(out).error).toBeUndefined();
});
