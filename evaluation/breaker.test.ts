import { describe, expect, it } from 'vitest';
import { breakerMessage, dockerSuspect, engineFailingMessage, initialBreaker, recordEngineResult, recordResult, serviceFault, type BreakerState } from './breaker.ts';
import type { RolloutResult } from './result.ts';

type Result = Pick<RolloutResult, 'status' | 'infra_error'>;
const ok: Result = { status: 'completed' };
const infra = (source: string, code: string): Result => ({ status: 'infra_error', infra_error: { source, code, message: `${source} down` } });
const model = infra('model', 'MODEL_UNAVAILABLE');
const docker = infra('docker', 'DOCKER_API');

const fold = (limit: number, results: readonly Result[]): BreakerState => results.reduce(recordResult, initialBreaker(limit));

describe('circuit breaker', () => {
  it('trips at the limit of consecutive service errors, model and Docker alike', () => {
    expect(fold(3, [model, docker]).tripped).toBe(false);
    const tripped = fold(3, [model, docker, model]);
    expect(tripped).toMatchObject({ tripped: true, consecutive: 3, last: { source: 'model' } });
    expect(fold(1, [docker]).tripped).toBe(true);
  });

  it('resets on any measured rollout, an agent failure included', () => {
    const failedTask: Result = { status: 'completed' };
    expect(fold(3, [model, model, failedTask, model, model])).toMatchObject({ tripped: false, consecutive: 2 });
    expect(fold(3, [model, model, ok, model, model, model]).tripped).toBe(true);
  });

  it('neither counts nor resets on a task\'s own infrastructure error (its image, its validator)', () => {
    const build = infra('build', 'IMAGE_BUILD_FAILED');
    const validator = infra('validator', 'VALIDATOR_NO_RESULT');
    expect(fold(2, [build, build, build, validator]).consecutive).toBe(0);
    expect(fold(2, [model, build, build, model]).tripped).toBe(true);
    // A policy writer's outage is the model's; a policy that could not be had otherwise is the task's.
    expect(serviceFault(infra('policy', 'MODEL_UNAVAILABLE'))).toBeDefined();
    expect(serviceFault(infra('policy', 'INVALID_POLICY'))).toBeUndefined();
  });

  it('never trips with limit 0, and stays tripped once tripped', () => {
    expect(fold(0, Array.from({ length: 50 }, () => model))).toMatchObject({ tripped: false, consecutive: 50 });
    expect(fold(2, [model, model, ok]).tripped).toBe(true);
  });

  it('says why it stopped, with the last error and what to do', () => {
    const message = breakerMessage(fold(2, [model, docker]));
    expect(message).toContain('after 2 consecutive infrastructure errors');
    expect(message).toContain('docker DOCKER_API: docker down');
    expect(message).toContain('--max-consecutive-infra');
  });
});

describe('dockerSuspect', () => {
  it('suspects the daemon after a Docker or sandbox infrastructure error, not after a model outage or a completed rollout', () => {
    expect(dockerSuspect(docker)).toBe(true);
    expect(dockerSuspect(infra('sandbox', 'SANDBOX_BROKEN'))).toBe(true);
    expect(dockerSuspect(infra('policy', 'DOCKER_UNREACHABLE'))).toBe(true);
    expect(dockerSuspect(model)).toBe(false);
    expect(dockerSuspect(infra('build', 'DOCKER_API'))).toBe(false);
    expect(dockerSuspect(ok)).toBe(false);
  });
});

describe('an engine\'s own run of faults', () => {
  const foldEngine = (results: readonly Result[]): BreakerState => results.reduce(recordEngineResult, initialBreaker(3));

  it('counts only Docker and sandbox faults: a model outage or a task\'s build says nothing about the engine', () => {
    expect(foldEngine([docker, model, infra('build', 'DOCKER_API'), infra('sandbox', 'SANDBOX_BROKEN')])).toMatchObject({ consecutive: 2, tripped: false });
    expect(foldEngine([docker, docker, docker])).toMatchObject({ consecutive: 3, tripped: true, last: { code: 'DOCKER_API' } });
  });

  it('recovers once the engine runs a rollout, unlike the job\'s breaker', () => {
    expect(foldEngine([docker, docker, docker, ok])).toMatchObject({ consecutive: 0, tripped: false });
    expect(foldEngine([docker, docker, ok, docker, docker]).tripped).toBe(false);
  });

  it('names the engine, the count and the last fault', () => {
    expect(engineFailingMessage('tcp://b:2376', foldEngine([docker, docker, docker]))).toMatch(/daemon at tcp:\/\/b:2376 failed 3 rollouts in a row .*docker DOCKER_API: docker down/);
  });
});
