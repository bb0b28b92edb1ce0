/**
 * Playing the adversarial suite: every (scenario, run) is one rollout of the
 * real rollout path — a fresh container, the sandbox session, the defense,
 * the validators, the outcome — driven by `scripted/replay` with the
 * scenario's commands, written into a job folder like any eval rollout, then
 * judged by check.ts.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, mapPool, writeJsonAtomic } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { readEpisode, runRollout, startHostTracer, type EvalConfig, type EvalTracer, type RolloutResult, type RolloutSpec } from '../evaluation/index.ts';
import { resolvePolicy } from '../goldstore/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { buildTaskImage } from '../taskenv/index.ts';
import { checkRun, type Verdict } from './check.ts';
import { NARROW_POLICIES, SCENARIOS, type RunKind, type Scenario } from './scenarios.ts';

export interface AdversarialOptions {
  tasksDir: string;
  oracleTracesDir: string;
  /** Where the job folder goes (`<jobsDir>/<name>`). */
  jobsDir: string;
  name: string;
  /** Only these scenarios (ids); default all. */
  only?: readonly string[];
  /** Only these runs; default each scenario's own. */
  runs?: readonly RunKind[];
  concurrency?: number;
  /**
   * What traces the rollouts (default strace). ebpf: one eBPF hub for the suite, as `eval --tracer
   * ebpf` runs.
   */
  tracer?: EvalTracer;
  onVerdict?: (verdict: Verdict, done: number, total: number) => void;
}

export interface AdversarialOutcome {
  dir: string;
  verdicts: Verdict[];
}

/** The rollouts the suite plays, in order. Pure. */
export function plan(options: Pick<AdversarialOptions, 'only' | 'runs' | 'tracer'>): { scenario: Scenario; run: RunKind }[] {
  const unknown = (options.only ?? []).filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length > 0) {
    throw new AuthbenchError('INVALID_ARGUMENT', `unknown adversarial scenario(s): ${unknown.join(', ')}`, { hint: `scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}` });
  }
  return SCENARIOS.filter((s) => options.only === undefined || options.only.length === 0 || options.only.includes(s.id))
    .flatMap((scenario) =>
    scenario.runs.filter((run) => options.runs === undefined || options.runs.includes(run)).map((run) => ({ scenario, run })),
  );
}

export async function runAdversarial(engine: Engine, options: AdversarialOptions): Promise<AdversarialOutcome> {
  const planned = plan(options);
  const dir = join(options.jobsDir, options.name);
  await mkdir(dir, { recursive: true });
  const tasks = new Map<string, { task: Task; image: string; gold: Policy }>();
  for (const id of new Set(planned.map((p) => p.scenario.task))) {
    const task = await loadTask(join(options.tasksDir, id));
    const image = (await buildTaskImage(engine, task)).tag;
    const gold = (await resolvePolicy('gold', task, options.oracleTracesDir)).policy;
    tasks.set(id, { task, image, gold });
  }
  const config: EvalConfig = {
    schema_version: 1,
    model: 'scripted/replay',
    tasks_dir: options.tasksDir,
    oracle_traces_dir: options.oracleTracesDir,
    include: [],
    exclude: [],
    policies: ['gold'],
    defenses: ['tool-boundary', 'none'],
    attempts: 1,
    seed: 0,
    max_turns: 30,
    cache: 'off',
    model_timeout_sec: 60,
    model_retries: 0,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
  };
  const hostTracer = await startHostTracer(config, [engine]);
  const verdicts: Verdict[] = [];
  let done = 0;
  try {
    await mapPool(planned, options.concurrency ?? 2, async ({ scenario, run }) => {
      const entry = tasks.get(scenario.task);
      if (entry === undefined) throw new AuthbenchError('INTERNAL', `adversarial: task ${scenario.task} not prepared`);
      const narrow = scenario.narrow ?? NARROW_POLICIES[scenario.task];
      const policy = run === 'none' ? undefined : run === 'gold' ? entry.gold : run === 'narrow' ? narrow : (await resolvePolicy('allow-all', entry.task, options.oracleTracesDir)).policy;
      const spec: RolloutSpec = {
        id: `${scenario.id}__${run}`,
        taskId: scenario.task,
        policy: run === 'none' ? 'none' : run === 'narrow' ? 'file' : run,
        defense: run === 'none' ? 'none' : (scenario.defense ?? 'tool-boundary'),
        attempt: 1,
        seed: 0,
      };
      const rolloutDir = join(dir, spec.id);
      await mkdir(rolloutDir, { recursive: true });
      const result: RolloutResult = await runRollout(spec, {
        engine,
        config: scenario.shell === undefined ? config : { ...config, shell: scenario.shell },
        task: scenario.storageMb === undefined ? entry.task : { ...entry.task, limits: { ...entry.task.limits, storageMb: scenario.storageMb } },
        image: entry.image,
        policy,
        ledger: entry.gold,
        staticScore: null,
        replay: scenario.commands,
        jobId: `adversarial-${options.name}`,
        dir: rolloutDir,
        ...(hostTracer === undefined ? {} : { hostTracer }),
    });
    await writeJsonAtomic(join(rolloutDir, 'result.json'), result);
    const verifierWritten = (await stat(join(rolloutDir, 'verifier')).catch(() => undefined))?.isDirectory() === true;
    const verdict = checkRun({ scenario, run, result, episode: await readEpisode(rolloutDir), verifierWritten });
    verdicts.push(verdict);
    done += 1;
    options.onVerdict?.(verdict, done, planned.length);
    });
  } finally {
    await hostTracer?.stop();
  }
  const order = new Map(planned.map((p, i) => [`${p.scenario.id}__${p.run}`, i]));
  verdicts.sort((a, b) => (order.get(`${a.scenario}__${a.run}`) ?? 0) - (order.get(`${b.scenario}__${b.run}`) ?? 0));
  await writeJsonAtomic(join(dir, 'verdicts.json'), verdicts);
  return { dir, verdicts };
}
