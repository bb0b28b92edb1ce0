/**
 * Scoring inputs for a task on disk: the reference (the task's spec or the
 * derived gold set) and the stored candidate snapshot, built from the task
 * image on first use.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, formatProblem, writeFileAtomic } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { parseGold } from '../gold/index.ts';
import type { Task } from '../task-format/index.ts';
import { buildTaskImage } from '../taskenv/index.ts';
import { loadCandidateSnapshot, sameRoots, serializeCandidateSnapshot } from './candidates.ts';
import type { CandidateSnapshot } from './candidates.ts';
import { candidatesFromImage } from './from-image.ts';
import { referenceFromGold, referenceFromSpec } from './reference.ts';
import type { ScoringReference } from './reference.ts';

export const REFERENCE_SOURCES = ['spec', 'gold'] as const;
export type ReferenceSource = (typeof REFERENCE_SOURCES)[number];

/** Where a task's derived files live under the oracle-traces folder. */
export function oracleFiles(oracleDir: string, taskId: string): { gold: string; candidates: string } {
  return { gold: join(oracleDir, taskId, 'gold.json'), candidates: join(oracleDir, taskId, 'candidates.json.gz') };
}

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
  const file = oracleFiles(oracleDir, task.id).gold;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new AuthbenchError('INVALID_ARGUMENT', `no gold set for task ${task.id}: ${file} does not exist`, { file, hint: genGoldHint(task.id) });
    }
    throw new AuthbenchError('TRACE_UNREADABLE', `cannot read ${file}: ${(e as Error).message}`, { file, cause: e });
  }
  const { gold, problems } = parseGold(text, file);
  if (gold === undefined) {
    throw new AuthbenchError('TRACE_UNREADABLE', `${file} is not a valid gold set`, {
      file,
      details: problems.map(formatProblem),
      hint: genGoldHint(task.id),
    });
  }
  if (gold.task_id !== task.id) {
    throw new AuthbenchError('TRACE_UNREADABLE', `${file} is the gold set of task ${gold.task_id}, not ${task.id}`, { file });
  }
  return referenceFromGold(gold);
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
 * needed, cached by content hash) written to oracle-traces/<id>/candidates.json.
 * With the gold reference the snapshot must come from gen-gold.
 */
export async function taskCandidates(options: TaskCandidatesOptions): Promise<TaskCandidates> {
  const { task, reference, source } = options;
  const file = oracleFiles(options.oracleDir, task.id).candidates;
  const stored = options.refresh === true ? undefined : await loadCandidateSnapshot(file);
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
      hint: `${genGoldHint(task.id)} (it writes gold.json and candidates.json)`,
    });
  }
  const engine = await options.connect();
  const image = options.image ?? (await buildImage(engine, task, options.onProgress));
  const candidates = await candidatesFromImage(engine, { image, scoredRoots: reference.scored_roots, taskId: task.id });
  await writeFileAtomic(file, serializeCandidateSnapshot(candidates));
  return { candidates, file, origin: 'built' };
}

async function buildImage(engine: Engine, task: Task, onProgress?: (line: string) => void): Promise<string> {
  // The same build as every other step (family bases included), so the snapshot is of the image that runs.
  const result = await buildTaskImage(engine, task, onProgress === undefined ? {} : { onProgress });
  return result.tag;
}
