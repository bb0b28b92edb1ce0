/**
 * The job's circuit breaker: after `limit` infrastructure errors in a row (a dead model endpoint,
 * a Docker daemon that keeps failing) starting more rollouts only burns time and money, so the
 * pool stops starting them. Pure: the pool folds each result in, in the order results arrive.
 */
import type { RolloutResult } from './result.ts';

type InfraError = NonNullable<RolloutResult['infra_error']>;

export interface BreakerState {
  /** Trips at this many consecutive service errors; 0: never. */
  limit: number;
  consecutive: number;
  /** The last service error counted, for the message. */
  last?: InfraError;
  tripped: boolean;
}

/** Sources that are one task's own problem (its image, its policy's preparation, its validator): they say nothing about the services. */
const TASK_SOURCES: ReadonlySet<string> = new Set(['build', 'validator']);

/**
 * Whether a result is evidence that a service is down: an infrastructure error of the model or of
 * Docker (its daemon, the sandbox machinery on it), or a policy writer's model outage. A task whose
 * image does not build fails all its rollouts in a row, and that is no outage. Pure.
 */
export function serviceFault(result: Pick<RolloutResult, 'status' | 'infra_error'>): InfraError | undefined {
  const e = result.infra_error;
  if (result.status !== 'infra_error' || e === undefined) return undefined;
  if (TASK_SOURCES.has(e.source)) return undefined;
  if (e.source === 'policy' && !e.code.startsWith('MODEL_') && !e.code.startsWith('DOCKER_')) return undefined;
  return e;
}

/** Whether a result suggests the Docker daemon itself failed, so the pool checks it before starting another rollout. Pure. */
export function dockerSuspect(result: Pick<RolloutResult, 'status' | 'infra_error'>): boolean {
  const e = serviceFault(result);
  return e !== undefined && (e.source === 'docker' || e.source === 'sandbox' || e.code.startsWith('DOCKER_'));
}

export function initialBreaker(limit: number): BreakerState {
  return { limit, consecutive: 0, tripped: false };
}

/**
 * The breaker after one more result: a service error counts, any measured rollout (completed,
 * whatever its outcome) resets the count, a task's own infrastructure error leaves it as it is.
 * Once tripped it stays tripped. Pure.
 */
export function recordResult(state: BreakerState, result: Pick<RolloutResult, 'status' | 'infra_error'>): BreakerState {
  if (state.tripped) return state;
  if (result.status === 'completed') return { ...state, consecutive: 0 };
  const fault = serviceFault(result);
  if (fault === undefined) return state;
  const consecutive = state.consecutive + 1;
  return { ...state, consecutive, last: fault, tripped: state.limit > 0 && consecutive >= state.limit };
}

/** Why a tripped breaker stopped the job, for the operator. Pure. */
export function breakerMessage(state: BreakerState): string {
  const last = state.last === undefined ? '' : ` (last: ${state.last.source} ${state.last.code}: ${state.last.message})`;
  return `stopped starting rollouts after ${state.consecutive} consecutive infrastructure errors${last}; raise --max-consecutive-infra (0: never stop) or fix the cause and --resume`;
}

/**
 * With several engines, one of them failing rollouts in a row while it still answers pings (a
 * daemon that is shutting down answers with errors for a while) is drained after this many of its
 * own Docker faults: otherwise its fast failures take one rollout after another from the healthy
 * engines and trip the job-wide breaker.
 */
export const ENGINE_DRAIN_AFTER = 3;

/** One engine's run of Docker faults: folded like the job's breaker, but only over the engine's own (Docker, sandbox) faults. Pure. */
export function recordEngineResult(state: BreakerState, result: Pick<RolloutResult, 'status' | 'infra_error'>): BreakerState {
  // Unlike the job's breaker it recovers: an engine that ran a rollout since is no longer failing.
  if (result.status === 'completed') return { ...state, consecutive: 0, tripped: false };
  const fault = dockerSuspect(result) ? serviceFault(result) : undefined;
  if (fault === undefined) return state;
  const consecutive = state.consecutive + 1;
  return { ...state, consecutive, last: fault, tripped: state.limit > 0 && consecutive >= state.limit };
}

/** Why an engine that kept failing was drained, for the operator. Pure. */
export function engineFailingMessage(endpoint: string, state: BreakerState): string {
  const last = state.last === undefined ? '' : ` (last: ${state.last.source} ${state.last.code}: ${state.last.message})`;
  return `the Docker daemon at ${endpoint} failed ${state.consecutive} rollouts in a row while another engine ran its own${last}; stopped starting rollouts on it`;
}
