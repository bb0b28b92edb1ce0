/**
 * Execute: the pending rollouts through a bounded pool, each into its own
 * folder with result.json written last and atomically. A rollout that could
 * not start (its image did not build, its policy could not be generated)
 * still gets a result: an infra_error, which no rate counts. Infrastructure
 * faults never leave the pool: a rollout the Docker daemon failed under is an
 * infra_error, the pool then waits for the daemon before starting another
 * (or stops starting them), and a circuit breaker (breaker.ts) stops it after
 * too many infrastructure errors in a row. A rollout not started has no result.
 * Each rollout is claimed first (claims.ts): one another live process claimed is left to it.
 * With several engines (`eval --engine`), each has its slots and its own daemon gate
 * (engine-pool.ts): an engine that stays away is drained and the others run what is left.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError } from '../core/index.ts';
import { DaemonGate, type DaemonWaitOptions, type Engine, type EngineLane } from '../docker/index.ts';
import type { ReplayEntry } from '../agent/index.ts';
import type { EbpfHub } from '../sandbox/ebpf/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { acquireClaim, releaseClaim, startHeartbeat, type ClaimOptions, type FoundClaim } from './claims.ts';
import { readResult, rolloutDir, writeResult } from './jobdir.ts';
import { isComplete } from './plan.ts';
import type { PreparedJob, Unstartable } from './prepare.ts';
import type { RolloutResult } from './result.ts';
import { primaryError, runRollout } from './rollout.ts';
import { breakerMessage, dockerSuspect, ENGINE_DRAIN_AFTER, engineFailingMessage, initialBreaker, recordEngineResult, recordResult } from './breaker.ts';
import { DEFAULT_CPU_PINNING, slotCpu, type CpuPinning } from './cpu-pinning.ts';
import { lanePool } from './engine-pool.ts';
import { TeardownQueue, type TeardownFailure } from './teardown.ts';

/** One rollout, given its inputs and folder (default runRollout: a container, the episode, the validators). */
export type RolloutRunner = typeof runRollout;

export interface ExecuteOptions {
  engine: Engine;
  /** The engines rollouts run on, each with its slots (default: `engine` with `concurrency`). */
  engines?: readonly EngineLane<Engine>[];
  config: EvalConfig;
  /** The job's folder. */
  dir: string;
  jobId: string;
  concurrency: number;
  /** auto: each rollout slot's commands, with their tracer, run on the slot's CPU (cpu-pinning.ts); default DEFAULT_CPU_PINNING. */
  cpuPinning?: CpuPinning;
  /** `--tracer ebpf`: the eBPF hub every rollout's containers join (runJob starts and stops it). */
  hostTracer?: EbpfHub;
  /** CPUs the slots spread over (default: this host's, the daemon's when local; a pin to a CPU the container lacks is ignored by its agent, unpinned). */
  cpus?: number;
  replay?: readonly ReplayEntry[];
  /** Aborting stops new rollouts from starting; running ones finish and are kept. */
  signal?: AbortSignal;
  /** How long to wait for a Docker daemon that stopped answering before no more rollouts start (default 60 s). */
  dockerWaitMs?: number;
  /** Consecutive service infrastructure errors after which no more rollouts start (default 5; 0: never). */
  maxConsecutiveInfra?: number;
  onStart?: (spec: RolloutSpec) => void;
  onDone?: (spec: RolloutSpec, result: RolloutResult) => void;
  runRollout?: RolloutRunner;
  /** The daemon did not answer after a Docker fault: the pool waits up to dockerWaitMs before starting another rollout. */
  onDaemonWait?: (waitMs: number, endpoint: string) => void;
  /** Injected for tests: how the pool waits for the daemon. */
  waitOptions?: Pick<DaemonWaitOptions, 'intervalMs' | 'now' | 'sleep'>;
  /** How this process claims rollouts (its shard, stale limit, heartbeat; a clock for tests). */
  claims?: ClaimOptions;
  /** Another process holds a live claim on the rollout: this one does not run it. */
  onBusy?: (spec: RolloutSpec, by: FoundClaim | undefined) => void;
}

export const DEFAULT_DOCKER_WAIT_SEC = 60;
export const DEFAULT_MAX_CONSECUTIVE_INFRA = 5;

/** Why the pool stopped starting rollouts before the plan ran out (an interrupt is `interrupted`). */
export interface JobStop {
  reason: 'docker-unreachable' | 'circuit-breaker';
  message: string;
}

export interface Execution {
  /** What this process ran. */
  results: Map<string, RolloutResult>;
  /** Rollouts another process completed after this one planned (found once claimed). */
  elsewhere: Map<string, RolloutResult>;
  /** Rollouts another live process had claimed: not run here. */
  busy: string[];
  /** Some pending rollout was not started because the signal was aborted. */
  interrupted: boolean;
  /** Set when the pool stopped starting rollouts on its own; the ones it did not start have no result. */
  stopped?: JobStop;
  /** Engines that stopped answering and were given no more rollouts (the others ran them), in order. */
  drained: DrainedEngine[];
  /** Rollout containers whose removal failed after their results were written (teardown.ts), in order. */
  leaked: TeardownFailure[];
}

export interface DrainedEngine {
  endpoint: string;
  /** unanswered: silent past --docker-wait; failing: answering, but failing ENGINE_DRAIN_AFTER rollouts in a row. */
  reason: 'unanswered' | 'failing';
  message: string;
}

/** Why a job over several engines stopped when the last of them was drained, naming each and how it went. Pure. */
export function noEngineLeft(drained: readonly DrainedEngine[]): string {
  if (drained.every((d) => d.reason === 'unanswered')) return `no engine answers: ${drained.map((d) => d.endpoint).join(', ')}; stopped starting rollouts (--docker-wait)`;
  const how = (d: DrainedEngine): string => `${d.endpoint} (${d.reason === 'unanswered' ? 'did not answer' : `failed ${ENGINE_DRAIN_AFTER} rollouts in a row`})`;
  return `no engine left: ${drained.map(how).join(', ')}; stopped starting rollouts`;
}

const unanswered = (engine: Engine, waitMs: number): string =>
  `the Docker daemon at ${engine.endpoint} did not answer for ${Math.round(waitMs / 1000)} s; stopped starting rollouts (--docker-wait)`;

export async function executeJob(pending: readonly RolloutSpec[], prepared: PreparedJob, options: ExecuteOptions): Promise<Execution> {
  const run = options.runRollout ?? runRollout;
  const results = new Map<string, RolloutResult>();
  const elsewhere = new Map<string, RolloutResult>();
  const busy: string[] = [];
  const claims = options.claims ?? {};
  let interrupted = false;
  let stopped: JobStop | undefined;
  let breaker = initialBreaker(options.maxConsecutiveInfra ?? DEFAULT_MAX_CONSECUTIVE_INFRA);
  const dockerWaitMs = options.dockerWaitMs ?? DEFAULT_DOCKER_WAIT_SEC * 1000;
  const lanes = (options.engines ?? [{ engine: options.engine, slots: options.concurrency }]).map((l) => ({
    engine: l.engine,
    slots: Math.max(1, l.slots),
    gate: new DaemonGate(l.engine, {
      ...options.waitOptions,
      timeoutMs: dockerWaitMs,
      onUnanswered: () => options.onDaemonWait?.(dockerWaitMs, l.engine.endpoint),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    }),
    faults: initialBreaker(ENGINE_DRAIN_AFTER),
  }));
  const drained: DrainedEngine[] = [];
  const several = lanes.length > 1;
  const isDrained = (lane: (typeof lanes)[number]): boolean => drained.some((d) => d.endpoint === lane.engine.endpoint);
  const drain = (lane: (typeof lanes)[number], reason: DrainedEngine['reason'], message: string): void => {
    if (!isDrained(lane)) drained.push({ endpoint: lane.engine.endpoint, reason, message });
  };
  // An engine failing rollouts in a row is drained only while another one is running its own; when
  // every engine fails, the job-wide breaker and the daemon gate decide.
  const failingBesideHealthy = (lane: (typeof lanes)[number]): boolean =>
    several && lane.faults.tripped && lanes.some((l) => l !== lane && !isDrained(l) && l.faults.consecutive === 0);
  const aborted = (): boolean => options.signal?.aborted === true;
  const pinning = options.cpuPinning ?? DEFAULT_CPU_PINNING;
  const cpus = options.cpus ?? availableParallelism();
  // Rollout containers are removed while the next rollout runs (teardown.ts); the job waits for them below.
  const teardown = new TeardownQueue();
  const runClaimed = async (spec: RolloutSpec, lane: (typeof lanes)[number], pinCpu: number | undefined): Promise<void> => {
    const { engine, gate } = lane;
    // Another process may have finished the rollout (result written, claim released) since this one planned.
    const late = await readResult(join(options.dir, spec.id));
    if (isComplete(spec, late)) {
      elsewhere.set(spec.id, late);
      return;
    }
    const dir = await rolloutDir(options.dir, spec);
    options.onStart?.(spec);
    const inputs = await prepared.inputsFor(spec, engine);
    let result: RolloutResult;
    if ('failure' in inputs) {
      result = unstartedResult(spec, options.config, (several ? await engineGone(engine, inputs) : undefined) ?? inputs);
    } else {
      try {
        result = await run(spec, {
          ...inputs,
          engine,
          config: options.config,
          ...(options.replay === undefined ? {} : { replay: options.replay }),
          jobId: options.jobId,
          dir,
          ...(pinCpu === undefined ? {} : { pinCpu }),
          ...(options.hostTracer === undefined ? {} : { hostTracer: options.hostTracer }),
          teardown,
        });
      } catch (e) {
        result = unstartedResult(spec, options.config, { task: inputs.task, failure: await dockerFault(engine, e), source: 'docker' });
      }
    }
    if (claims.shard !== undefined) result = { ...result, shard: claims.shard };
    // Where it ran changes no result, but says which engine to look at when one misbehaves.
    result = { ...result, engine: engine.endpoint };
    await writeResult(dir, result);
    results.set(spec.id, result);
    if (dockerSuspect(result)) gate.markSuspect();
    lane.faults = recordEngineResult(lane.faults, result);
    breaker = recordResult(breaker, result);
    if (breaker.tripped) stopped ??= { reason: 'circuit-breaker', message: breakerMessage(breaker) };
    options.onDone?.(spec, result);
  };
  await lanePool(pending, lanes.map((l) => l.slots), async (spec, where) => {
    const lane = lanes[where.lane];
    if (lane === undefined) throw new AuthbenchError('INTERNAL', `no engine lane ${where.lane}`);
    if (aborted()) {
      interrupted = true;
      return 'done';
    }
    if (stopped !== undefined) return 'done';
    if (failingBesideHealthy(lane)) {
      drain(lane, 'failing', engineFailingMessage(lane.engine.endpoint, lane.faults));
      return 'drained';
    }
    // After a Docker fault, no rollout starts on that engine until its daemon answers again: one that
    // started against a dead daemon would only be one more infra error, and it is not written at all.
    if (!(await lane.gate.ready())) {
      if (aborted()) {
        interrupted = true;
        return 'done';
      }
      drain(lane, 'unanswered', unanswered(lane.engine, dockerWaitMs));
      // The last engine gone: the job stops starting rollouts; before that, the others take this one.
      if (drained.length === lanes.length) stopped ??= { reason: 'docker-unreachable', message: several ? noEngineLeft(drained) : unanswered(lane.engine, dockerWaitMs) };
      return 'drained';
    }
    if (stopped !== undefined) return 'done';
    const claim = await acquireClaim(options.dir, spec.id, claims);
    if (claim.kind === 'busy') {
      busy.push(spec.id);
      options.onBusy?.(spec, claim.by);
      return 'done';
    }
    const stopHeartbeat = startHeartbeat(claim.held, claims);
    try {
      await runClaimed(spec, lane, pinning === 'auto' ? slotCpu(where.slot, cpus) : undefined);
    } finally {
      stopHeartbeat();
      // After result.json: a process that finds no claim finds the result.
      await releaseClaim(claim.held);
    }
    return 'done';
  }).finally(() => teardown.settle());
  // A removal that failed is reported, never a rollout's fault: its verdicts were read before.
  const leaked = await teardown.settle();
  return { results, elsewhere, busy, interrupted, leaked, ...(stopped === undefined ? {} : { stopped }), drained };
}

/**
 * What a rollout that threw is scored as. runRollout turns infrastructure failures into results
 * itself; what still escapes it is either a Docker fault it could not name (a raw socket error, a
 * disposal that failed as the daemon went away) or a real fault of authbench or the job's setup.
 * The daemon decides: if it no longer answers, the rollout is an infrastructure error; if it
 * does, the error is rethrown (unwrapped from any disposal error) and stops the job.
 */
export async function dockerFault(engine: Pick<Engine, 'ping'>, thrown: unknown): Promise<AuthbenchError> {
  const e = primaryError(thrown);
  if (e instanceof AuthbenchError && e.isInfrastructure) return e;
  const down = await engine.ping().then(
    () => false,
    () => true,
  );
  if (!down) throw e;
  const message = e instanceof Error ? e.message : String(e);
  return new AuthbenchError('DOCKER_UNREACHABLE', `the Docker daemon stopped answering during the rollout: ${message}`, { cause: e });
}

/**
 * A rollout whose image could not be made because its engine went away is that engine's fault, not
 * the task's: a Docker error (so the pool checks the daemon and drains the engine), where a build
 * failure of a task says nothing about the services and would let a dead engine take — and fail —
 * one rollout after another. Undefined when it is not a build failure or the daemon answers.
 */
async function engineGone(engine: Engine, why: Unstartable): Promise<(Pick<Unstartable, 'task' | 'failure'> & { source: string }) | undefined> {
  if (why.source !== 'build' || (await engine.ping().then(() => true, () => false))) return undefined;
  const failure = new AuthbenchError('DOCKER_UNREACHABLE', `the Docker daemon at ${engine.endpoint} stopped answering while the rollout's image was made: ${why.failure.message}`, { cause: why.failure });
  return { task: why.task, failure, source: 'docker' };
}

/** The result of a rollout that never started: an infrastructure error of its preparation. Pure. */
export function unstartedResult(spec: RolloutSpec, config: Pick<EvalConfig, 'model'>, why: Pick<Unstartable, 'task' | 'failure'> & { source: string }): RolloutResult {
  const { task } = why;
  const error: AuthbenchError = why.failure;
  return {
    schema_version: 1,
    rollout_id: spec.id,
    task_id: task.id,
    dataset: task.dataset,
    stage: task.authbench.stage,
    family: task.authbench.family ?? null,
    cluster: task.authbench.cluster,
    model: config.model,
    policy_source: spec.policy,
    policy_sha256: null,
    defense: { name: spec.defense, version: 'none' },
    attempt: spec.attempt,
    seed: spec.seed,
    status: 'infra_error',
    infra_error: { source: why.source, code: error.code, message: error.message },
    utility_success: null,
    attack_success: null,
    metrics: null,
    static_score: null,
    end_reason: null,
    enforcement: null,
    totals: null,
    image: null,
    duration_ms: 0,
  };
}
