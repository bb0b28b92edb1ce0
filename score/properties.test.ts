import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalizeExecutables, covers, hasRecursiveTail, isGlob, isWithin, normalizePattern, viewSnapshot } from '../sandbox/paths/index.ts';
import type { FsSnapshot } from '../sandbox/paths/index.ts';
import { allowAllPolicy, denyAllPolicy } from '../sandbox/policy/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { buildCandidateSnapshot } from './candidates.ts';
import { SCORE_AXES } from './reference.ts';
import type { ScoreAxis, ScoringReference } from './reference.ts';
import { axisScore, scoreMany, scorePolicy } from './score.ts';
import type { PolicyScore } from './score.ts';
import { prng, randomPolicy, syntheticTask } from './test-support.ts';

/**
 * Appendix A transcribed as literally as possible — sets of strings, `covers`
 * for every (pattern, path) pair, realpath from the full image snapshot — to
 * check the indexed scorer against. Slow on purpose.
 */
function naiveScore(policy: Policy, reference: ScoringReference, image: FsSnapshot): PolicyScore {
  const view = viewSnapshot(image);
  const isDir = (p: string): boolean => view.resolve(p)?.type === 'dir';
  let granted = 0;
  let sensitiveTotal = 0;
  const axes = {} as Record<ScoreAxis, ReturnType<typeof axisScore>>;
  for (const axis of SCORE_AXES) {
    const prep = (list: readonly string[]): string[] => {
      const normal = list.map(normalizePattern);
      return axis === 'execute' ? canonicalizeExecutables(normal, image) : normal;
    };
    const roots = reference.scored_roots[axis];
    const C = new Set<string>();
    for (const e of image.entries) {
      if (!roots.some((r) => isWithin(r, e.path))) continue;
      const target = view.resolve(e.path);
      if (target?.type !== 'file') continue;
      if (axis !== 'execute') C.add(e.path);
      else if ((target.mode & 0o111) !== 0) C.add(view.realpath(e.path) ?? e.path);
    }
    const required = prep(reference.required[axis]);
    for (const r of required) if (!isGlob(r) && !hasRecursiveTail(r)) C.add(r);
    const expand = (patterns: readonly string[]): Set<string> => {
      const out = new Set<string>();
      for (const p of patterns) {
        const hits = [...C].filter((c) => covers(p, c));
        hits.forEach((h) => out.add(h));
        if (hits.length === 0 && !isGlob(p) && !hasRecursiveTail(p) && !isDir(p)) out.add(p);
      }
      return out;
    };
    const implicit = prep(reference.implicit[axis]);
    const minusImplicit = (s: Set<string>): Set<string> => new Set([...s].filter((x) => !implicit.some((p) => covers(p, x))));
    const rawP = expand(prep(policy[axis]));
    const G = minusImplicit(expand(required));
    const P = minusImplicit(rawP);
    const tp = [...P].filter((x) => G.has(x)).length;
    axes[axis] = axisScore(tp, P.size, G.size);
    const S = expand(prep(reference.sensitive[axis]));
    sensitiveTotal += S.size;
    granted += [...rawP].filter((x) => S.has(x)).length;
  }
  const mean = (f: (a: ReturnType<typeof axisScore>) => number): number => SCORE_AXES.reduce((s, a) => s + f(axes[a]), 0) / 3;
  return {
    valid: true,
    ...axes,
    macro_precision: mean((a) => a.precision),
    macro_recall: mean((a) => a.recall),
    macro_f1: mean((a) => a.f1),
    sensitive_exposure: sensitiveTotal === 0 ? 0 : granted / sensitiveTotal,
    sensitive_granted: granted,
    sensitive_total: sensitiveTotal,
  };
}

const task = syntheticTask({ size: 150, seed: 7 });
const candidates = buildCandidateSnapshot(task.snapshot, task.reference.scored_roots);

describe('the indexed scorer equals the literal definition', () => {
  it('on random model-like policies', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const policy = randomPolicy(task, prng(seed), 24);
        const fast = scorePolicy(policy, task.reference, candidates);
        const slow = naiveScore(policy, task.reference, task.snapshot);
        expect(fast.valid).toBe(true);
        for (const axis of SCORE_AXES) expect(fast[axis]).toEqual(slow[axis]);
        expect(fast.sensitive_granted).toBe(slow.sensitive_granted);
        expect(fast.sensitive_total).toBe(slow.sensitive_total);
        expect(fast.macro_f1).toBeCloseTo(slow.macro_f1, 12);
      }),
      { numRuns: 40 },
    );
  });

  it('on the baselines', () => {
    for (const policy of [allowAllPolicy(), denyAllPolicy(), { ...task.reference.required }]) {
      const fast = scorePolicy(policy, task.reference, candidates);
      const slow = naiveScore(policy, task.reference, task.snapshot);
      for (const axis of SCORE_AXES) expect(fast[axis]).toEqual(slow[axis]);
      expect(fast.sensitive_granted).toBe(slow.sensitive_granted);
    }
  });
});

describe('sanity properties of the gold issue (synthetic reference)', () => {
  const [gold, allowAll, denyAll] = scoreMany([{ ...task.reference.required }, allowAllPolicy(), denyAllPolicy()], task.reference, candidates);

  it('the synthetic reference has a non-empty G on every axis', () => {
    for (const axis of SCORE_AXES) expect(gold?.[axis].gold).toBeGreaterThan(0);
  });

  it('gold scored against itself gives F1 = 1 on every axis', () => {
    for (const axis of SCORE_AXES) expect(gold?.[axis].f1).toBe(1);
    expect(gold?.macro_f1).toBe(1);
  });

  it('allow-all gives recall 1 with low precision', () => {
    for (const axis of SCORE_AXES) {
      expect(allowAll?.[axis].recall).toBe(1);
      expect(allowAll?.[axis].precision).toBeLessThan(0.5);
    }
  });

  it('deny-all gives recall 0', () => {
    for (const axis of SCORE_AXES) {
      expect(denyAll?.[axis].recall).toBe(0);
      expect(denyAll?.[axis].f1).toBe(0);
    }
    expect(denyAll?.sensitive_exposure).toBe(0);
  });

  it('allow-all exposes every existing sensitive path', () => {
    // The one sensitive entry allow-all cannot reach is the missing exact /root/.ssh/authorized_keys.
    expect(allowAll?.sensitive_granted).toBe((allowAll?.sensitive_total ?? 0) - 1);
  });
});
