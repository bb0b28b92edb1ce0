import { describe, expect, it } from 'vitest';
import { planRollouts } from './config.ts';

describe('planRollouts', () => {
  it('expands task × policy × defense × attempt with stable ids and seeds', () => {
    const plan = planRollouts(['a', 'b'], { policies: ['gold', 'allow-all'], defenses: ['tool-boundary'], attempts: 2, seed: 10 });
    expect(plan.map((p) => p.id)).toEqual([
      'a__gold__tool-boundary__a1',
      'a__gold__tool-boundary__a2',
      'a__allow-all__tool-boundary__a1',
      'a__allow-all__tool-boundary__a2',
      'b__gold__tool-boundary__a1',
      'b__gold__tool-boundary__a2',
      'b__allow-all__tool-boundary__a1',
      'b__allow-all__tool-boundary__a2',
    ]);
    expect(plan.map((p) => p.seed)).toEqual([10, 11, 10, 11, 10, 11, 10, 11]);
  });

  it('runs defense none once per task and attempt: no policy is read', () => {
    const plan = planRollouts(['a'], { policies: ['gold', 'deny-all'], defenses: ['none', 'prompt-only'], attempts: 1, seed: 0 });
    expect(plan.map((p) => p.id)).toEqual(['a__none__none__a1', 'a__gold__prompt-only__a1', 'a__deny-all__prompt-only__a1']);
  });
});
