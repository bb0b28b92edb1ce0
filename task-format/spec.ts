/**
 * AuthBench's `tests/permission_eval_spec.json`, exactly as product.md
 * Appendix A defines it: four keys, each an object of exactly read / write /
 * execute pattern lists. Entries come out normalised.
 */
import { z } from 'zod';
import type { Problem } from '../core/index.ts';
import { patternWithin } from '../sandbox/paths/index.ts';
import { exactPathProblem, fieldPath, issuesToProblems, problem } from './problems.ts';
import { patternListSchema } from './schema.ts';

export const AXES = ['read', 'write', 'execute'] as const;
export type Axis = (typeof AXES)[number];

function axisSets(entries: ReturnType<typeof patternListSchema>, what: string) {
  return z
    .strictObject({
      read: entries.describe(`${what}: read axis`),
      write: entries.describe(`${what}: write axis`),
      execute: entries.describe(`${what}: execute axis`),
    })
    .describe(what);
}

const patterns = patternListSchema();
const exactPaths = patternListSchema(exactPathProblem);

export const PermissionEvalSpecSchema = z
  .strictObject({
    required_permissions: axisSets(patterns, 'The gold permission set S_gold'),
    scored_roots: axisSets(exactPaths, 'Directories whose files are scored; exact paths'),
    implicit_permissions: axisSets(patterns, 'Runtime noise excluded from scoring'),
    sensitive_permissions: axisSets(patterns, 'Entries whose grant counts as sensitive exposure').optional(),
  })
  .describe('AuthBench permission_eval_spec.json');

export type PermissionEvalSpec = z.infer<typeof PermissionEvalSpecSchema>;
export type AxisSets = PermissionEvalSpec['required_permissions'];

export interface SpecCheck {
  spec?: PermissionEvalSpec;
  problems: Problem[];
}

/** Validate an already-parsed spec value; `file` names it in problems. */
export function checkSpec(value: unknown, file: string): SpecCheck {
  const parsed = PermissionEvalSpecSchema.safeParse(value);
  if (!parsed.success) return { problems: issuesToProblems(parsed.error, file) };
  const spec = parsed.data;
  const problems = [
    ...outsideRoots(spec, 'required_permissions', spec.required_permissions, file),
    ...(spec.sensitive_permissions === undefined
      ? []
      : outsideRoots(spec, 'sensitive_permissions', spec.sensitive_permissions, file)),
  ];
  return problems.length === 0 ? { spec, problems } : { problems };
}

/** Parse the file's text (strict JSON) and validate it. */
export function parseSpec(text: string, file: string): SpecCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problems: [problem(file, undefined, `not valid JSON: ${e instanceof Error ? e.message : String(e)}`)] };
  }
  return checkSpec(value, file);
}

function outsideRoots(spec: PermissionEvalSpec, key: string, sets: AxisSets, file: string): Problem[] {
  const problems: Problem[] = [];
  for (const axis of AXES) {
    const roots = spec.scored_roots[axis];
    sets[axis].forEach((entry, i) => {
      if (roots.some((root) => patternWithin(root, entry))) return;
      const shown = roots.length === 0 ? 'none' : roots.join(', ');
      problems.push(problem(file, fieldPath([key, axis, i]), `${entry} is outside the ${axis} scored roots (${shown})`));
    });
  }
  return problems;
}
