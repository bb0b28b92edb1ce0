/**
 * Everything a job needs from a task's stored gold, read once: the gold (and
 * the digest of its bytes, for the job's lock), the candidate snapshot static
 * scores are computed over, and the gold policy — which is both the `gold`
 * policy source and the trusted ledger containment is measured against.
 */
import { goldPolicy, type GoldFile } from '../gold/index.ts';
import { referenceFromGold, scorePolicy, type CandidateSnapshot, type PolicyScore, type ScoreInput } from '../score/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';
import { goldPaths, type GoldPaths } from './paths.ts';
import { readCandidates, readStoredGoldFile } from './store.ts';

export interface TaskBundle {
  task: Task;
  paths: GoldPaths;
  /** undefined: no gold derived yet. */
  gold: GoldFile | undefined;
  /** Of gold.json's bytes; null without one. */
  goldSha256: string | null;
  /** undefined without gold, or when gen-gold never snapshotted the image. */
  candidates: CandidateSnapshot | undefined;
  /** The enforced gold policy (S_gold plus support, directories, ephemeral and implicit entries); undefined without gold. */
  ledger: Policy | undefined;
}

export async function loadTaskBundle(task: Task, oracleTracesDir: string): Promise<TaskBundle> {
  const paths = goldPaths(oracleTracesDir, task.id);
  const stored = await readStoredGoldFile(paths);
  // Without gold nothing is scored, so the snapshot is not read.
  const candidates = stored === undefined ? undefined : await readCandidates(paths);
  return {
    task,
    paths,
    gold: stored?.gold,
    goldSha256: stored?.sha256 ?? null,
    candidates,
    ledger: stored === undefined ? undefined : goldPolicy(stored.gold),
  };
}

/** A policy's static score against the task's S_gold; null when the task has no gold or candidate snapshot. Pure. */
export function staticScore(bundle: Pick<TaskBundle, 'gold' | 'candidates'> & { task?: Pick<TaskBundle['task'], 'compose'> }, input: ScoreInput): PolicyScore | null {
  return bundle.gold === undefined || bundle.candidates === undefined
    ? null
    : scorePolicy(input, referenceFromGold(bundle.gold, bundle.task?.compose?.sidecars.map((s) => s.name)), bundle.candidates);
}
