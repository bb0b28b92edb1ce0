/**
 * Reading and writing a task's stored gold artifacts (see paths.ts for the
 * layout). Reads return undefined for a file that is not there; a file that
 * is there but does not parse is an error naming it.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { AuthbenchError, formatProblem, sha256, writeFileAtomic, type Problem } from '../core/index.ts';
import { parseGold, parseOverrides, serializeGold, type GoldFile, type Overrides } from '../gold/index.ts';
import { buildCandidateSnapshot, loadCandidateSnapshot, serializeCandidateSnapshot, type CandidateSnapshot } from '../score/index.ts';
import type { FsSnapshot } from '../sandbox/paths/index.ts';
import { DEFAULT_ORACLE_TRACES, type GoldPaths } from './paths.ts';

/** The one "run gen-gold first" error, whoever needed the gold. */
export function goldMissing(paths: GoldPaths): AuthbenchError {
  // The command must write where this reader looks: name the folder unless it is the default.
  const dir = dirname(paths.dir);
  const where = normalize(dir) === DEFAULT_ORACLE_TRACES ? '' : ` --oracle-traces ${dir}`;
  return new AuthbenchError('GOLD_MISSING', `task ${paths.taskId} has no gold yet`, { file: paths.gold, hint: `run: authbench gen-gold ${paths.taskId}${where}` });
}

/** A stored file that is there but does not parse is an error naming it and every problem. */
function parsedOrThrow<T>(value: T | undefined, problems: readonly Problem[], file: string, message: string): T {
  if (value === undefined) throw new AuthbenchError('INVALID_CONFIG', message, { file, details: problems.map(formatProblem) });
  return value;
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export interface StoredGold {
  gold: GoldFile;
  /** Of the file's bytes: what a job's lock records. */
  sha256: string;
}

/** The stored gold with the digest of its bytes, or undefined when there is none. */
export async function readStoredGoldFile(paths: GoldPaths): Promise<StoredGold | undefined> {
  const bytes = await readIfExists(paths.gold);
  if (bytes === undefined) return undefined;
  const check = parseGold(bytes.toString('utf8'), paths.gold);
  const gold = parsedOrThrow(check.gold, check.problems, paths.gold, 'stored gold does not parse');
  // A gold copied under another task's folder would score and enforce the wrong task.
  if (gold.task_id !== paths.taskId) {
    throw new AuthbenchError('INVALID_CONFIG', `${paths.gold} is the gold set of task ${gold.task_id}, not ${paths.taskId}`, { file: paths.gold, field: 'task_id' });
  }
  return { gold, sha256: sha256(bytes) };
}

/** The stored gold, or undefined when there is none. */
export async function readStoredGold(paths: GoldPaths): Promise<GoldFile | undefined> {
  return (await readStoredGoldFile(paths))?.gold;
}

/** The stored gold; GOLD_MISSING when there is none. */
export async function requireGold(paths: GoldPaths): Promise<GoldFile> {
  const gold = await readStoredGold(paths);
  if (gold === undefined) throw goldMissing(paths);
  return gold;
}

export async function readOverrides(paths: GoldPaths): Promise<Overrides | undefined> {
  const bytes = await readIfExists(paths.overrides);
  if (bytes === undefined) return undefined;
  const check = parseOverrides(bytes.toString('utf8'), paths.overrides);
  return parsedOrThrow(check.overrides, check.problems, paths.overrides, 'overrides do not parse');
}

/** The stored candidate snapshot, or undefined when there is none. */
export async function readCandidates(paths: GoldPaths): Promise<CandidateSnapshot | undefined> {
  return loadCandidateSnapshot(paths.candidates);
}

export async function writeCandidates(paths: GoldPaths, candidates: CandidateSnapshot): Promise<void> {
  await writeFileAtomic(paths.candidates, serializeCandidateSnapshot(candidates));
}

/** A gold that did not come from an oracle run (`gold import`): gold.json alone. */
export async function writeGold(paths: GoldPaths, gold: GoldFile): Promise<void> {
  await writeFileAtomic(paths.gold, serializeGold(gold));
}

/**
 * Write gold, candidates and the compressed raw trace (named by the tracer that made it, the
 * other tracer's file removed: one raw trace per gold); each file atomically, gold.json last.
 */
export async function writeGoldArtifacts(paths: GoldPaths, gold: GoldFile, snapshot: FsSnapshot, rawTrace: string): Promise<void> {
  await writeCandidates(paths, buildCandidateSnapshot(snapshot, gold.scored_roots));
  await rm(join(paths.dir, 'candidates.json'), { force: true }); // the uncompressed form of earlier versions
  const [trace, other] = gold.provenance.tracer === 'ebpf' ? [paths.ebpfTrace, paths.trace] : [paths.trace, paths.ebpfTrace];
  // gzip with no name and mtime 0, so the same trace gives the same bytes.
  await writeFileAtomic(trace, gzipSync(rawTrace, { level: 9 }));
  await rm(other, { force: true });
  await writeGold(paths, gold);
}
