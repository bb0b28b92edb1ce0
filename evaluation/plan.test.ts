import { describe, expect, it } from 'vitest';
import { planRollouts, type EvalConfig } from './config.ts';
import { planJob } from './plan.ts';
import type { RolloutResult } from './result.ts';
import { fakeResult } from './test-support.ts';

const config: Pick<EvalConfig, 'policies' | 'defenses' | 'attempts' | 'seed'> = { policies: ['gold', 'allow-all'], defenses: ['tool-boundary', 'none'], attempts: 2, seed: 7 };
const TASKS = ['a', 'b'];
const rollouts = planRollouts(TASKS, config);

describe('planJob', () => {
  it('plans every rollout and runs them all in a new job', () => {
    const plan = planJob(TASKS, config, new Map());
    // per task: tool-boundary × 2 sources × 2 attempts + none × 2 attempts
    expect(plan.rollouts).toHaveLength(12);
    expect(plan.rollouts).toEqual(rollouts);
    expect(plan.pending).toEqual(rollouts);
    expect(plan.reused.size).toBe(0);
  });

  it('on resume keeps completed results and runs exactly the others: none lost, none twice', () => {
    const existing = new Map<string, RolloutResult>();
    const [first, second, third, fourth] = rollouts;
    if (first === undefined || second === undefined || third === undefined || fourth === undefined) throw new Error('plan too short');
    existing.set(first.id, fakeResult(first));
    // A completed rollout whose agent failed is done: the failure is the result.
    existing.set(second.id, fakeResult(second, 'completed', false));
    // An infrastructure error says nothing about the agent: run again.
    existing.set(third.id, fakeResult(third, 'infra_error'));
    // A result in the wrong folder is not this rollout's.
    existing.set(fourth.id, { ...fakeResult(fourth), rollout_id: first.id });
    // A folder the plan does not have (another task) is ignored.
    existing.set('zzz__gold__none__a1', { ...fakeResult(first), rollout_id: 'zzz__gold__none__a1' });

    const plan = planJob(TASKS, config, existing);
    expect([...plan.reused.keys()]).toEqual([first.id, second.id]);
    expect(plan.pending.map((s) => s.id)).toEqual(rollouts.slice(2).map((s) => s.id));
    const ids = [...plan.reused.keys(), ...plan.pending.map((s) => s.id)];
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(rollouts.map((s) => s.id)));
  });

  it('is the same plan whatever order the results were found in', () => {
    const existing = new Map(rollouts.slice(0, 5).map((s) => [s.id, fakeResult(s)] as const));
    const reversed = new Map([...existing].reverse());
    expect(planJob(TASKS, config, reversed)).toEqual(planJob(TASKS, config, existing));
  });
});
