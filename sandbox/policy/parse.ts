/**
 * Reading `authorization_policy.json` with diagnostics. A policy that breaks
 * the rules (bad JSON, unknown key, relative path, mid-path `**`, duplicate
 * after normalisation) is a value — `valid: false` scores 0 — not an exception;
 * only an unreadable file is a harness fault.
 */
import { readFile } from 'node:fs/promises';
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

export function parsePolicyText(text: string, file: string): PolicyParse {
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

/** Read and parse a policy file. Throws INVALID_POLICY only when the file cannot be read. */
export async function loadPolicyFile(path: string): Promise<PolicyParse> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INVALID_POLICY', `cannot read policy file ${path}: ${(e as Error).message}`, {
      file: path,
      cause: e,
    });
  }
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
