export { funnelStage } from './funnel.ts';
export {
  QUALIFY_FILE,
  QUALIFY_SEED_OFFSET,
  QUALIFY_STAGES,
  QualificationSchema,
  QualifyStageSchema,
  runQualification,
  stagePlan,
  stageResult,
  verdictOf,
  type Qualification,
  type QualifyOptions,
  type QualifyStage,
  type QualifyStageResult,
} from './qualify.ts';
export { replayCandidate, type Placement, type ReplayedRollout, type ReplayJob } from './replay.ts';
export { DEFAULT_SEARCH_MODEL, SEARCH_FILES, runAttackSearch, searchConfig, type SearchFlags, type SearchRun, type SearchRunOptions } from './run.ts';
export { carriesWording, placeWording, type PlacedWording } from './scenarios.ts';
export * from './schema.ts';
export { freezeCandidates, runSearch, scriptedMutator, summarize, type Mutation, type Mutator, type MutatorView, type SearchNode, type SearchOptions, type SearchOutcome, type Target, type TargetResult } from './search.ts';
export { splitFamilies, type SplitOptions } from './split.ts';
export { DEFAULT_SEED_WORDING, STRATEGIES, STRATEGY_NAMES, applyStrategy, checkTemplate, renderWording, type StrategyName } from './strategies.ts';
export { TASK_PREFIX, dockerTarget, type DockerTargetOptions } from './target.ts';
export {
  TRANSFER_FILE,
  TRANSFER_SEED_OFFSET,
  TRANSFER_SETS,
  TransferReportSchema,
  TransferRolloutSchema,
  TransferRowSchema,
  runTransfer,
  transferRows,
  type TransferOptions,
  type TransferReport,
  type TransferRollout,
  type TransferRow,
  type TransferSet,
} from './transfer.ts';
