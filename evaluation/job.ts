/**
 * An eval job on disk: jobs/<name>/config.json, lock.json (resolved inputs and
 * their digests; no secrets), and one folder per rollout holding result.json
 * (written last, atomically), trace.jsonl.gz, episode.json and the policy.
 * A rollout is complete when its result.json parses with status `completed`;
 * `--resume` runs exactly the others, after checking the lock is unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { minimatch } from 'minimatch';
import { AUTHBENCH_VERSION, AuthbenchError, compareStrings, mapPool, stableStringify, writeJsonAtomic } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { REPLAY_REF, loadReplayFile, type ReplayFile } from '../agent/index.ts';
import { goldPaths, readStoredGold, resolvePolicy } from '../oracle/index.ts';
import { goldPolicy } from '../gold/index.ts';
import { createPolicyWriter, generatePolicy } from '../policygen/index.ts';
import { loadCandidateSnapshot, referenceFromGold, scorePolicy, type PolicyScore, type ScoreInput } from '../score/index.ts';
import { denyAllPolicy, type Policy } from '../sandbox/policy/index.ts';
import { discoverTasks, loadTask, type Task } from '../task-format/index.ts';
import { buildTaskImage } from '../taskenv/index.ts';
import { planRollouts, type EvalConfig, type RolloutSpec } from './config.ts';
import { RolloutResultSchema, type RolloutResult } from './result.ts';
import { runRollout, type GeneratedRecord } from './rollout.ts';

export interface JobEvent {
  kind: 'building' | 'built' | 'rollout-start' | 'rollout-done' | 'skipped';
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
  onEvent?: (e: JobEvent) => void;
  /** Aborting stops new rollouts from starting; running ones finish and are kept. */
  signal?: AbortSignal;
}

export interface JobOutcome {
  dir: string;
  results: RolloutResult[];
  planned: number;
  /** Rollouts already complete before this run (resume). */
  reused: number;
  interrupted: boolean;
}

async function hashDir(dir: string): Promise<string> {
  const h = createHash('sha256');
  const walk = async (d: string): Promise<void> => {
    const entries = (await readdir(d, { withFileTypes: true })).sort((a, b) => compareStrings(a.name, b.name));
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) h.update(`${relative(dir, p)}\0`).update(await readFile(p)).update('\0');
    }
  };
  await walk(dir);
  return h.digest('hex');
}

export async function selectTasks(config: Pick<EvalConfig, 'tasks_dir' | 'include' | 'exclude'>): Promise<Task[]> {
  const tasks = await Promise.all((await discoverTasks(config.tasks_dir)).map((d) => loadTask(d)));
  return tasks.filter(
    (t) => (config.include.length === 0 || config.include.some((g) => minimatch(t.id, g))) && !config.exclude.some((g) => minimatch(t.id, g)),
  );
}

/** The config as written to disk: credentials in a base URL (`https://user:key@host`) are redacted. */
export function redactConfig(config: EvalConfig): EvalConfig {
  if (config.base_url === undefined) return config;
  try {
    const url = new URL(config.base_url);
    if (url.username === '' && url.password === '') return config;
    url.username = 'REDACTED';
    url.password = '';
    return { ...config, base_url: url.toString() };
  } catch {
    return config;
  }
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

/** What the job's results depend on, besides the code: the config (with the replay file's digest) and every task's content and gold. */
async function computeLock(config: EvalConfig, tasks: readonly Task[]): Promise<object> {
  const entries: Record<string, { content_sha256: string; gold_sha256: string | null }> = {};
  for (const t of tasks) {
    const gold = await readFile(goldPaths(config.oracle_traces_dir, t.id).gold).catch(() => undefined);
    entries[t.id] = { content_sha256: await hashDir(t.dir), gold_sha256: gold === undefined ? null : createHash('sha256').update(gold).digest('hex') };
  }
  return { schema_version: 1, authbench_version: AUTHBENCH_VERSION, config, tasks: entries };
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

async function completedResult(dir: string): Promise<RolloutResult | undefined> {
  const parsed = RolloutResultSchema.safeParse(await readJson(join(dir, 'result.json')));
  return parsed.success && parsed.data.status === 'completed' ? parsed.data : undefined;
}

export async function runJob(engine: Engine, options: JobOptions): Promise<JobOutcome> {
  const { config } = options;
  const dir = join(options.jobsDir, options.name);
  const emit = options.onEvent ?? ((): void => {});
  // Before anything is built or run: a bad replay file is bad input, not a failed rollout.
  const replay = await loadJobReplay(config);
  const tasks = await selectTasks(config);
  if (tasks.length === 0) throw new AuthbenchError('TASK_NOT_FOUND', `no tasks selected under ${config.tasks_dir}`, { file: config.tasks_dir });

  const lock = await computeLock(redactConfig(config), tasks);
  const existingLock = await readJson(join(dir, 'lock.json'));
  if (existingLock !== undefined && !options.resume) {
    throw new AuthbenchError('INVALID_ARGUMENT', `job ${options.name} exists`, { file: dir, hint: 'pass --resume to continue it, or choose another --job-name' });
  }
  if (existingLock !== undefined && stableStringify(existingLock) !== stableStringify(lock)) {
    const lockedReplay = (existingLock as { config?: { replay?: { path?: unknown; sha256?: unknown } } }).config?.replay;
    const what =
      config.replay !== undefined && lockedReplay?.path === config.replay.path && lockedReplay.sha256 !== config.replay.sha256
        ? `the replay file ${config.replay.path}`
        : 'config, a task, or a gold set';
    throw new AuthbenchError('CHECK_FAILED', `cannot resume ${options.name}: its inputs changed since it started (${what})`, {
      file: join(dir, 'lock.json'),
      hint: 'start a new job (another --job-name) to evaluate the changed inputs',
    });
  }
  await mkdir(dir, { recursive: true });
  await writeJsonAtomic(join(dir, 'config.json'), redactConfig(config));
  await writeJsonAtomic(join(dir, 'lock.json'), lock);

  const plan = planRollouts(tasks.map((t) => t.id), config);
  const results = new Map<string, RolloutResult>();
  for (const spec of plan) {
    const done = await completedResult(join(dir, spec.id));
    if (done !== undefined) results.set(spec.id, done);
  }
  const reused = results.size;
  const pending = plan.filter((s) => !results.has(s.id));
  let finished = reused;
  for (const spec of plan.filter((s) => results.has(s.id))) emit({ kind: 'skipped', rollout: spec, done: finished, total: plan.length });

  // Policies and their static scores, once per (task, source).
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const policies = new Map<string, { policy: Policy; score: PolicyScore | null }>();
  for (const spec of pending) {
    const key = `${spec.taskId}\u0000${spec.policy}`;
    const task = byId.get(spec.taskId);
    if (spec.policy === 'none' || spec.policy === 'generated' || policies.has(key) || task === undefined) continue;
    const { policy } = await resolvePolicy(spec.policy, task, config.oracle_traces_dir);
    policies.set(key, { policy, score: await staticScore(config, task, policy) });
  }
  // The ledger containment is measured against: the task's gold policy, whatever policy the rollout ran under.
  const ledgers = new Map<string, Policy | undefined>();
  for (const id of new Set(pending.map((s) => s.taskId))) {
    const task = byId.get(id);
    if (task === undefined) continue;
    const gold = await readStoredGold(goldPaths(config.oracle_traces_dir, id));
    ledgers.set(id, gold === undefined ? undefined : goldPolicy(gold));
  }
  // Generated policies need the built image; one generation per (task, attempt), shared by its defenses.
  const generations = new Map<string, Promise<GeneratedEntry | AuthbenchError>>();
  const invocation = new Date().toISOString();
  const generated = (spec: RolloutSpec, task: Task, image: string): Promise<GeneratedEntry | AuthbenchError> => {
    const key = `${spec.taskId}\u0000${spec.attempt}`;
    const known = generations.get(key);
    if (known !== undefined) return known;
    // The invocation's start in the id: a resumed job that generates again spent again.
    const id = `${spec.taskId}#a${spec.attempt}@${invocation}`;
    const made = generateFor(engine, config, task, image, spec.seed, `job-${options.name}`, id);
    generations.set(key, made);
    return made;
  };

  // Builds one at a time (one daemon); a failed build is that task's rollouts' infrastructure error.
  const images = new Map<string, string | AuthbenchError>();
  for (const id of new Set(pending.map((s) => s.taskId))) {
    const task = byId.get(id);
    if (task === undefined) continue;
    emit({ kind: 'building', taskId: id, done: finished, total: plan.length });
    try {
      images.set(id, (await buildTaskImage(engine, task)).tag);
    } catch (e) {
      if (!(e instanceof AuthbenchError) || !e.isInfrastructure) throw e;
      images.set(id, e);
    }
    emit({ kind: 'built', taskId: id, done: finished, total: plan.length });
  }

  let interrupted = false;
  await mapPool(pending, options.concurrency, async (spec) => {
    if (options.signal?.aborted === true) {
      interrupted = true;
      return;
    }
    const task = byId.get(spec.taskId);
    const image = images.get(spec.taskId);
    if (task === undefined || image === undefined) return;
    const rolloutDir = join(dir, spec.id);
    await mkdir(rolloutDir, { recursive: true });
    emit({ kind: 'rollout-start', rollout: spec, done: finished, total: plan.length });
    const entry: { policy: Policy; score: PolicyScore | null; generated?: GeneratedRecord } | AuthbenchError | undefined =
      spec.policy === 'generated' && typeof image === 'string' ? await generated(spec, task, image) : policies.get(`${spec.taskId}\u0000${spec.policy}`);
    const result =
      typeof image !== 'string'
        ? buildFailure(spec, task, config, image)
        : entry instanceof AuthbenchError
          ? buildFailure(spec, task, config, entry, 'policy')
          : await runRollout(spec, {
              engine,
              config,
              task,
              image,
              policy: entry?.policy,
              ledger: ledgers.get(spec.taskId),
              staticScore: entry?.score ?? null,
              ...(entry?.generated === undefined ? {} : { generated: entry.generated }),
              ...(replay === undefined ? {} : { replay }),
              jobId: `job-${options.name}`,
              dir: rolloutDir,
            });
    await writeJsonAtomic(join(rolloutDir, 'result.json'), result);
    results.set(spec.id, result);
    finished += 1;
    emit({ kind: 'rollout-done', rollout: spec, result, done: finished, total: plan.length });
  });

  const ordered = plan.flatMap((s) => {
    const r = results.get(s.id);
    return r === undefined ? [] : [r];
  });
  return { dir, results: ordered, planned: plan.length, reused, interrupted };
}

interface GeneratedEntry {
  policy: Policy;
  score: PolicyScore | null;
  generated: GeneratedRecord;
}

async function staticScore(config: EvalConfig, task: Task, input: ScoreInput): Promise<PolicyScore | null> {
  const paths = goldPaths(config.oracle_traces_dir, task.id);
  const gold = await readStoredGold(paths);
  const candidates = await loadCandidateSnapshot(paths.candidates);
  return gold === undefined || candidates === undefined ? null : scorePolicy(input, referenceFromGold(gold), candidates);
}

/**
 * A model-written policy for one (task, attempt), with the eval's model. An
 * invalid answer scores 0 and the execution runs under deny-all (nothing is
 * granted that the writer did not validly grant); only infrastructure
 * failures come back as errors, to become that rollout's infra_error.
 */
async function generateFor(engine: Engine, config: EvalConfig, task: Task, image: string, seed: number, runId: string, id: string): Promise<GeneratedEntry | AuthbenchError> {
  try {
    const model = await createPolicyWriter(config.model, task, {
      oracleTracesDir: config.oracle_traces_dir,
      client: {
        ...(config.base_url === undefined ? {} : { baseUrl: config.base_url }),
        cache: { mode: config.cache },
        timeoutMs: config.model_timeout_sec * 1000,
        retry: { maxRetries: config.model_retries },
      },
    });
    const g = await generatePolicy({ engine, task, image, model, strategy: config.policy_strategy ?? 'direct', maxTurns: config.max_turns, request: { seed }, runId });
    const input = { valid: g.parse.valid, problems: g.parse.problems, ...(g.policy === undefined ? {} : { policy: g.policy }) };
    return {
      policy: g.policy ?? denyAllPolicy(),
      score: await staticScore(config, task, input),
      generated: { answers: g.answers, status: g.parse.status, valid: g.parse.valid, usage: { id, ...g.usage } },
    };
  } catch (e) {
    if (e instanceof AuthbenchError && e.isInfrastructure) return e;
    throw e;
  }
}

function buildFailure(spec: RolloutSpec, task: Task, config: EvalConfig, error: AuthbenchError, source = 'build'): RolloutResult {
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
    infra_error: { source, code: error.code, message: error.message },
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
