/**
 * An eval job on disk: jobs/<name>/config.json, lock.json (resolved inputs and
 * their digests; no secrets), and one folder per rollout holding result.json
 * (written last, atomically), trace.jsonl.gz (the episode and its measurement) and the policy;
 * claims/ holds a claim per rollout being run (claims.ts), so several processes can share the job.
 * `--resume` continues a job only while its lock is unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { AUTHBENCH_VERSION, AuthbenchError, compareStrings, stableStringify, writeJsonAtomic } from '../core/index.ts';
import type { TaskBundle } from '../goldstore/index.ts';
import { createExclusive } from './claims.ts';
import { EvalConfigSchema, type EvalConfig, type RolloutSpec } from './config.ts';
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
export function redactUrl(value: string): string {
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
 * A job name is one folder inside --jobs-dir: no separators, no `..`, nothing
 * hidden. INVALID_ARGUMENT otherwise.
 */
/**
 * The run id (authbench.run) of everything a job's processes create: its rollouts' containers and
 * also what their engine makes on the side (the harness check's container, a launcher build's), so
 * that the next run of the job finds all of it when a process of it was killed.
 */
export function jobRunId(name: string): string {
  return `job-${name}`;
}

export function checkJobName(name: string): void {
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(name) || name.length > 200) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--job-name ${JSON.stringify(name)}: a job name is one folder inside --jobs-dir`, {
      hint: 'letters, digits, `.`, `_` and `-`, not starting with `.` or `-` (no `/`, no `..`)',
    });
  }
}

interface LockView {
  authbench_version?: unknown;
  config?: Record<string, unknown>;
  tasks?: Record<string, { content_sha256?: unknown; gold_sha256?: unknown }>;
}

/** What differs between a job's saved lock and the current one, one phrase each (config keys, tasks, gold, version). Pure. */
export function lockDifferences(saved: unknown, current: unknown): string[] {
  const a = (saved ?? {}) as LockView;
  const b = (current ?? {}) as LockView;
  const out: string[] = [];
  if (a.authbench_version !== b.authbench_version) out.push(`authbench version (${String(a.authbench_version)} → ${String(b.authbench_version)})`);
  const configA = a.config ?? {};
  const configB = b.config ?? {};
  for (const k of [...new Set([...Object.keys(configA), ...Object.keys(configB)])].sort()) {
    if (stableStringify(configA[k] ?? null) !== stableStringify(configB[k] ?? null)) out.push(k === 'replay' ? 'the replay file' : k === 'policy_file' ? 'the policy file' : `config ${k}`);
  }
  const tasksA = a.tasks ?? {};
  const tasksB = b.tasks ?? {};
  for (const id of [...new Set([...Object.keys(tasksA), ...Object.keys(tasksB)])].sort()) {
    const x = tasksA[id];
    const y = tasksB[id];
    if (x === undefined) out.push(`task ${id} added`);
    else if (y === undefined) out.push(`task ${id} removed`);
    else {
      if (x.content_sha256 !== y.content_sha256) out.push(`task ${id} content`);
      if (x.gold_sha256 !== y.gold_sha256) out.push(`task ${id} gold`);
    }
  }
  return out;
}

/**
 * May the job's folder be started or continued with this lock? Reads only:
 * a job that exists is continued only with `resume`, and only while its lock
 * (inputs and digests) is unchanged; the refusal names what changed.
 */
export async function checkJobDir(dir: string, name: string, lock: object, resume: boolean): Promise<void> {
  const existingLock = await readJson(join(dir, 'lock.json'));
  if (existingLock !== undefined && !resume) {
    throw new AuthbenchError('INVALID_ARGUMENT', `job ${name} exists`, { file: dir, hint: 'pass --resume to continue it, or choose another --job-name' });
  }
  if (existingLock !== undefined && stableStringify(existingLock) !== stableStringify(lock)) {
    const what = lockDifferences(existingLock, lock);
    throw new AuthbenchError('CHECK_FAILED', `cannot resume ${name}: its inputs changed since it started (${what.join(', ') || 'the lock'})`, {
      file: join(dir, 'lock.json'),
      hint: 'start a new job (another --job-name) to evaluate the changed inputs',
    });
  }
}

/**
 * Start the job's folder, or continue or join it (checkJobDir first): writes lock.json, then
 * config.json. Several shards may start one job at once: lock.json is created exclusively, so the
 * first one's inputs are the job's and every other process is checked against them, as a resume is.
 */
export async function openJobDir(dir: string, name: string, config: EvalConfig, lock: object, resume: boolean): Promise<void> {
  await checkJobDir(dir, name, lock, resume);
  await mkdir(dir, { recursive: true });
  const lockText = `${JSON.stringify(lock, null, 2)}\n`;
  // Lost the race to another process starting this job: its lock must be ours.
  if (!(await createExclusive(join(dir, 'lock.json'), lockText))) await checkJobDir(dir, name, lock, true);
  await writeJsonAtomic(join(dir, 'config.json'), redactConfig(config));
}

/** A job's saved config.json, for --resume. INVALID_ARGUMENT when there is no such job, INVALID_CONFIG when it does not parse. */
export async function readJobConfig(dir: string, name: string): Promise<EvalConfig> {
  let text: string;
  try {
    text = await readFile(join(dir, 'config.json'), 'utf8');
  } catch {
    throw new AuthbenchError('INVALID_ARGUMENT', `no job ${name} to resume (no ${join(dir, 'config.json')})`, { hint: 'check --job-name and --jobs-dir, or start the job without --resume' });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `invalid JSON: ${(e as Error).message}`, { file: join(dir, 'config.json') });
  }
  const parsed = EvalConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AuthbenchError('INVALID_CONFIG', issue?.message ?? 'invalid config', { file: join(dir, 'config.json'), field: issue?.path.join('.') ?? '' });
  }
  return parsed.data;
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

/** A rollout's result.json, if it has one that parses (another process may have just written it). */
export async function readResult(rolloutPath: string): Promise<RolloutResult | undefined> {
  const parsed = RolloutResultSchema.safeParse(await readJson(join(rolloutPath, 'result.json')));
  return parsed.success ? parsed.data : undefined;
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
