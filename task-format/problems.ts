import type { z } from 'zod';
import type { Problem } from '../core/index.ts';
import { isGlob, hasRecursiveTail, normalizePattern, patternProblem } from '../sandbox/paths/index.ts';

/**
 * `required_permissions.write[2]`: array indices in brackets, so a field reads
 * the way the user would point at it in the JSON or TOML file.
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/**
 * One Problem per zod issue; an unknown-keys issue becomes one Problem per key
 * so each stray key is named as the field.
 */
export function issuesToProblems(error: z.ZodError, file: string, prefix: readonly PropertyKey[] = []): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    const base = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push(problem(file, fieldPath([...base, key]), 'unknown key', 'error'));
    } else if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
      problems.push(problem(file, fieldPath(base), `missing (expected ${issue.expected})`, 'error'));
    } else {
      problems.push(problem(file, fieldPath(base), issue.message, 'error'));
    }
  }
  return problems;
}

export function problem(file: string, field: string | undefined, message: string, severity: Problem['severity'] = 'error'): Problem {
  return field === undefined || field === '' ? { file, message, severity } : { file, field, message, severity };
}

/** Why a raw path pattern is invalid (after normalisation), or undefined. */
export function rawPatternProblem(raw: string): string | undefined {
  return patternProblem(normalizePattern(raw));
}

/** Why a raw entry is not an exact absolute path (no glob, no trailing `/**`), or undefined. */
export function exactPathProblem(raw: string): string | undefined {
  const normal = normalizePattern(raw);
  const invalid = patternProblem(normal);
  if (invalid !== undefined) return invalid;
  if (isGlob(normal) || hasRecursiveTail(normal)) return 'must be an exact path (no glob, no trailing /**)';
  return undefined;
}

/**
 * Indices of entries that repeat an earlier one after normalisation, with the
 * index they repeat. Non-strings are skipped (their own issue is reported elsewhere).
 */
export function duplicateEntries(entries: readonly unknown[]): { index: number; first: number; exact: boolean }[] {
  const seen = new Map<string, { index: number; raw: string }>();
  const dups: { index: number; first: number; exact: boolean }[] = [];
  entries.forEach((entry, index) => {
    if (typeof entry !== 'string' || entry === '') return;
    const key = normalizePattern(entry);
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, { index, raw: entry });
    else dups.push({ index, first: earlier.index, exact: earlier.raw === entry });
  });
  return dups;
}

export function duplicateMessage(d: { first: number; exact: boolean }): string {
  return d.exact ? `duplicate of [${d.first}]` : `duplicate of [${d.first}] after normalisation`;
}
