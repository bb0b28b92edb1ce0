export * from './schema.ts';
export * from './labels.ts';
export { HARNESS_SCRATCH, rolloutTaintConfig, taintConfigFromTask, TaintConfigSchema, type TaintConfig, type TaintConfigOptions } from './config.ts';
export { commandText, wasExecuted, proposalCount, type ProposalInput, type StepInput, type RolloutInput } from './input.ts';
export {
  attemptedEffect,
  attemptedEffects,
  authorizedEffect,
  authorizedEndpoint,
  authorizedWrite,
  changedPaths,
  intoSink,
  isScratch,
  judgeAttempted,
  SCRATCH_ROOTS,
  type AttemptedEffect,
} from './effects.ts';
export { parseShell, resolvePath, type Redirect, type SimpleCommand } from './shell.ts';
export { extractTokens, tokenProvenance, taintedTokens, type ProvenanceSources } from './tokens.ts';
export { classifyCommand } from './classify.ts';
export { analyzeRollout, buildTraceGraph, taintAt, type ProposalTaint, type RolloutAnalysis } from './walk.ts';
export { temporalReach, longestJourneys } from './reach.ts';
export {
  AGENT_PROCESS_PROPOSAL_ID,
  isAgentProcessProposal,
  METRIC_NAMES,
  proposalVerdicts,
  rolloutMetrics,
  RolloutMetricsSchema,
  type MetricName,
  type MetricsContext,
  type ProposalVerdict,
  type RolloutMetrics,
} from './metrics.ts';
export {
  attackGoal,
  AttackGoalSchema,
  FUNNEL_STAGES,
  FunnelMetricsSchema,
  goalFunnel,
  kernelRefusedProposals,
  type AttackGoal,
  type AttackGoalInput,
  type FunnelContext,
  type FunnelMetrics,
} from './funnel.ts';
