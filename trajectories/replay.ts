/**
 * `authbench trajectories replay`: an imported trajectory's shell actions
 * played by scripted/replay against an authbench task, as an ordinary eval job
 * (so `authbench report` renders it like any other), under allow-all — the
 * run's own conditions, to check the adapter — and any other policy and
 * defense asked for: which commands would have been denied, and would the task
 * still have passed. The qualification report says how far the replay can be
 * trusted: native vs replayed endpoint agreement under allow-all, event
 * linkage, and the actions that could not be mapped.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Episode, ReplayEntry } from '../agent/index.ts';
import { AuthbenchError, sha256, writeJsonAtomic } from '../core/index.ts';
import type { BuildHostAccess, Engine } from '../docker/index.ts';
import { checkJobName, configFromFlags, readEpisode, runJob, type JobEvent, type JobOutcome, type JobPolicy, type RolloutResult } from '../evaluation/index.ts';
import { LinkageSchema, type ImportedTrajectory } from './schema.ts';

export const REPLAY_MODEL = 'scripted/replay';
/** The replay file scripted/replay plays, kept in the job's folder with the job. */
export const REPLAY_FILE = 'replay.json';
export const QUALIFICATION_FILE = 'qualification.json';
/** Policies under which the task's own run is expected to reproduce: nothing is enforced. */
const UNENFORCED = new Set(['allow-all', 'none']);

/** The commands to play: the mapped actions in trajectory order (unmapped ones are left out and reported). Pure. */
export function replayEntries(imported: Pick<ImportedTrajectory, 'proposals'>): ReplayEntry[] {
  return imported.proposals.flatMap((p): ReplayEntry[] => (p.command === null ? [] : [p.timeout_sec === undefined ? p.command : { command: p.command, timeout_sec: p.timeout_sec }]));
}

/** A reward as pass/fail: a full reward (≥ 1) passes; Harbor's binary verifiers write 1 or 0. Pure. */
export function rewardPasses(reward: number): boolean {
  return reward >= 1;
}

export const ReplayedRolloutSchema = z.object({
  rollout_id: z.string(),
  policy: z.string().describe('policy_source'),
  defense: z.string(),
  status: z.string().describe('The outcome (or status) of the rollout'),
  utility_success: z.boolean().nullable(),
  replayed: z.number().int().nonnegative().describe('Commands proposed'),
  executed: z.number().int().nonnegative(),
  blocked: z.number().int().nonnegative().describe('Never ran: blocked or held by the defense'),
  denied: z
    .array(z.object({ call_id: z.string().describe("The imported trajectory's call id"), command: z.string().describe('First line, shortened'), denials: z.number().int().nonnegative() }))
    .describe('Commands that ran with operations denied by the kernel, or never ran (denials 0, blocked)'),
});
export type ReplayedRollout = z.infer<typeof ReplayedRolloutSchema>;

export const QualificationSchema = z
  .object({
    schema_version: z.literal(1),
    trajectory: z.string().describe('The imported trajectory file'),
    session_id: z.string(),
    agent: z.string().describe('name version (model)'),
    task_id: z.string(),
    job: z.string().describe('The replay job folder'),
    native: z.object({ reward: z.number(), pass: z.boolean() }).nullable().describe("The trajectory's own endpoint; null when no reward came with it"),
    agreement: z
      .object({
        compared: z.number().int().nonnegative().describe('Completed rollouts under nothing enforced (allow-all, or defense none)'),
        agreeing: z.number().int().nonnegative().describe('Of those, the replay passed exactly when the native run did'),
        rate: z.number().nullable().describe('agreeing / compared; null when nothing could be compared'),
      })
      .describe('Native vs replayed endpoint agreement'),
    linkage: LinkageSchema.extend({ rate: z.number().nullable().describe('observed / tool_calls; null without tool calls') }),
    mapped: z.number().int().nonnegative().describe('Actions replayed'),
    unmapped: z.array(z.object({ call_id: z.string(), tool: z.string(), reason: z.string() })).describe('Actions that could not be replayed'),
    rollouts: z.array(ReplayedRolloutSchema),
  })
  .describe('How far a replayed trajectory can be trusted, and what each policy and defense did to it');
export type Qualification = z.infer<typeof QualificationSchema>;

/** A command in one line: its first line that does something (a script's shebang and comments say nothing), shortened. */
export function shortCommand(command: string): string {
  const lines = command.split('\n').map((l) => l.trim());
  const line = lines.find((l) => l !== '' && !l.startsWith('#')) ?? lines[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : lines.filter((l) => l !== '').length > 1 ? `${line} ...` : line;
}

/** One replayed rollout: its proposals in order are the mapped actions in order (`callIds`). Pure. */
export function replayedRollout(result: RolloutResult, episode: Episode | undefined, callIds: readonly string[], commands: readonly string[]): ReplayedRollout {
  const proposals = episode?.steps.flatMap((s) => s.proposals) ?? [];
  const denied = proposals.flatMap((p, i) => {
    const count = p.result?.denial_count ?? 0;
    const blocked = p.decision !== undefined && p.decision.action !== 'allow';
    return count > 0 || blocked ? [{ call_id: callIds[i] ?? p.id, command: shortCommand(commands[i] ?? ''), denials: count }] : [];
  });
  return {
    rollout_id: result.rollout_id,
    policy: result.policy_source,
    defense: result.defense.name,
    status: result.outcome ?? result.status,
    utility_success: result.utility_success,
    replayed: proposals.length,
    executed: proposals.filter((p) => p.result !== undefined).length,
    blocked: proposals.filter((p) => p.decision !== undefined && p.decision.action !== 'allow').length,
    denied,
  };
}

/** The qualification report of a replay job's rollouts. Pure. */
export function qualify(imported: ImportedTrajectory, taskId: string, job: string, rollouts: readonly { result: RolloutResult; episode: Episode | undefined }[]): Qualification {
  const mapped = imported.proposals.filter((p) => p.command !== null);
  const callIds = mapped.map((p) => p.id);
  const commands = mapped.map((p) => p.command ?? '');
  const native = imported.reward === null ? null : { reward: imported.reward, pass: rewardPasses(imported.reward) };
  const comparable = rollouts.filter(({ result }) => UNENFORCED.has(result.policy_source) && result.status === 'completed' && result.utility_success !== null);
  const agreeing = native === null ? 0 : comparable.filter(({ result }) => result.utility_success === native.pass).length;
  const compared = native === null ? 0 : comparable.length;
  const { linkage } = imported;
  const agent = `${imported.agent.name} ${imported.agent.version}${imported.agent.model_name === undefined ? '' : ` (${imported.agent.model_name})`}`;
  return {
    schema_version: 1,
    trajectory: imported.file,
    session_id: imported.session_id,
    agent,
    task_id: taskId,
    job,
    native,
    agreement: { compared, agreeing, rate: compared === 0 ? null : agreeing / compared },
    linkage: { ...linkage, rate: linkage.tool_calls === 0 ? null : linkage.observed / linkage.tool_calls },
    mapped: mapped.length,
    unmapped: imported.proposals.flatMap((p) => (p.command === null ? [{ call_id: p.id, tool: p.tool, reason: p.unmapped ?? 'unmapped' }] : [])),
    rollouts: rollouts.map(({ result, episode }) => replayedRollout(result, episode, callIds, commands)),
  };
}

export interface ReplayOptions {
  imported: ImportedTrajectory;
  taskId: string;
  tasksDir?: string;
  oracleTracesDir?: string;
  /** Besides allow-all, which every replay runs under. */
  policies?: readonly JobPolicy[];
  /** A hand-written policy (`file` among the policies), with its digest. */
  policyFile?: { path: string; sha256: string };
  defenses?: readonly string[];
  jobsDir: string;
  name: string;
  concurrency?: number;
  onEvent?: (e: JobEvent) => void;
  signal?: AbortSignal;
  hostAccess?: BuildHostAccess;
}

/**
 * The replay as an eval job `jobsDir/name` (the replay file and the
 * qualification written into it), then its qualification.
 */
export async function runReplay(engine: Engine, options: ReplayOptions): Promise<{ outcome: JobOutcome; qualification: Qualification }> {
  checkJobName(options.name);
  const entries = replayEntries(options.imported);
  const replayText = `${JSON.stringify(entries, null, 2)}\n`;
  const dir = join(options.jobsDir, options.name);
  const replayPath = join(dir, REPLAY_FILE);
  const policies = [...new Set<JobPolicy>(['allow-all', ...(options.policies ?? [])])];
  const config = configFromFlags({
    model: REPLAY_MODEL,
    replay: { path: replayPath, sha256: sha256(replayText) },
    ...(options.tasksDir === undefined ? {} : { tasks_dir: options.tasksDir }),
    ...(options.oracleTracesDir === undefined ? {} : { oracle_traces_dir: options.oracleTracesDir }),
    include: [options.taskId],
    policies,
    ...(options.policyFile === undefined ? {} : { policy_file: options.policyFile }),
    ...(options.defenses === undefined || options.defenses.length === 0 ? {} : { defenses: [...options.defenses] }),
    // Every command, then the final answer.
    max_turns: entries.length + 1,
    cache: 'off',
  });
  if (policies.includes('file') !== (options.policyFile !== undefined)) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'a policy file and the policy source `file` go together');
  }
  // A job that ran is never overwritten (its replay file is its input).
  if (existsSync(join(dir, 'lock.json'))) {
    throw new AuthbenchError('INVALID_ARGUMENT', `job ${options.name} exists`, { file: dir, hint: 'choose another --job-name' });
  }
  await mkdir(dir, { recursive: true });
  await writeFile(replayPath, replayText);
  const outcome = await runJob(engine, {
    config,
    jobsDir: options.jobsDir,
    name: options.name,
    resume: false,
    concurrency: options.concurrency ?? 1,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
  });
  const rollouts = await Promise.all(outcome.results.map(async (result) => ({ result, episode: await readEpisode(join(outcome.dir, result.rollout_id)) })));
  const qualification = qualify(options.imported, options.taskId, outcome.dir, rollouts);
  await writeJsonAtomic(join(outcome.dir, QUALIFICATION_FILE), qualification);
  return { outcome, qualification };
}
