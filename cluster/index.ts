/**
 * Cluster executors for eval jobs: today Slurm (`eval --executor slurm`),
 * one array job whose tasks are the job's shards. Depends on core alone; the
 * CLI joins it to the job folder (evaluation/).
 */
export { runArrayJob, type ArrayRun, type FollowOptions, type ShardEnd } from './executor.ts';
export {
  batchScript,
  exitFileOf,
  outputFileOf,
  parseExitFile,
  parseSbatchId,
  parseSqueue,
  sbatchArgv,
  shellQuote,
  SLURM_DIR,
  SlurmCli,
  type ArraySubmission,
  type QueuedTask,
  type Runner,
} from './slurm.ts';
