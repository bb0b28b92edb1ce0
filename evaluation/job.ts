/**
 * An eval job, in three phases; one rollout goes from `eval` to its result.json
 * through them in order:
 *   plan     (plan.ts, pure)  the job's rollouts — task × policy source × defense × attempt —
 *                             and which of them an earlier run already completed (resume);
 *   prepare  (prepare.ts)     each task's gold bundle read once (goldstore), the policy of every
 *                             (task, source) with its static score and the ledger, the images built;
 *   execute  (execute.ts)     the pool: each pending rollout into its folder, result.json last.
 * Around them, jobdir.ts keeps the job's folder: config.json, lock.json (inputs and their
 * digests; `--resume` refuses changed inputs) and the results an earlier run left; claims.ts lets
 * several processes (`--shard I/N`, resumes) run one job at once, each rollout once.
 */
import { existsSync } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { minimatch } from 'minimatch';
import { AuthbenchError } from '../core/index.ts';
import { engineDiskFree, type BuildHostAccess, type Engine, type EngineLane, type OrphanRemoval } from '../docker/index.ts';
import { REPLAY_REF, checkAgentModel, loadReplayFile, type ReplayFile } from '../agent/index.ts';
import { loadTaskBundle, readPolicyFile, type TaskBundle } from '../goldstore/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { discoverTasks, loadTask, type Task } from '../task-format/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { executeJob, type DrainedEngine, type JobStop, type RolloutRunner } from './execute.ts';
import type { TeardownFailure } from './teardown.ts';
import { checkJobDir, checkJobName, jobLock, jobRunId, openJobDir, readResults } from './jobdir.ts';
import { CLAIMS_DIR, type ClaimOptions } from './claims.ts';
import type { CpuPinning } from './cpu-pinning.ts';
import { planJob, shardLabel, shardPlan, type JobPlan, type Shard } from './plan.ts';
import { builtinPolicies, prepareJob, type PolicyWriterFn } from './prepare.ts';
import type { RolloutResult } from './result.ts';
import { startHostTracer } from './host-tracer.ts';
import { diskHeadroom, taskLimits } from '../taskenv/index.ts';

export interface JobEvent {
  kind: 'building' | 'built' | 'rollout-start' | 'rollout-done' | 'skipped' | 'busy' | 'orphans-removed' | 'orphans-elsewhere' | 'docker-wait' | 'disk-short' | 'tracer-priority' | 'tracer-paths';
  /**
   * With disk-short: a local engine's data root has less room than the job's concurrent rollouts
   * may write, each up to its task's storage limit (a warning: one that fills its limit would fill
   * the disk, and the others' failures would be the infrastructure's).
   */
  disk?: { root: string; freeBytes: number; neededBytes: number };
  /** With orphans-removed: what a killed earlier run of the job left and this run removed. */
  orphans?: OrphanRemoval;
  /**
   * With orphans-elsewhere: what other killed runs left on the engines (their owners gone), still
   * holding memory and disk. Not removed here: their own job's next run or `clean --containers` does.
   */
  strays?: { containers: number; networks: number };
  /** With docker-wait and building/built: the engine's endpoint. */
  engine?: string;
  /** With docker-wait: how long the pool waits for the daemon before it stops starting rollouts. */
  waitMs?: number;
  rollout?: RolloutSpec;
  result?: RolloutResult;
  taskId?: string;
  done: number;
  total: number;
}

export interface JobOptions {
  config: EvalConfig;
  jobsDir: string;
  name: string;
  resume: boolean;
  concurrency: number;
  /** Rollout slots pin their commands, with their tracer, to a CPU each (default DEFAULT_CPU_PINNING; cpu-pinning.ts). */
  cpuPinning?: CpuPinning;
  onEvent?: (e: JobEvent) => void;
  /** Aborting stops new rollouts from starting; running ones finish and are kept. */
  signal?: AbortSignal;
  /** How long to wait for a Docker daemon that stopped answering mid-job (default 60 s). */
  dockerWaitMs?: number;
  /** Consecutive service infrastructure errors that stop the job from starting rollouts (default 5; 0: never). */
  maxConsecutiveInfra?: number;
  /** The build CA and proxies for the task images' RUN steps (the config holds what changes an image). */
  hostAccess?: BuildHostAccess;
  /** Where model keys and base URLs are read (default: the environment with `.env` under it); tests pass their own. */
  modelEnv?: Readonly<Record<string, string | undefined>>;
  /** The engines the rollouts run on, each with its slots (`eval --engine`); default: runJob's engine with `concurrency`. */
  engines?: readonly EngineLane<Engine>[];
  /** Run only this shard's slice of the plan (shardPlan); joins the job if another process started it. */
  shard?: Shard;
  /** How claims go stale and are refreshed (defaults: claims.ts); tests shorten them or pass a clock. */
  claims?: Pick<ClaimOptions, 'staleMs' | 'heartbeatMs' | 'now'>;
}

/** What runs a job's rollouts and writes its generated policies; unit tests pass fakes, eval the real ones (Docker, models). */
export interface JobDeps {
  runRollout?: RolloutRunner;
  writePolicy?: PolicyWriterFn;
}

export interface JobOutcome {
  dir: string;
  /** Every rollout with a result, in plan order (reused ones included). */
  results: RolloutResult[];
  planned: number;
  /** Rollouts already complete before this run (resume), or completed by another process while it ran. */
  reused: number;
  /** Rollouts another live process had claimed (another shard, a resume): not this run's to finish. */
  busy: number;
  interrupted: boolean;
  /** The job stopped starting rollouts on its own (the daemon stayed away, the circuit breaker tripped), and why. */
  stopped?: JobStop;
  /** Engines that stayed away and were given no more rollouts while others went on (`--engine`); absent: none. */
  drained?: DrainedEngine[];
  /** Rollout containers whose removal failed after their results were written (`authbench clean` removes them); absent: none. */
  leaked?: TeardownFailure[];
  /** Some planned rollout not claimed elsewhere has no result or an infrastructure error: `--resume` has work left. */
  incomplete: boolean;
  /** Every result is an infrastructure error: nothing was measured, which is a failure of the run, never a result. */
  allInfra: boolean;
}

/** Nothing was measured: there are results and each is an infrastructure error. Pure. */
export function everyRolloutInfra(results: readonly RolloutResult[]): boolean {
  return results.length > 0 && results.every((r) => r.status === 'infra_error');
}

/**
 * The tasks a job runs: under tasks_dir, kept by `include` (each glob must match a task, so a
 * typo is an error rather than a smaller job), dropped by `exclude`, then the first `limit` by id.
 */
export async function selectTasks(config: Pick<EvalConfig, 'tasks_dir' | 'include' | 'exclude' | 'limit'>): Promise<Task[]> {
  const tasks = await Promise.all((await discoverTasks(config.tasks_dir)).map((d) => loadTask(d)));
  const unmatched = config.include.filter((g) => !tasks.some((t) => minimatch(t.id, g)));
  if (unmatched.length > 0) {
    throw new AuthbenchError('TASK_NOT_FOUND', `no task under ${config.tasks_dir} matches ${unmatched.map((g) => JSON.stringify(g)).join(', ')}`, {
      file: config.tasks_dir,
      hint: 'authbench tasks list shows the task ids',
    });
  }
  const kept = tasks
    .filter((t) => (config.include.length === 0 || config.include.some((g) => minimatch(t.id, g))) && !config.exclude.some((g) => minimatch(t.id, g)))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return config.limit === undefined ? kept : kept.slice(0, config.limit);
}

/**
 * The hand-written policy a job evaluates (its config's policy_file), checked against the
 * digest recorded there so --resume refuses a changed file. Undefined when the job has none.
 */
export async function loadJobPolicyFile(config: Pick<EvalConfig, 'policies' | 'policy_file'>): Promise<Policy | undefined> {
  const wants = config.policies.includes('file');
  if (config.policy_file === undefined) {
    if (wants) throw new AuthbenchError('INVALID_CONFIG', 'policy source `file` needs a policy_file', { field: 'policy_file' });
    return undefined;
  }
  if (!wants) throw new AuthbenchError('INVALID_CONFIG', 'a policy_file is evaluated only with the policy source `file`', { field: 'policy_file' });
  const { policy, sha256 } = await readPolicyFile(config.policy_file.path);
  if (sha256 !== config.policy_file.sha256) {
    throw new AuthbenchError('CHECK_FAILED', `the policy file changed since the job's config recorded it (sha256 ${sha256}, recorded ${config.policy_file.sha256})`, {
      file: config.policy_file.path,
    });
  }
  return policy;
}

/** A job checked and planned, before anything is written or built. */
export interface CheckedJob {
  dir: string;
  tasks: Task[];
  bundles: Map<string, TaskBundle>;
  plan: JobPlan;
  lock: object;
  replay: ReplayFile | undefined;
  policyFile: Policy | undefined;
}

/**
 * Everything a job can be refused for, read-only and without Docker: the job name, the model
 * (scripted name, base URL, key), the replay and policy files, the task selection, gold for
 * `gold` rollouts, and on resume the lock. Also what `--dry-run` prints.
 */
export async function checkJob(options: Omit<JobOptions, 'concurrency'>): Promise<CheckedJob> {
  const { config } = options;
  checkJobName(options.name);
  const dir = join(options.jobsDir, options.name);
  await checkAgentModel(config.model, { cacheMode: config.cache, ...(config.base_url === undefined ? {} : { baseUrl: config.base_url }), ...(options.modelEnv === undefined ? {} : { env: options.modelEnv }) });
  // Before anything is built or run: a bad replay or policy file is bad input, not a failed rollout.
  const replay = await loadJobReplay(config);
  const policyFile = await loadJobPolicyFile(config);
  const tasks = await selectTasks(config);
  if (tasks.length === 0) throw new AuthbenchError('TASK_NOT_FOUND', `no tasks selected under ${config.tasks_dir}`, { file: config.tasks_dir });
  const bundles = new Map<string, TaskBundle>();
  for (const task of tasks) bundles.set(task.id, await loadTaskBundle(task, config.oracle_traces_dir));
  const lock = await jobLock(config, [...bundles.values()]);
  // A shard joins the job another shard may have started: like a resume, only with the same lock.
  await checkJobDir(dir, options.name, lock, options.resume || options.shard !== undefined);
  const plan = shardPlan(planJob(tasks.map((t) => t.id), config, await readResults(dir)), options.shard);
  // GOLD_MISSING (and any other policy that cannot be had) before the job's folder exists.
  builtinPolicies(plan.pending, bundles, policyFile);
  return { dir, tasks, bundles, plan, lock, replay, policyFile };
}

/**
 * A job's folder with its config and lock, and nothing run: what a cluster
 * executor does before submitting the shards that `--resume` it. A new job
 * whose folder could not be written leaves nothing behind.
 */
export async function createJob(options: Omit<JobOptions, 'concurrency' | 'shard'>): Promise<CheckedJob> {
  const checked = await checkJob(options);
  await openJobDir(checked.dir, options.name, options.config, checked.lock, options.resume);
  return checked;
}

/**
 * The commands a scripted/replay job plays, read from the file its config
 * names and checked against the digest recorded there (the lock holds that
 * digest, so --resume refuses a changed file). Undefined for other models.
 * Throws INVALID_CONFIG for a missing or invalid file, or a config that
 * pairs a replay file with another model (or scripted/replay with none).
 */
export async function loadJobReplay(config: Pick<EvalConfig, 'model' | 'replay'>): Promise<ReplayFile | undefined> {
  const replays = config.model === `${REPLAY_REF.provider}/${REPLAY_REF.name}`;
  if (config.replay === undefined) {
    if (replays) throw new AuthbenchError('INVALID_CONFIG', `${config.model} needs a replay file`, { field: 'replay', hint: 'authbench eval --model scripted/replay --replay FILE' });
    return undefined;
  }
  if (!replays) throw new AuthbenchError('INVALID_CONFIG', `a replay file is only played by scripted/replay, not ${config.model}`, { field: 'replay' });
  const loaded = await loadReplayFile(config.replay.path);
  if (loaded.sha256 !== config.replay.sha256) {
    throw new AuthbenchError('CHECK_FAILED', `the replay file changed since the job's config recorded it (sha256 ${loaded.sha256}, recorded ${config.replay.sha256})`, {
      file: config.replay.path,
    });
  }
  return loaded.commands;
}

export async function runJob(engine: Engine, options: JobOptions, deps: JobDeps = {}): Promise<JobOutcome> {
  const { config } = options;
  const emit = options.onEvent ?? ((): void => {});
  const { dir, bundles, plan, lock, replay, policyFile } = await checkJob(options);
  // Containers an earlier run of this job left when it was killed go first, before anything is written (on every engine).
  const engines = options.engines ?? [{ engine, slots: options.concurrency }];
  const removed = await Promise.all(engines.map(async (l) => l.engine.removeOrphans?.(jobRunId(options.name))));
  const orphans = removed.some((r) => r !== undefined)
    ? removed.reduce<OrphanRemoval>((a, r) => {
        const left = [...(a.left ?? []), ...(r?.left ?? [])];
        return { containers: a.containers + (r?.containers ?? 0), networks: a.networks + (r?.networks ?? 0), ...(left.length === 0 ? {} : { left }) };
      }, { containers: 0, networks: 0 })
    : undefined;
  // Advisory: a listing that fails stops nothing (the rollouts meet a Docker that fails on their own).
  const listed = await Promise.all(engines.map(async (l) => l.engine.listOrphans?.().catch(() => undefined)));
  const strays = listed.reduce((a, l) => ({ containers: a.containers + (l?.containers.length ?? 0), networks: a.networks + (l?.networks.length ?? 0) }), { containers: 0, networks: 0 });
  const fresh = !existsSync(dir);
  // Before the job's folder is written: a job that cannot be traced as asked runs nothing.
  const hostTracer = plan.pending.length === 0 ? undefined : await startHostTracer(config, engines.map((l) => l.engine));
  try {
    await openJobDir(dir, options.name, config, lock, options.resume || options.shard !== undefined);
  } catch (e) {
    await hostTracer?.stop();
    throw e;
  }

  const total = plan.rollouts.length;
  let done = plan.reused.size;
  if (orphans !== undefined) emit({ kind: 'orphans-removed', orphans, done, total });
  if (strays.containers + strays.networks > 0) emit({ kind: 'orphans-elsewhere', strays, done, total });
  for (const spec of plan.rollouts.filter((s) => plan.reused.has(s.id))) emit({ kind: 'skipped', rollout: spec, done, total });

  const runId = jobRunId(options.name);
  const prepared = await prepareJob(engine, {
    config,
    plan,
    bundles,
    runId,
    onBuild: (taskId, kind, on) => emit({ kind, taskId, engine: on.endpoint, done, total }),
    ...(policyFile === undefined ? {} : { policyFile }),
    ...(deps.writePolicy === undefined ? {} : { writePolicy: deps.writePolicy }),
    ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
  }).catch(async (e: unknown) => {
    // A new job that could not start leaves nothing behind, so the same --job-name can be used again
    // (unless it is a shard: other shards may already be writing into the folder).
    if (fresh && options.shard === undefined) await rm(dir, { recursive: true, force: true });
    await hostTracer?.stop();
    throw e;
  });
  // The eBPF reader could not be raised (no CAP_SYS_NICE): under CPU load the kernel ring may drop
  // records. Each command that lost any is marked truncated in its result; said once, up front.
  if (hostTracer !== undefined && hostTracer.readerNice === undefined) emit({ kind: 'tracer-priority', done, total });
  if (hostTracer !== undefined && !hostTracer.resolvesPaths) emit({ kind: 'tracer-paths', done, total });
  if (plan.pending.length > 0) {
    // One per pending rollout: rollouts of one task run side by side as much as of different ones.
    const limitsMb = plan.pending.flatMap((spec) => {
      const task = bundles.get(spec.taskId)?.task;
      return task === undefined ? [] : [taskLimits(task).storageMb];
    });
    for (const lane of engines) {
      const disk = await engineDiskFree(lane.engine);
      if (disk === undefined) continue;
      const room = diskHeadroom({ freeBytes: disk.freeBytes, concurrency: Math.min(lane.slots, plan.pending.length), limitsMb });
      if (room.short) emit({ kind: 'disk-short', disk: { root: disk.root, freeBytes: disk.freeBytes, neededBytes: room.neededBytes }, engine: lane.engine.endpoint, done, total });
    }
  }
  const execution = await executeJob(plan.pending, prepared, {
    engine,
    engines,
    ...(hostTracer === undefined ? {} : { hostTracer }),
    config,
    dir,
    jobId: runId,
    concurrency: options.concurrency,
    ...(options.cpuPinning === undefined ? {} : { cpuPinning: options.cpuPinning }),
    ...(replay === undefined ? {} : { replay }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.dockerWaitMs === undefined ? {} : { dockerWaitMs: options.dockerWaitMs }),
    ...(options.maxConsecutiveInfra === undefined ? {} : { maxConsecutiveInfra: options.maxConsecutiveInfra }),
    ...(deps.runRollout === undefined ? {} : { runRollout: deps.runRollout }),
    claims: { ...options.claims, ...(options.shard === undefined ? {} : { shard: shardLabel(options.shard) }) },
    onBusy: (spec) => emit({ kind: 'busy', rollout: spec, done, total }),
    onStart: (spec) => emit({ kind: 'rollout-start', rollout: spec, done, total }),
    onDaemonWait: (waitMs, endpoint) => emit({ kind: 'docker-wait', waitMs, engine: endpoint, done, total }),
    onDone: (spec, result) => {
      done += 1;
      emit({ kind: 'rollout-done', rollout: spec, result, done, total });
    },
  }).finally(() => hostTracer?.stop());

  // Claims are released as results land: an empty claims folder is only clutter (another shard still running keeps it).
  await rmdir(join(dir, CLAIMS_DIR)).catch(() => undefined);
  const results = plan.rollouts.flatMap((s) => {
    const r = plan.reused.get(s.id) ?? execution.elsewhere.get(s.id) ?? execution.results.get(s.id);
    return r === undefined ? [] : [r];
  });
  return {
    dir,
    results,
    planned: total,
    reused: plan.reused.size + execution.elsewhere.size,
    busy: execution.busy.length,
    interrupted: execution.interrupted,
    ...(execution.stopped === undefined ? {} : { stopped: execution.stopped }),
    ...(execution.drained.length === 0 ? {} : { drained: execution.drained }),
    ...(execution.leaked.length === 0 ? {} : { leaked: execution.leaked }),
    incomplete: results.length + execution.busy.length < total || results.some((r) => r.status === 'infra_error'),
    allInfra: everyRolloutInfra(results),
  };
}
