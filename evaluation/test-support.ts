/**
 * Rollout results for unit tests of jobs (plan, resume, execute) that never
 * run a rollout: schema-valid, built from the spec. Not exported from index.ts.
 */
import { fileURLToPath } from 'node:url';
import type { RolloutContext } from './rollout.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import type { RolloutResult } from './result.ts';

/** The bundled starter tasks, for job tests that plan over them. */
export const TEST_TASKS = fileURLToPath(new URL('../tasks', import.meta.url));

/** A job config over the starter tasks: scripted/oracle under gold and tool-boundary; `over` replaces fields. */
export function testEvalConfig(over: Partial<EvalConfig> = {}): EvalConfig {
  return {
    schema_version: 1,
    model: 'scripted/oracle',
    tasks_dir: TEST_TASKS,
    oracle_traces_dir: 'oracle-traces',
    include: [],
    exclude: [],
    policies: ['gold'],
    defenses: ['tool-boundary'],
    attempts: 1,
    seed: 0,
    max_turns: 5,
    cache: 'off',
    model_timeout_sec: 10,
    model_retries: 0,
    ...over,
  };
}

export function fakeResult(spec: RolloutSpec, status: RolloutResult['status'] = 'completed', utility = true): RolloutResult {
  return {
    schema_version: 1,
    rollout_id: spec.id,
    task_id: spec.taskId,
    dataset: 'standard',
    stage: 'clean',
    family: null,
    cluster: spec.taskId,
    model: 'scripted/oracle',
    policy_source: spec.policy,
    policy_sha256: null,
    defense: { name: spec.defense, version: '1' },
    attempt: spec.attempt,
    seed: spec.seed,
    status,
    ...(status === 'infra_error' ? { outcome: 'infra_error' as const, infra_error: { source: 'model', code: 'MODEL_UNAVAILABLE', message: 'fake outage' } } : { outcome: 'completed' as const }),
    utility_success: status === 'infra_error' ? null : utility,
    attack_success: null,
    metrics: null,
    static_score: null,
    end_reason: status === 'infra_error' ? null : 'done',
    enforcement: null,
    totals: null,
    image: null,
    duration_ms: 1,
  };
}

/** What a job handed one rollout, as a fake rollout runner records it. */
export interface RolloutCall {
  spec: RolloutSpec;
  ctx: RolloutContext;
}
