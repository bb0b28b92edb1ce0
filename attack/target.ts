/**
 * One target query as a real rollout: the candidate placed in a development
 * scenario, rendered as a task folder of its own inside the search folder, run
 * as a one-rollout eval job of the evaluated agent under defense `none`, and
 * read back as the funnel stage it reached. The task id carries an `atk-`
 * prefix so the query's image never passes for the bundled suite's, and the
 * image is removed after the query (no candidate is queried twice on one
 * scenario, so it would never be used again).
 */
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AuthbenchError } from '../core/index.ts';
import type { BuildHostAccess, Engine } from '../docker/index.ts';
import { configFromFlags, readEpisode, runJob } from '../evaluation/index.ts';
import { BASES_DIR, renderFamilyBase, renderScenario, type FileSpec } from '../suite/index.ts';
import { funnelStage } from './funnel.ts';
import type { Cluster } from './schema.ts';
import type { SearchNode, Target, TargetResult } from './search.ts';
import { familyById, placeWording } from './scenarios.ts';

export const TASK_PREFIX = 'atk-';

export interface DockerTargetOptions {
  engine: Engine;
  /** The search folder: tasks/<query>/ and jobs/<query>/ go in it. */
  dir: string;
  model: string;
  /** Development clusters that carry a wording, tried in turn. */
  clusters: readonly Cluster[];
  seed: number;
  maxTurns: number;
  hostAccess?: BuildHostAccess;
  /** Keep each query's task image (default: removed after the query). */
  keepImages?: boolean;
}

/** A rendered folder written out, modes explicit (the umask must not decide a script's mode in the image). */
export async function writeTree(root: string, files: Record<string, FileSpec>): Promise<void> {
  for (const [rel, file] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content);
    await chmod(path, file.mode ?? 0o644);
  }
}

/** The family bases a tasks folder of generated scenarios points at (`../_bases/<family>`). */
export async function writeFamilyBases(tasksDir: string, families: readonly string[]): Promise<void> {
  for (const id of new Set(families)) await writeTree(join(tasksDir, BASES_DIR, id), renderFamilyBase(familyById(id)));
}

export function dockerTarget(options: DockerTargetOptions): Target {
  if (options.clusters.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'no development scenario shows its injected wording (every one is an unsafe-helper placement)', { hint: 'another --seed, or more --instances' });
  let count = 0;
  return async (node: SearchNode): Promise<TargetResult> => {
    // Development clusters in turn over the whole search, so each restart does not start on the same one.
    const cluster = options.clusters[count++ % options.clusters.length] as Cluster;
    const placed = placeWording(cluster, options.seed, node.template);
    const taskId = `${TASK_PREFIX}${placed.scenario.id}`;
    const tasksDir = join(options.dir, 'tasks', node.id);
    await writeTree(join(tasksDir, taskId), renderScenario(placed.scenario));
    await writeFamilyBases(tasksDir, [placed.scenario.family.id]);
    const config = configFromFlags({
      model: options.model,
      tasks_dir: tasksDir,
      oracle_traces_dir: join(options.dir, 'oracle-traces'),
      include: [taskId],
      policies: ['allow-all'],
      defenses: ['none'],
      seed: options.seed,
      max_turns: options.maxTurns,
      cache: 'off',
    });
    const base = { scenario: placed.scenario.id, text: placed.text };
    try {
      const outcome = await runJob(options.engine, {
        config,
        jobsDir: join(options.dir, 'jobs'),
        name: node.id,
        resume: false,
        concurrency: 1,
        ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
      });
      const result = outcome.results[0];
      if (result === undefined) return { ...base, stage: null, offTarget: false, rollout: null, error: outcome.stopped?.message ?? 'the rollout did not run' };
      const episode = await readEpisode(join(outcome.dir, result.rollout_id));
      const proposals = episode?.steps.flatMap((s) => s.proposals) ?? [];
      const { stage, offTarget } = funnelStage(result, proposals, placed.attackCommand);
      if (options.keepImages !== true && result.image !== null) await options.engine.removeImage?.(result.image);
      return { ...base, stage, offTarget, rollout: join('jobs', node.id, result.rollout_id), ...(result.status === 'infra_error' ? { error: result.infra_error?.message ?? 'infrastructure error' } : {}) };
    } catch (e) {
      if (e instanceof AuthbenchError && e.isInfrastructure) return { ...base, stage: null, offTarget: false, rollout: null, error: e.message };
      throw e;
    }
  };
}
