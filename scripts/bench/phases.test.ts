import { describe, expect, it } from 'vitest';
import { renderPhases, summarizePhases, type PhaseSample } from './phases.ts';

const sample = (over: Partial<PhaseSample>): PhaseSample => ({ setup: 200, episode: 500, validate: 300, measure: 10, teardown: 90, deferred: 120, floor: 400, ...over });

describe('summarizePhases', () => {
  it('divides each phase median by the floor median and sums the fixed phases per rollout', () => {
    const r = summarizePhases('log-triage', [sample({}), sample({ validate: 500, floor: 200 }), sample({ validate: 700, floor: 600 })]);
    expect(r.floor.median).toBe(400);
    expect(r.phases.validate.median).toBe(500);
    expect(r.ratios.validate).toBeCloseTo(500 / 400);
    expect(r.ratios.setup).toBeCloseTo(0.5);
    // Per-rollout sums 600, 800, 1000: the median of the sums, not the sum of the medians.
    expect(r.fixed.median).toBe(800);
    expect(r.ratios.fixed).toBeCloseTo(2);
    expect(r.ratios.deferred).toBeCloseTo(0.3);
    expect(r.rollouts).toBe(3);
  });

  it("splits the task's tests out of the fixed cost when every sample timed them", () => {
    const r = summarizePhases('t', [sample({ validatorCommands: 100 }), sample({ validatorCommands: 200 }), sample({ validatorCommands: 300 })]);
    expect(r.tests?.commands.median).toBe(200);
    // fixed 600 per rollout less 100, 200, 300.
    expect(r.tests?.harnessFixed.median).toBe(400);
    expect(r.ratios.harnessFixed).toBeCloseTo(1);
    expect(renderPhases(r)).toMatch(/without the task's tests\s+400 ms.*1\.00×/);
    expect(summarizePhases('t', [sample({ validatorCommands: 100 }), sample({})]).tests).toBeUndefined();
  });

  it('bounds what any harness could reach: create + start plus the task\'s tests, per rollout, ÷ the floor', () => {
    const r = summarizePhases('t', [sample({ floorStart: 300, validatorCommands: 600 }), sample({ floorStart: 250, validatorCommands: 450 }), sample({ floorStart: 350, validatorCommands: 550 })]);
    // Per rollout 900, 700, 900: median 900 over the floor's 400.
    expect(r.noHarness?.median).toBe(900);
    expect(r.ratios.noHarness).toBeCloseTo(2.25);
    expect(renderPhases(r)).toMatch(/with no harness at all\s+900 ms.*2\.25×\s+\(create \+ start \+ the task's tests: over 2× whatever the harness does/);
    const under = summarizePhases('t', [sample({ floorStart: 300, validatorCommands: 100 })]);
    expect(renderPhases(under)).toMatch(/with no harness at all\s+400 ms.*1\.00×\s+\(create \+ start \+ the task's tests\)/);
    // Untimed tests or a floor without its start: no bound.
    expect(summarizePhases('t', [sample({ floorStart: 300 })]).noHarness).toBeUndefined();
    expect(summarizePhases('t', [sample({ validatorCommands: 100 })]).noHarness).toBeUndefined();
  });

  it('refuses an empty sample', () => {
    expect(() => summarizePhases('t', [])).toThrow(/no rollout/);
  });
});

describe('renderPhases', () => {
  it('prints every phase with its ratio and the verdict against the 2× target', () => {
    const over = renderPhases(summarizePhases('t', [sample({ validate: 900 })]));
    expect(over).toMatch(/validate\s+900 ms.*2\.25×/);
    expect(over).toMatch(/fixed cost \(sum\)\s+1200 ms.*3\.00×\s+target ≤ 2× over/);
    const ok = renderPhases(summarizePhases('t', [sample({ validate: 100, setup: 100, teardown: 0 })]));
    expect(ok).toMatch(/fixed cost \(sum\)\s+210 ms.*0\.53×\s+target ≤ 2× ok/);
  });
});
