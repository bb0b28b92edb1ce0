/**
 * An eval job on disk: jobs/<name>/config.json, lock.json (resolved inputs and
 * their digests; no secrets), and one folder per rollout holding result.json
 * (written last, atomically), trace.jsonl.gz (the episode and its measurement) and the policy.
 * `--resume` continues a job only while its lock is unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { AUTHBENCH_VERSION, AuthbenchError, compareStrings, stableStringify, writeJsonAtomic } from '../core/index.ts';
import type { TaskBundle } from '../goldstore/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import { RolloutResultSchema, type RolloutResult } from './result.ts';

async function hashDir(dir: string): Promise<string> {
  const h = createHash('sha256');
  const walk = async (d: string): Promise<void> => {
    const entries = (await readdir(d, { withFileTypes: true })).sort((a, b) => compareStrings(a.name, b.name));
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) h.update(`${relative(dir, p)}\0`).update(await readFile(p)).update('\0');
    }
  };
  await walk(dir);
  return h.digest('hex');
}

/** A URL with its credentials (`https://user:key@host`) redacted; anything else as it is. */
function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.username === '' && url.password === '') return value;
    url.username = 'REDACTED';
    url.password = '';
    return url.toString();
  } catch {
    return value;
  }
}

/** The config as written to disk: credentials in a base URL or a build arg URL (`https://user:key@host`) are redacted. */
export function redactConfig(config: EvalConfig): EvalConfig {
  const redacted = config.base_url === undefined ? config : { ...config, base_url: redactUrl(config.base_url) };
  if (config.build === undefined) return redacted;
  const buildArgs = Object.fromEntries(Object.entries(config.build.build_args).map(([k, v]) => [k, redactUrl(v)]));
  return { ...redacted, build: { ...config.build, build_args: buildArgs } };
}

/** What the job's results depend on, besides the code: the config (with the replay file's digest) and every task's content and gold. */
export async function jobLock(config: EvalConfig, bundles: readonly Pick<TaskBundle, 'task' | 'goldSha256'>[]): Promise<object> {
  const entries: Record<string, { content_sha256: string; gold_sha256: string | null }> = {};
  for (const b of bundles) entries[b.task.id] = { content_sha256: await hashDir(b.task.dir), gold_sha256: b.goldSha256 };
  return { schema_version: 1, authbench_version: AUTHBENCH_VERSION, config: redactConfig(config), tasks: entries };
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Start the job's folder, or continue it: a job that exists is continued only
 * with `resume`, and only while its lock (inputs and digests) is unchanged.
 * Writes config.json and lock.json.
 */
export async function openJobDir(dir: string, name: string, config: EvalConfig, lock: object, resume: boolean): Promise<void> {
  const existingLock = await readJson(join(dir, 'lock.json'));
  if (existingLock !== undefined && !resume) {
    throw new AuthbenchError('INVALID_ARGUMENT', `job ${name} exists`, { file: dir, hint: 'pass --resume to continue it, or choose another --job-name' });
  }
  if (existingLock !== undefined && stableStringify(existingLock) !== stableStringify(lock)) {
    const lockedReplay = (existingLock as { config?: { replay?: { path?: unknown; sha256?: unknown } } }).config?.replay;
    const what =
      config.replay !== undefined && lockedReplay?.path === config.replay.path && lockedReplay.sha256 !== config.replay.sha256
        ? `the replay file ${config.replay.path}`
        : 'config, a task, or a gold set';
    throw new AuthbenchError('CHECK_FAILED', `cannot resume ${name}: its inputs changed since it started (${what})`, {
      file: join(dir, 'lock.json'),
      hint: 'start a new job (another --job-name) to evaluate the changed inputs',
    });
  }
  await mkdir(dir, { recursive: true });
  await writeJsonAtomic(join(dir, 'config.json'), redactConfig(config));
  await writeJsonAtomic(join(dir, 'lock.json'), lock);
}

/** Every result.json in the job's folder that parses, by the folder it is in; whether each is complete is the plan's call. */
export async function readResults(dir: string): Promise<Map<string, RolloutResult>> {
  const out = new Map<string, RolloutResult>();
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const parsed = RolloutResultSchema.safeParse(await readJson(join(dir, e.name, 'result.json')));
    if (parsed.success) out.set(e.name, parsed.data);
  }
  return out;
}

/** A rollout's folder, created; its result goes in last (writeResult). */
export async function rolloutDir(dir: string, spec: RolloutSpec): Promise<string> {
  const path = join(dir, spec.id);
  await mkdir(path, { recursive: true });
  return path;
}

/** result.json, atomically: a rollout without one is not done, whatever else its folder holds. */
export async function writeResult(rolloutPath: string, result: RolloutResult): Promise<void> {
  await writeJsonAtomic(join(rolloutPath, 'result.json'), result);
}
