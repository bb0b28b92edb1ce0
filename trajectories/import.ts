/**
 * `authbench trajectories import`: an ATIF trajectory, or a Harbor trial
 * folder (the trajectory next to the verifier's reward), → its tool calls as
 * proposals with stable call ids, each with the observation whose
 * `source_call_id` names it, the shell command it maps to (actions.ts), and the
 * reward as the run's native endpoint. Parsing and mapping are pure; only
 * readImport touches the filesystem.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, formatProblem, zodProblems } from '../core/index.ts';
import { SHELL_TOOLS, mapAction } from './actions.ts';
import { AtifTrajectorySchema, type AtifTrajectory, type ImportedProposal, type ImportedTrajectory } from './schema.ts';

/** A parsed trajectory checked against the schema; errors name each field's path (`steps.2.tool_calls.0.arguments`). */
export function parseAtif(value: unknown, file: string): AtifTrajectory {
  const parsed = AtifTrajectorySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = zodProblems(parsed.error, file);
  const [only] = problems;
  if (problems.length === 1 && only !== undefined) {
    throw new AuthbenchError('INVALID_TRAJECTORY', only.message, { file, ...(only.field === undefined ? {} : { field: only.field }) });
  }
  throw new AuthbenchError('INVALID_TRAJECTORY', `${problems.length} problems in the trajectory`, { file, details: problems.map(formatProblem) });
}

export function parseAtifText(text: string, file: string): AtifTrajectory {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('INVALID_TRAJECTORY', `invalid JSON: ${(e as Error).message}`, { file, cause: e });
  }
  return parseAtif(value, file);
}

/** Text, or the `text` fields of a list of content parts (multimodal writers). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      const value = typeof part === 'object' && part !== null ? (part as { text?: unknown }).text : undefined;
      return typeof value === 'string' ? value : '';
    })
    .filter((t) => t !== '')
    .join('\n');
}

/**
 * The verifier's reward: `reward.txt` holds a number; `reward.json` a number or
 * an object with a numeric `reward` (else its only numeric value). Pure;
 * INVALID_TRAJECTORY when it holds none.
 */
export function parseReward(text: string, file: string): number {
  const fail = (why: string): AuthbenchError => new AuthbenchError('INVALID_TRAJECTORY', `no reward in ${file}: ${why}`, { file });
  if (file.endsWith('.txt')) {
    const n = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(n)) throw fail(`${JSON.stringify(text.trim().slice(0, 40))} is not a number`);
    return n;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw fail(`invalid JSON (${(e as Error).message})`);
  }
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    const reward = (value as { reward?: unknown }).reward;
    if (typeof reward === 'number') return reward;
    const numbers = entries.filter(([, v]) => typeof v === 'number');
    if (numbers.length === 1 && typeof numbers[0]?.[1] === 'number') return numbers[0][1];
    throw fail(numbers.length === 0 ? 'no numeric field' : `several numeric fields (${numbers.map(([k]) => k).join(', ')}) and no \`reward\``);
  }
  throw fail('neither a number nor an object');
}

/** The task a trajectory names: our own exports put it in `extra.authbench.task_id`. */
function taskOf(traj: AtifTrajectory): string | undefined {
  const authbench = traj.extra?.authbench;
  const id = typeof authbench === 'object' && authbench !== null ? (authbench as { task_id?: unknown }).task_id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * A checked trajectory → authbench's reading of it. Call ids stay the
 * trajectory's own where they identify one call (non-empty, unique), so a
 * round trip keeps them; a missing or repeated one becomes `step<N>.call<k>`
 * (k 1-based within the step), which depends only on the trajectory. Results
 * link to calls by `source_call_id` anywhere in the trajectory (some writers
 * put a call's result on a later step). Pure.
 */
export function importAtif(traj: AtifTrajectory, file: string, reward: { value: number; file: string } | null = null): ImportedTrajectory {
  const counts = new Map<string, number>();
  for (const step of traj.steps) for (const c of step.tool_calls ?? []) counts.set(c.tool_call_id, (counts.get(c.tool_call_id) ?? 0) + 1);
  const results = new Map<string, string[]>();
  let unlinked = 0;
  for (const step of traj.steps) {
    for (const r of step.observation?.results ?? []) {
      const id = r.source_call_id;
      if (id === undefined || id === null || id === '') {
        unlinked++;
        continue;
      }
      results.set(id, [...(results.get(id) ?? []), contentText(r.content)]);
    }
  }
  const proposals: ImportedProposal[] = [];
  let keystrokesBroken = false;
  for (const step of traj.steps) {
    for (const [k, call] of (step.tool_calls ?? []).entries()) {
      const own = call.tool_call_id !== '' && counts.get(call.tool_call_id) === 1;
      const mapped = mapAction(call.function_name, call.arguments, keystrokesBroken);
      if (mapped.command === null && Object.hasOwn(SHELL_TOOLS, call.function_name) && SHELL_TOOLS[call.function_name]?.kind === 'keystrokes') keystrokesBroken = true;
      const observed = own ? results.get(call.tool_call_id) : undefined;
      proposals.push({
        id: own ? call.tool_call_id : `step${step.step_id}.call${k + 1}`,
        step_id: step.step_id,
        tool: call.function_name,
        args: call.arguments,
        ...(mapped.command === null ? { command: null, unmapped: mapped.unmapped } : { command: mapped.command, ...(mapped.timeout_sec === undefined ? {} : { timeout_sec: mapped.timeout_sec }) }),
        observation: observed === undefined ? null : observed.join('\n'),
      });
    }
  }
  const callIds = new Set(proposals.map((p) => p.id));
  const orphans = [...results.entries()].filter(([id]) => !callIds.has(id)).reduce((n, [, r]) => n + r.length, 0);
  const task = taskOf(traj);
  return {
    file,
    schema_version: traj.schema_version,
    session_id: traj.session_id,
    agent: { name: traj.agent.name, version: traj.agent.version, ...(typeof traj.agent.model_name === 'string' ? { model_name: traj.agent.model_name } : {}) },
    ...(task === undefined ? {} : { task_id: task }),
    steps: traj.steps.length,
    proposals,
    reward: reward?.value ?? null,
    ...(reward === null ? {} : { reward_file: reward.file }),
    linkage: {
      tool_calls: proposals.length,
      observed: proposals.filter((p) => p.observation !== null).length,
      unobserved: proposals.filter((p) => p.observation === null).map((p) => p.id),
      orphan_results: orphans,
      unlinked_results: unlinked,
    },
  };
}

/** Where a Harbor trial folder keeps its trajectory and the verifier's reward, in the order looked at. */
export const TRIAL_TRAJECTORY = ['trajectory.json', 'agent/trajectory.json'] as const;
export const TRIAL_REWARD = ['reward.txt', 'reward.json', 'verifier/reward.txt', 'verifier/reward.json'] as const;

async function firstExisting(dir: string, names: readonly string[]): Promise<string | undefined> {
  for (const name of names) {
    const path = join(dir, name);
    if (await stat(path).then((s) => s.isFile(), () => false)) return path;
  }
  return undefined;
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot read ${path}: ${(e as Error).message}`, { file: path, cause: e });
  }
}

/**
 * A trajectory file (its reward read from beside it, when there is one) or a
 * Harbor trial folder, imported.
 */
export async function readImport(path: string): Promise<ImportedTrajectory> {
  const isDir = await stat(path).then((s) => s.isDirectory(), (e: unknown) => {
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot read ${path}: ${(e as Error).message}`, { file: path, cause: e });
  });
  const dir = isDir ? path : join(path, '..');
  const file = isDir ? await firstExisting(path, TRIAL_TRAJECTORY) : path;
  if (file === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${path} holds no trajectory`, { file: path, hint: `a Harbor trial folder has ${TRIAL_TRAJECTORY.join(' or ')}` });
  }
  const traj = parseAtifText(await readText(file), file);
  const rewardFile = await firstExisting(dir, TRIAL_REWARD);
  const reward = rewardFile === undefined ? null : { value: parseReward(await readText(rewardFile), rewardFile), file: rewardFile };
  return importAtif(traj, file, reward);
}
