/**
 * One candidate wording replayed as an eval job: placed in each chosen
 * cluster's security scenario (everything else as generated), the scenarios
 * written as `atk-` task folders, one job over them × defenses × attempts,
 * and every rollout read back through the search's funnel. Transfer and the
 * staged qualification both replay this way; they differ in which clusters,
 * policies, defenses and seeds.
 */
import { join } from 'node:path';
import { AuthbenchError } from '../core/index.ts';
import type { BuildHostAccess, Engine } from '../docker/index.ts';
import { configFromFlags, readEpisode, runJob, type EvalConfig, type RolloutResult } from '../evaluation/index.ts';
import { renderScenario } from '../suite/index.ts';
import { funnelStage } from './funnel.ts';
import type { Cluster, FunnelStage } from './schema.ts';
import { placeWording } from './scenarios.ts';
import { TASK_PREFIX, writeFamilyBases, writeTree } from './target.ts';

export interface Placement {
  /** What the caller groups rollouts by (a transfer set, a qualification stage). */
  label: string;
  cluster: Cluster;
}

export interface ReplayJob {
  engine: Engine;
  /** Task folders go to `<dir>/tasks/<name>/`, the job to `<dir>/jobs/<name>/`. */
  dir: string;
  name: string;
  model: string;
  template: string;
  placements: readonly Placement[];
  /** The seed the scenarios are generated with (the search's). */
  scenarioSeed: number;
  /** The job's first rollout seed, and attempts per task × defense. */
  evalSeed: number;
  attempts: number;
  policies: readonly EvalConfig['policies'][number][];
  defenses: readonly string[];
  maxTurns: number;
  oracleTracesDir: string;
  concurrency?: number;
  hostAccess?: BuildHostAccess;
  /** Keep the candidate's task images (default: removed after the job; an `atk-` image is never reused). */
  keepImages?: boolean;
  signal?: AbortSignal;
}

export interface ReplayedRollout {
  label: string;
  cluster: string;
  family: string;
  scenario: string;
  defense: string;
  seed: number;
  /** null: infrastructure error. */
  stage: FunnelStage | null;
  off_target: boolean;
  utility_success: boolean | null;
  /** Relative to `dir`. */
  rollout: string;
}

export async function replayCandidate(job: ReplayJob): Promise<{ rollouts: ReplayedRollout[]; incomplete: boolean }> {
  const tasksDir = join(job.dir, 'tasks', job.name);
  const byTask = new Map<string, { placement: Placement; command: string; scenario: string }>();
  for (const p of job.placements) {
    const placed = placeWording(p.cluster, job.scenarioSeed, job.template);
    const taskId = `${TASK_PREFIX}${placed.scenario.id}`;
    // One task per scenario: the first placement names it (a cluster in two groups is one task).
    if (byTask.has(taskId)) continue;
    await writeTree(join(tasksDir, taskId), renderScenario(placed.scenario));
    byTask.set(taskId, { placement: p, command: placed.attackCommand, scenario: placed.scenario.id });
  }
  await writeFamilyBases(tasksDir, job.placements.map((p) => p.cluster.family));
  const config = configFromFlags({
    model: job.model,
    tasks_dir: tasksDir,
    oracle_traces_dir: job.oracleTracesDir,
    include: [...byTask.keys()],
    policies: [...job.policies],
    defenses: [...job.defenses],
    attempts: job.attempts,
    seed: job.evalSeed,
    max_turns: job.maxTurns,
    cache: 'off',
  });
  const outcome = await runJob(job.engine, {
    config,
    jobsDir: join(job.dir, 'jobs'),
    name: job.name,
    resume: false,
    concurrency: job.concurrency ?? 1,
    ...(job.hostAccess === undefined ? {} : { hostAccess: job.hostAccess }),
    ...(job.signal === undefined ? {} : { signal: job.signal }),
  });
  const rollouts: ReplayedRollout[] = [];
  for (const result of outcome.results) rollouts.push(await readBack(result, outcome.dir, job.name, byTask));
  if (job.keepImages !== true) for (const image of new Set(outcome.results.map((r) => r.image))) if (image !== null) await job.engine.removeImage?.(image);
  return { rollouts, incomplete: outcome.incomplete };
}

async function readBack(
  result: RolloutResult,
  jobDir: string,
  jobName: string,
  byTask: ReadonlyMap<string, { placement: Placement; command: string; scenario: string }>,
): Promise<ReplayedRollout> {
  const task = byTask.get(result.task_id);
  if (task === undefined) throw new AuthbenchError('INTERNAL', `replay job ${jobName}: rollout of an unknown task ${result.task_id}`);
  const episode = await readEpisode(join(jobDir, result.rollout_id));
  const { stage, offTarget } = funnelStage(result, episode?.steps.flatMap((s) => s.proposals) ?? [], task.command);
  return {
    label: task.placement.label,
    cluster: task.placement.cluster.cluster,
    family: task.placement.cluster.family,
    scenario: task.scenario,
    defense: result.defense.name,
    seed: result.seed,
    stage,
    off_target: offTarget,
    utility_success: result.utility_success,
    rollout: join('jobs', jobName, result.rollout_id),
  };
}
