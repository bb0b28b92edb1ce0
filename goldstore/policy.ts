/**
 * `--policy gold|allow-all|deny-all|<file>` turned into a Policy: a built-in,
 * the task's stored gold policy (S_gold plus what it needs to run), or a
 * policy file. An invalid file is an error naming the offending entries.
 */
import { readFile } from 'node:fs/promises';
import { AuthbenchError, formatProblem, sha256 } from '../core/index.ts';
import { allowAllPolicy, denyAllPolicy, parsePolicyText, type Policy } from '../sandbox/policy/index.ts';
import { goldPolicy } from '../gold/index.ts';
import type { Task } from '../task-format/index.ts';
import type { TaskBundle } from './bundle.ts';
import { goldPaths } from './paths.ts';
import { goldMissing, requireGold } from './store.ts';

export const BUILTIN_POLICY_SOURCES = ['allow-all', 'deny-all', 'gold'] as const;
export type BuiltinPolicySource = (typeof BUILTIN_POLICY_SOURCES)[number];

export interface ResolvedPolicy {
  policy: Policy;
  /** `file` for a policy read from disk. */
  source: BuiltinPolicySource | 'file';
  file?: string;
}

export function isBuiltinPolicySource(ref: string): ref is BuiltinPolicySource {
  return (BUILTIN_POLICY_SOURCES as readonly string[]).includes(ref);
}

/** A built-in source's policy for a task whose stored gold is already loaded. Pure; GOLD_MISSING for `gold` without one. */
export function builtinPolicy(source: BuiltinPolicySource, bundle: Pick<TaskBundle, 'paths' | 'ledger'>): Policy {
  switch (source) {
    case 'allow-all':
      return allowAllPolicy();
    case 'deny-all':
      return denyAllPolicy();
    case 'gold':
      if (bundle.ledger === undefined) throw goldMissing(bundle.paths);
      return bundle.ledger;
  }
}

/** `--policy <file|allow-all|deny-all|gold>` for one task: GOLD_MISSING for gold without one, INVALID_POLICY for a bad file. */
export async function resolvePolicy(ref: string, task: Task, oracleTracesDir: string): Promise<ResolvedPolicy> {
  if (ref === 'gold') {
    const paths = goldPaths(oracleTracesDir, task.id);
    return { policy: goldPolicy(await requireGold(paths)), source: 'gold', file: paths.gold };
  }
  if (isBuiltinPolicySource(ref)) return { policy: builtinPolicy(ref, { paths: goldPaths(oracleTracesDir, task.id), ledger: undefined }), source: ref };
  const { policy } = await readPolicyFile(ref);
  return { policy, source: 'file', file: ref };
}

/** A hand-written policy file and the digest of its bytes (an eval job records it). INVALID_POLICY for an unreadable or invalid file, naming the offending entries. */
export async function readPolicyFile(path: string): Promise<{ policy: Policy; sha256: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new AuthbenchError('INVALID_POLICY', `cannot read policy file: ${(e as Error).message}`, { file: path, cause: e });
  }
  const parsed = parsePolicyText(bytes.toString('utf8'), path);
  if (!parsed.valid || parsed.policy === undefined) {
    const first = parsed.problems[0];
    throw new AuthbenchError('INVALID_POLICY', 'the policy is invalid', {
      file: path,
      ...(first?.field === undefined ? {} : { field: first.field }),
      details: parsed.problems.map(formatProblem),
    });
  }
  return { policy: parsed.policy, sha256: sha256(bytes) };
}
