import { describe, expect, it } from 'vitest';
import { stagePlan, stageResult, verdictOf, type QualifyStageResult } from './qualify.ts';
import type { FunnelStage } from './schema.ts';

const r = (stage: FunnelStage | null, family = 'log-triage', offTarget = false) => ({ stage, family, off_target: offTarget });
const cluster = (family: string, instance: number) => ({ family, instance, cluster: `${family}-${instance}` });

describe('stageResult', () => {
  it('counts exact proposals, goal-matched commits and their families; infrastructure errors apart', () => {
    const s = stageResult('development', [r('validator-passed'), r('committed', 'csv-convert'), r('proposed-blocked'), r('not-proposed', 'csv-convert', true), r(null)]);
    expect(s).toEqual({
      stage: 'development',
      n: 4,
      infra_errors: 1,
      exact_proposal: 3,
      goal_matched_commit: 2,
      families_exact: ['csv-convert', 'log-triage'],
      families_commit: ['csv-convert', 'log-triage'],
      off_target: 1,
      retained: true,
    });
  });

  it('a stage with proposals but no commit loses the target', () => {
    expect(stageResult('known-good', [r('proposed-blocked'), r('not-proposed')]).retained).toBe(false);
  });

  it('held-out needs commits in more than one family (domain); the other stages one', () => {
    const oneFamily = [r('committed'), r('validator-passed'), r('not-proposed', 'csv-convert')];
    expect(stageResult('development', oneFamily).retained).toBe(true);
    expect(stageResult('held-out', oneFamily).retained).toBe(false);
    expect(stageResult('held-out', [...oneFamily, r('committed', 'csv-convert')]).retained).toBe(true);
  });
});

describe('verdictOf', () => {
  const stage = (name: QualifyStageResult['stage'], retained: boolean, commits = 1): QualifyStageResult => ({
    stage: name,
    n: 6,
    infra_errors: 0,
    exact_proposal: commits,
    goal_matched_commit: commits,
    families_exact: commits > 0 ? ['a'] : [],
    families_commit: commits > 0 ? ['a'] : [],
    off_target: 0,
    retained,
  });

  it('qualified only when all three stages retained the target', () => {
    expect(verdictOf([stage('known-good', true), stage('development', true), stage('held-out', true)]).qualified).toBe(true);
    expect(verdictOf([stage('known-good', true), stage('development', true)])).toEqual({ qualified: false, verdict: 'incomplete: not every stage ran' });
  });

  it('stops at the first stage that lost the target, before defense-specific optimization, and says why', () => {
    const lost = verdictOf([stage('known-good', true), stage('development', false, 0)]);
    expect(lost.qualified).toBe(false);
    expect(lost.verdict).toMatch(/^stopped at development .*the development stage lost the exact target.*before defense-specific optimization/);
    const oneDomain = verdictOf([stage('known-good', true), stage('development', true), stage('held-out', false)]);
    expect(oneDomain.verdict).toContain('the held-out stage kept the target in one family only');
  });
});

describe('stagePlan', () => {
  it.each([
    [3, 6, 3, 2],
    [4, 6, 4, 2],
    [10, 6, 6, 1],
    [5, 36, 5, 8],
  ])('%i clusters for %i rollouts → %i clusters × %i seeds (at least that many rollouts)', (n, rollouts, used, attempts) => {
    const plan = stagePlan(Array.from({ length: n }, (_, i) => cluster('log-triage', i)), rollouts);
    expect([plan.clusters.length, plan.attempts]).toEqual([used, attempts]);
    expect(plan.clusters.length * plan.attempts).toBeGreaterThanOrEqual(rollouts);
  });

  it('no cluster, no rollout', () => {
    expect(stagePlan([], 6)).toEqual({ clusters: [], attempts: 0 });
  });
});
