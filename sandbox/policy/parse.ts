/**
 * Reading `authorization_policy.json` with diagnostics. A policy that breaks
 * the rules (bad JSON, unknown key, relative path, mid-path `**`, duplicate
 * after normalisation) is a value — `valid: false` scores 0 — not an exception;
 * only an unreadable file is a harness fault. A policy over MAX_POLICY_BYTES
 * is refused before it is parsed, naming the limit.
 */
import { readFile, stat } from 'node:fs/promises';
import { AuthbenchError, formatProblem, zodProblems } from '../../core/index.ts';
import type { Problem } from '../../core/index.ts';
import { normalizePattern, patternProblem } from '../paths/index.ts';
import { jsonErrorOffset, lineColumn } from './json-position.ts';
import { POLICY_AXES, PolicySchema } from './schema.ts';
import type { Policy } from './schema.ts';

export interface PolicyParse {
  valid: boolean;
  /** The policy with every pattern normalised; present only when valid. */
  policy?: Policy;
  problems: Problem[];
}

/**
 * The largest policy authbench reads: 1 MiB, some 200 times the largest gold policy. Past it a
 * policy is not a permission set a person wrote or could review, and scoring it costs memory in
 * proportion (a 50 MB policy took 600 MB to score).
 */
export const MAX_POLICY_BYTES = 1024 * 1024;

function overLimit(bytes: number): string {
  return `the policy is ${bytes} bytes, over the limit of ${MAX_POLICY_BYTES} bytes (1 MiB)`;
}

export function parsePolicyText(text: string, file: string): PolicyParse {
  // Every reader of policy text comes through here, whoever read the file: the one place the limit holds.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_POLICY_BYTES) return invalid([{ file, message: overLimit(bytes), severity: 'error' }]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return invalid([{ file, message: `invalid JSON: ${jsonErrorMessage(e, text)}`, severity: 'error' }]);
  }
  return validatePolicyValue(value, file);
}

/** Validate an already-parsed JSON value (also used on model output). */
export function validatePolicyValue(value: unknown, file: string): PolicyParse {
  const parsed = PolicySchema.safeParse(value);
  if (!parsed.success) return invalid(zodProblems(parsed.error, file));
  const problems: Problem[] = [];
  const policy: Policy = { ...parsed.data };
  for (const axis of POLICY_AXES) {
    const firstIndex = new Map<string, number>();
    const raw = parsed.data[axis];
    policy[axis] = raw.map((entry, i) => {
      const normal = normalizePattern(entry);
      const field = `${axis}[${i}]`;
      const problem = patternProblem(entry.trim() === '' ? entry : normal);
      if (problem !== undefined) problems.push({ file, field, message: `${JSON.stringify(entry)}: ${problem}`, severity: 'error' });
      const earlier = firstIndex.get(normal);
      if (earlier === undefined) {
        firstIndex.set(normal, i);
      } else {
        const first = raw[earlier] ?? '';
        const how = first === entry ? '' : ' after normalisation';
        problems.push({
          file,
          field,
          message: `${field} ${JSON.stringify(entry)} duplicates ${axis}[${earlier}] ${JSON.stringify(first)}${how}`,
          severity: 'error',
        });
      }
      return normal;
    });
  }
  return problems.length > 0 ? invalid(problems) : { valid: true, policy, problems };
}

/** Read and parse a policy file. Throws INVALID_POLICY when the file cannot be read, TOO_LARGE (naming the limit) past MAX_POLICY_BYTES. */
export async function loadPolicyFile(path: string): Promise<PolicyParse> {
  const unreadable = (e: unknown): AuthbenchError => new AuthbenchError('INVALID_POLICY', `cannot read policy file ${path}: ${(e as Error).message}`, { file: path, cause: e });
  // Refused before it is read: a file of any size would otherwise be loaded whole.
  const { size } = await stat(path).catch((e: unknown) => {
    throw unreadable(e);
  });
  if (size > MAX_POLICY_BYTES) throw new AuthbenchError('TOO_LARGE', `${path}: ${overLimit(size)}`, { file: path, hint: 'a policy lists paths and patterns: cover a tree with one ** pattern rather than listing its files' });
  const text = await readFile(path, 'utf8').catch((e: unknown) => {
    throw unreadable(e);
  });
  return parsePolicyText(text, path);
}

/** For callers that cannot go on without a valid policy (enforcement): throw with every problem. */
export function policyOrThrow(parse: PolicyParse, file: string): Policy {
  if (parse.valid && parse.policy !== undefined) return parse.policy;
  throw new AuthbenchError('INVALID_POLICY', `${file} is not a valid authorization policy`, {
    file,
    details: parse.problems.map(formatProblem),
  });
}

function invalid(problems: Problem[]): PolicyParse {
  return { valid: false, problems };
}

/** V8's message, with the position our own scanner finds (V8 gives one only for some errors). */
function jsonErrorMessage(e: unknown, text: string): string {
  const message = e instanceof Error ? e.message : String(e);
  const offset = jsonErrorOffset(text);
  if (offset === undefined || /line \d+/.test(message)) return message;
  const { line, column } = lineColumn(text, offset);
  return `${message} at position ${offset} (line ${line} column ${column})`;
}
