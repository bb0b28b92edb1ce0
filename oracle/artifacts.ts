/**
 * The files gen-gold keeps per task under oracle-traces/<id>/:
 *   gold.json        S_gold and everything derived with it (deterministic bytes)
 *   candidates.json.gz  the candidate set for static scoring, snapshotted once from the image
 *   trace.strace.gz  the first oracle run's raw strace output
 *   overrides.json   annotators' reviewed changes (never written by authbench)
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { AuthbenchError, formatProblem, writeFileAtomic } from '../core/index.ts';
import { parseGold, parseOverrides, serializeGold, type GoldFile, type Overrides } from '../gold/index.ts';
import { buildCandidateSnapshot, serializeCandidateSnapshot } from '../score/index.ts';
import type { FsSnapshot } from '../sandbox/paths/index.ts';

export interface GoldPaths {
  dir: string;
  gold: string;
  candidates: string;
  trace: string;
  overrides: string;
}

export function goldPaths(oracleTracesDir: string, taskId: string): GoldPaths {
  const dir = join(oracleTracesDir, taskId);
  return {
    dir,
    gold: join(dir, 'gold.json'),
    candidates: join(dir, 'candidates.json.gz'),
    trace: join(dir, 'trace.strace.gz'),
    overrides: join(dir, 'overrides.json'),
  };
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The stored gold, or undefined when there is none; an unreadable one is an error naming the file. */
export async function readStoredGold(paths: GoldPaths): Promise<GoldFile | undefined> {
  const text = await readIfExists(paths.gold);
  if (text === undefined) return undefined;
  const check = parseGold(text, paths.gold);
  if (check.gold === undefined) {
    throw new AuthbenchError('INVALID_CONFIG', 'stored gold does not parse', { file: paths.gold, details: check.problems.map(formatProblem) });
  }
  return check.gold;
}

export async function readOverrides(paths: GoldPaths): Promise<Overrides | undefined> {
  const text = await readIfExists(paths.overrides);
  if (text === undefined) return undefined;
  const check = parseOverrides(text, paths.overrides);
  if (check.overrides === undefined) {
    throw new AuthbenchError('INVALID_CONFIG', 'overrides do not parse', { file: paths.overrides, details: check.problems.map(formatProblem) });
  }
  return check.overrides;
}

/** Write gold, candidates and the compressed trace; each file atomically. */
export async function writeGoldArtifacts(paths: GoldPaths, gold: GoldFile, snapshot: FsSnapshot, rawTrace: string): Promise<void> {
  const candidates = buildCandidateSnapshot(snapshot, gold.scored_roots);
  await writeFileAtomic(paths.candidates, serializeCandidateSnapshot(candidates));
  await rm(join(paths.dir, 'candidates.json'), { force: true }); // the uncompressed form of earlier versions
  // gzip with no name and mtime 0, so the same trace gives the same bytes.
  await writeFileAtomic(paths.trace, gzipSync(rawTrace, { level: 9 }));
  await writeFileAtomic(paths.gold, serializeGold(gold));
}
