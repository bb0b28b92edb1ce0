/**
 * Getting a policy out of a model's raw answer. The status says how much help
 * the answer needed, from `strict` (the whole output is the JSON) to `invalid`
 * (no JSON object could be found or repaired); it is reported as a validity
 * metric, so the ladder is fixed: strict, fenced, prefixed, repaired.
 * Whether the object found is a *valid policy* is separate (`valid`,
 * `problems`): a strict answer with a relative path is strict and invalid.
 */
import { jsonrepair } from 'jsonrepair';
import type { Problem } from '../../core/index.ts';
import { validatePolicyValue } from './parse.ts';
import type { Policy } from './schema.ts';

export type ExtractionStatus = 'strict' | 'fenced' | 'prefixed' | 'repaired' | 'invalid';

export interface PolicyExtraction {
  status: ExtractionStatus;
  valid: boolean;
  policy?: Policy;
  /** The JSON text the policy was read from (after repair, for `repaired`). */
  json?: string;
  problems: Problem[];
}

const MODEL_OUTPUT = '<model output>';
const FENCE = /```[^\n`]*\n([\s\S]*?)```/g;

export function extractPolicyFromModelOutput(raw: string, file = MODEL_OUTPUT): PolicyExtraction {
  const trimmed = raw.trim();
  const strict = tryObject(trimmed);
  if (strict !== undefined) return finish('strict', trimmed, strict, file);

  const fences = [...raw.matchAll(FENCE)].map((m) => (m[1] ?? '').trim()).reverse();
  for (const body of fences) {
    const value = tryObject(body);
    if (value !== undefined) return finish('fenced', body, value, file);
  }

  const embedded = balancedObjects(raw);
  const prefixed = pickPolicyLike(embedded.map((text) => ({ text, value: tryObject(text) })));
  if (prefixed !== undefined) return finish('prefixed', prefixed.text, prefixed.value, file);

  const repairCandidates = [...fences, ...embedded, outermostBraces(raw), trimmed].filter((t): t is string => t !== undefined);
  for (const candidate of repairCandidates) {
    const repaired = tryRepair(candidate);
    if (repaired !== undefined) return finish('repaired', repaired.text, repaired.value, file);
  }
  return {
    status: 'invalid',
    valid: false,
    problems: [{ file, message: 'no JSON object found in the output (strict, fenced, embedded or repaired)', severity: 'error' }],
  };
}

function finish(status: ExtractionStatus, json: string, value: object, file: string): PolicyExtraction {
  const parse = validatePolicyValue(value, file);
  return { status, valid: parse.valid, ...(parse.policy === undefined ? {} : { policy: parse.policy }), json, problems: parse.problems };
}

function tryObject(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function tryRepair(text: string): { text: string; value: object } | undefined {
  if (!text.includes('{')) return undefined;
  try {
    const repairedText = jsonrepair(text);
    const value = tryObject(repairedText);
    return value === undefined ? undefined : { text: repairedText, value };
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Prefer an object that looks like a policy; otherwise the first that parses. */
function pickPolicyLike(candidates: { text: string; value: object | undefined }[]): { text: string; value: object } | undefined {
  const parsed = candidates.filter((c): c is { text: string; value: object } => c.value !== undefined);
  return parsed.find((c) => ['read', 'write', 'execute'].some((k) => k in c.value)) ?? parsed[0];
}

/** Every top-level `{...}` span with balanced braces, skipping braces inside strings. */
function balancedObjects(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' && depth > 0) quote = c;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  return spans;
}

function outermostBraces(text: string): string | undefined {
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  return first >= 0 && last > first ? text.slice(first, last + 1) : first >= 0 ? text.slice(first) : undefined;
}
