/**
 * scripted/replay: plays a fixed list of shell commands, one per turn — the
 * n-th model call proposes the n-th command, whatever the previous
 * observation said (ran, failed, blocked, denied) — and after the last one
 * answers with a short final text, which ends the episode. For running
 * hostile trajectories through the real eval path and for replaying recorded
 * ones. The list comes from a JSON file (`eval --replay FILE`) or, in the
 * library, from memory (`createAgentModel(…, { replay })`).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AuthbenchError, formatProblem, sha256, type Problem } from '../../core/index.ts';
import type { ModelRef } from '../../models/index.ts';
import type { AgentModel } from '../loop.ts';
import { MAX_COMMAND_TIMEOUT_SEC } from '../tools.ts';
import { asCompletion, readTranscript, scriptedResponse, shellCall } from './transcript.ts';

export const REPLAY_REF: ModelRef = { provider: 'scripted', name: 'replay' };

const ReplayCommandSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'required' : 'must be a string') })
  .refine((s) => s.trim() !== '', 'must not be empty')
  .describe('A bash command line, proposed as the shell tool\'s `command`.');

const ENTRY_SHAPE = 'must be a command string or an object { "command": string, "timeout_sec"?: number }';

/** One element of a replay file: a command, or a command with the `timeout_sec` the shell tool is asked for. */
export const ReplayEntrySchema = z.union(
  [
    ReplayCommandSchema,
    z.strictObject({
      command: ReplayCommandSchema,
      timeout_sec: z
        .number({ error: 'must be a number' })
        .positive('must be positive')
        .max(MAX_COMMAND_TIMEOUT_SEC, `must be at most ${MAX_COMMAND_TIMEOUT_SEC} (the shell tool's limit)`)
        .optional()
        .describe('Passed through as the shell tool\'s `timeout_sec`.'),
    }),
  ],
  { error: ENTRY_SHAPE },
);
export type ReplayEntry = z.infer<typeof ReplayEntrySchema>;

/** A replay file: the commands in the order they are proposed, one per turn (empty: the model answers at once). */
export const ReplayFileSchema = z
  .array(ReplayEntrySchema, { error: 'must be a JSON array of commands' })
  .describe('scripted/replay: shell commands proposed one per turn, then a final answer');
export type ReplayFile = z.infer<typeof ReplayFileSchema>;

/** `[3].timeout_sec` for the path [3, 'timeout_sec'] (undefined at the root). */
function fieldOf(path: readonly PropertyKey[]): string | undefined {
  const field = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
  return field === '' ? undefined : field;
}

/**
 * The located problems of a failed parse. An element that is an object but
 * not a valid one is reported by its own field (`[2].command: required`), not
 * as "neither a string nor an object": zod keeps each union member's issues.
 */
function replayProblems(issues: readonly z.core.$ZodIssue[], value: unknown, file: string, prefix: readonly PropertyKey[] = []): Problem[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      const input = path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
      const objectIssues = issue.errors[1];
      if (input !== null && typeof input === 'object' && !Array.isArray(input) && objectIssues !== undefined && objectIssues.length > 0) {
        return replayProblems(objectIssues, value, file, path);
      }
    }
    const field = fieldOf(path);
    return [{ file, ...(field === undefined ? {} : { field }), message: issue.message, severity: 'error' as const }];
  });
}

function replayError(problems: readonly Problem[], file: string): AuthbenchError {
  const [only] = problems;
  if (problems.length === 1 && only !== undefined) {
    return new AuthbenchError('INVALID_CONFIG', only.message, { file, ...(only.field === undefined ? {} : { field: only.field }) });
  }
  return new AuthbenchError('INVALID_CONFIG', `${problems.length} problems in the replay file`, { file, details: problems.map(formatProblem) });
}

/** Validate a replay file's parsed JSON (or an in-memory list); `file` names it in errors. Throws INVALID_CONFIG. */
export function parseReplay(value: unknown, file: string): ReplayFile {
  const parsed = ReplayFileSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw replayError(replayProblems(parsed.error.issues, value, file), file);
}

/** Parse a replay file's text; `file` names it in errors. Throws INVALID_CONFIG. */
export function parseReplayText(text: string, file: string): ReplayFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `invalid JSON: ${(e as Error).message}`, { file, cause: e });
  }
  return parseReplay(value, file);
}

export interface LoadedReplay {
  commands: ReplayFile;
  /** sha256 of the file's bytes (what a job's config records, so --resume notices a change). */
  sha256: string;
}

/** Read and validate a replay file (path as given, which is how errors name it). Throws INVALID_CONFIG. */
export async function loadReplayFile(path: string): Promise<LoadedReplay> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `cannot read replay file: ${(e as Error).message}`, { file: path, cause: e });
  }
  return { commands: parseReplayText(bytes.toString('utf8'), path), sha256: sha256(bytes) };
}

/** The model that plays `commands` (validated again: an in-memory list obeys the file's rules). */
export function replayModel(commands: readonly ReplayEntry[]): AgentModel {
  const steps = parseReplay(commands, 'replay commands').map((e) => (typeof e === 'string' ? { command: e } : e));
  return {
    ref: REPLAY_REF,
    complete: asCompletion((request) => {
      const view = readTranscript(request, 'scripted/replay');
      const step = steps[view.calls.length];
      if (step !== undefined) return scriptedResponse('', [shellCall(view.callCount + 1, step.command, step.timeout_sec)]);
      return scriptedResponse(`Done: replayed ${steps.length} command(s).`);
    }),
  };
}
