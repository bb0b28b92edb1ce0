/**
 * Scoring inputs for a task on disk (`authbench score`): the reference (the
 * task's spec or its stored gold) and the stored candidate snapshot, built
 * from the task image on first use when the spec is the reference.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { candidatesFromImage, referenceFromGold, referenceFromSpec, sameRoots, type CandidateSnapshot, type ScoringReference } from '../score/index.ts';
import type { Task } from '../task-format/index.ts';
import { buildTaskImage, type BuildOptions } from '../taskenv/index.ts';
import { goldPaths } from './paths.ts';
import { readCandidates, requireGold, writeCandidates } from './store.ts';

export const REFERENCE_SOURCES = ['spec', 'gold'] as const;
export type ReferenceSource = (typeof REFERENCE_SOURCES)[number];

function genGoldHint(taskId: string): string {
  return `run: authbench gen-gold ${taskId}`;
}

export async function loadTaskReference(task: Task, source: ReferenceSource, oracleDir: string): Promise<ScoringReference> {
  if (source === 'spec') {
    if (task.spec === undefined) {
      throw new AuthbenchError('INVALID_SPEC', `task ${task.id} has no tests/permission_eval_spec.json`, {
        file: task.dir,
        hint: `score against the derived gold set instead: --reference gold (${genGoldHint(task.id)})`,
      });
    }
    return referenceFromSpec(task.spec);
  }
  return referenceFromGold(await requireGold(goldPaths(oracleDir, task.id)), task.compose?.sidecars.map((s) => s.name));
}

export interface TaskCandidatesOptions {
  task: Task;
  reference: ScoringReference;
  source: ReferenceSource;
  oracleDir: string;
  /** Use this image instead of building the task image. */
  image?: string;
  /** Rebuild even when a stored snapshot exists. */
  refresh?: boolean;
  /** How the task image is built (base map, build args, the build CA and proxies). */
  build?: BuildOptions;
  /** Called only when the snapshot has to be built; the docker module is loaded lazily by the caller. */
  connect: () => Promise<Engine>;
  onProgress?: (line: string) => void;
}

export interface TaskCandidates {
  candidates: CandidateSnapshot;
  file: string;
  /** `stored`: read from file; `built`: taken from the image now and written to file. */
  origin: 'stored' | 'built';
}

/**
 * The stored candidate snapshot, or a fresh one from the task image (built if
 * needed, cached by content hash) written to oracle-traces/<id>/candidates.json.gz.
 * With the gold reference the snapshot must come from gen-gold.
 */
export async function taskCandidates(options: TaskCandidatesOptions): Promise<TaskCandidates> {
  const { task, reference, source } = options;
  const paths = goldPaths(options.oracleDir, task.id);
  const file = paths.candidates;
  const stored = options.refresh === true ? undefined : await readCandidates(paths);
  if (stored !== undefined) {
    if (!sameRoots(stored.scored_roots, reference.scored_roots)) {
      throw new AuthbenchError('INVALID_ARGUMENT', `${file} was built for other scored roots than the ${source} reference of ${task.id}`, {
        file,
        hint: source === 'gold' ? genGoldHint(task.id) : 'rebuild it: add --refresh-candidates',
      });
    }
    return { candidates: stored, file, origin: 'stored' };
  }
  if (source === 'gold' && options.refresh !== true) {
    throw new AuthbenchError('INVALID_ARGUMENT', `no candidate snapshot for task ${task.id}: ${file} does not exist`, {
      file,
      hint: `${genGoldHint(task.id)} (it writes gold.json and candidates.json.gz)`,
    });
  }
  const engine = await options.connect();
  // The same build as every other step (family bases included), so the snapshot is of the image that runs.
  const image =
    options.image ?? (await buildTaskImage(engine, task, { ...options.build, ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }) })).tag;
  const candidates = await candidatesFromImage(engine, { image, scoredRoots: reference.scored_roots, taskId: task.id });
  await writeCandidates(paths, candidates);
  return { candidates, file, origin: 'built' };
}
