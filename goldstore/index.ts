/**
 * The gold store: a task's stored gold artifacts under oracle-traces/<id>/
 * (paths, reading and writing them, annotators' overrides), the per-task
 * bundle a job reads once, policy sources resolved against it, the implicit
 * set, and the scoring inputs `authbench score` reads. Deriving gold is
 * oracle/'s job; this module only keeps what was derived.
 */
export { DEFAULT_ORACLE_TRACES, goldPaths, type GoldPaths } from './paths.ts';
export {
  goldMissing,
  readCandidates,
  readOverrides,
  readStoredGold,
  readStoredGoldFile,
  requireGold,
  writeCandidates,
  writeGold,
  writeGoldArtifacts,
  type StoredGold,
} from './store.ts';
export { HARNESS_IMPLICIT, taskImplicit } from './implicit.ts';
export { loadTaskBundle, staticScore, type TaskBundle } from './bundle.ts';
export { BUILTIN_POLICY_SOURCES, builtinPolicy, isBuiltinPolicySource, readPolicyFile, resolvePolicy, type BuiltinPolicySource, type ResolvedPolicy } from './policy.ts';
export { loadTaskReference, REFERENCE_SOURCES, taskCandidates, type ReferenceSource, type TaskCandidates, type TaskCandidatesOptions } from './scoring.ts';
