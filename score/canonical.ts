/**
 * Execute-axis canonicalisation against a stored candidate snapshot. The
 * snapshot keeps only directories, candidate files and symlinks, which is all
 * a realpath walk visits, so it is turned back into an FsSnapshot and the path
 * module's own canonicaliser does the work — one definition of realpath for
 * the compiler and the scorer.
 */
import { canonicalizeExecutables } from '../sandbox/paths/index.ts';
import type { FsEntry, FsSnapshot } from '../sandbox/paths/index.ts';
import type { CandidateSnapshot } from './candidates.ts';

export type Canonicalizer = (pattern: string) => string;

export function executeCanonicalizer(candidates: CandidateSnapshot): Canonicalizer {
  const fs = realpathSnapshot(candidates);
  const memo = new Map<string, string>();
  return (pattern) => {
    let out = memo.get(pattern);
    if (out === undefined) {
      out = canonicalizeExecutables([pattern], fs)[0] ?? pattern;
      memo.set(pattern, out);
    }
    return out;
  };
}

function realpathSnapshot(c: CandidateSnapshot): FsSnapshot {
  const entries = new Map<string, FsEntry>();
  for (const path of c.dirs) entries.set(path, { path, type: 'dir', mode: 0o755 });
  for (const path of [...c.files.read, ...c.files.write]) entries.set(path, { path, type: 'file', mode: 0o644 });
  for (const path of c.files.execute) entries.set(path, { path, type: 'file', mode: 0o755 });
  for (const [path, target] of Object.entries(c.symlinks)) entries.set(path, { path, type: 'symlink', mode: 0o777, target });
  return { roots: ['/'], entries: [...entries.values()] };
}
