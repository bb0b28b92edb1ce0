/**
 * Static scoring (product.md Appendix A): candidate snapshots of task images,
 * references from the spec or the derived gold set, and the pure scorer.
 * Where a task's snapshot and gold are stored is goldstore/'s business.
 */
export {
  AxisPatternsSchema,
  emptyAxes,
  referenceFromGold,
  referenceFromSpec,
  SCORE_AXES,
  ScoringReferenceSchema,
  type AxisPatterns,
  type ScoreAxis,
  type ScoringReference,
} from './reference.ts';
export {
  buildCandidateSnapshot,
  CANDIDATES_SCHEMA_VERSION,
  CandidateSnapshotSchema,
  loadCandidateSnapshot,
  parseCandidateSnapshot,
  sameRoots,
  serializeCandidateSnapshot,
  snapshotRoots,
  type CandidateSnapshot,
} from './candidates.ts';
export {
  AxisScoreSchema,
  axisScore,
  sidecarHostScore,
  PolicyScoreSchema,
  prepareScoring,
  scoreMany,
  scorePolicy,
  scoreDifferences,
  scorePrepared,
  type AxisDifferences,
  type AxisScore,
  type PolicyScore,
  type PreparedReference,
  type ScoreInput,
} from './score.ts';
export { ancestorListingCommand, candidatesFromImage, snapshotContainer, type ImageCandidatesOptions } from './from-image.ts';
