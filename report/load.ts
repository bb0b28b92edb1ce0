/**
 * Job folders on disk → rollout results. A job folder holds config.json,
 * lock.json and one folder per rollout; a rollout folder without result.json
 * did not finish (interrupted job) and is counted, not guessed at.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, compareStrings, formatProblem, zodProblems } from '../core/index.ts';
import { z } from 'zod';
import { CLAIMS_DIR, EvalConfigSchema, RolloutResultSchema } from '../evaluation/index.ts';
import type { LoadedResult } from './rows.ts';

/** Folder names inside a job that are not rollouts (the default report output; the claims of running rollouts). */
const NOT_ROLLOUTS: ReadonlySet<string> = new Set(['report', CLAIMS_DIR]);

/**
 * The part of a job's config.json a report reads. Not strict: a job written
 * by an older authbench (fewer or other fields) still reports.
 */
export const JobConfigSchema = z
  .object({
    model: EvalConfigSchema.shape.model,
    policies: z.array(z.string()).describe('Policy sources'),
    defenses: EvalConfigSchema.shape.defenses,
    attempts: EvalConfigSchema.shape.attempts,
    seed: EvalConfigSchema.shape.seed,
  })
  .describe('What a report reads from jobs/<name>/config.json');
export type JobConfig = z.infer<typeof JobConfigSchema>;

export interface JobInfo {
  /** The folder as the user named it. */
  dir: string;
  config: JobConfig;
  /** Rollout folders with a result.json. */
  results: number;
  /** Rollout folders without one (the job was interrupted or is still running). */
  unfinished: string[];
}

export interface LoadedJobs {
  jobs: JobInfo[];
  results: LoadedResult[];
}

async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot read ${path}`, { file: path, cause: e });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${path} is not JSON`, { file: path, cause: e });
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

export async function loadJob(dir: string): Promise<{ job: JobInfo; results: LoadedResult[] }> {
  const configPath = join(dir, 'config.json');
  if (!(await isFile(configPath)))
    throw new AuthbenchError('INVALID_ARGUMENT', `${dir} is not an eval job folder (no config.json)`, {
      file: dir,
      hint: 'pass folders written by `authbench eval` (jobs/<name>)',
    });
  const config = JobConfigSchema.safeParse(await readJsonFile(configPath));
  if (!config.success)
    throw new AuthbenchError('INVALID_CONFIG', `${configPath} is not a valid job config`, {
      file: configPath,
      details: zodProblems(config.error, configPath).map(formatProblem),
    });
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !NOT_ROLLOUTS.has(e.name))
    .map((e) => e.name)
    .sort(compareStrings);
  const results: LoadedResult[] = [];
  const unfinished: string[] = [];
  for (const name of entries) {
    const rolloutDir = join(dir, name);
    const file = join(rolloutDir, 'result.json');
    if (!(await isFile(file))) {
      unfinished.push(name);
      continue;
    }
    const parsed = RolloutResultSchema.safeParse(await readJsonFile(file));
    if (!parsed.success)
      throw new AuthbenchError('INVALID_ARGUMENT', `${file} is not a valid rollout result`, {
        file,
        details: zodProblems(parsed.error, file).map(formatProblem),
      });
    results.push({ job: dir, dir: rolloutDir, result: parsed.data });
  }
  return { job: { dir, config: config.data, results: results.length, unfinished }, results };
}

/** Load every job; a folder named twice is read once. */
export async function loadJobs(dirs: readonly string[]): Promise<LoadedJobs> {
  if (dirs.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'no job folder given', { hint: 'authbench report jobs/<name>' });
  const jobs: JobInfo[] = [];
  const results: LoadedResult[] = [];
  for (const dir of [...new Set(dirs)]) {
    const loaded = await loadJob(dir);
    jobs.push(loaded.job);
    results.push(...loaded.results);
  }
  return { jobs, results };
}
