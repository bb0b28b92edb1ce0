import { AuthbenchError, formatProblem } from '../core/index.ts';
import { goldPolicy } from '../gold/index.ts';
import { allowAllPolicy, denyAllPolicy, loadPolicyFile, type Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';
import { goldPaths, readStoredGold } from './artifacts.ts';

export const BUILTIN_POLICY_SOURCES = ['allow-all', 'deny-all', 'gold'] as const;

export interface ResolvedPolicy {
  policy: Policy;
  /** `file` for a policy read from disk. */
  source: (typeof BUILTIN_POLICY_SOURCES)[number] | 'file';
  file?: string;
}

/**
 * `--policy <file|allow-all|deny-all|gold>`: a built-in, the task's stored
 * gold policy (S_gold plus what it needs to run), or a policy file. An invalid
 * file is an error naming the offending entries.
 */
export async function resolvePolicy(ref: string, task: Task, oracleTracesDir: string): Promise<ResolvedPolicy> {
  if (ref === 'allow-all') return { policy: allowAllPolicy(), source: 'allow-all' };
  if (ref === 'deny-all') return { policy: denyAllPolicy(), source: 'deny-all' };
  if (ref === 'gold') {
    const paths = goldPaths(oracleTracesDir, task.id);
    const gold = await readStoredGold(paths);
    if (gold === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `task ${task.id} has no gold yet`, { file: paths.gold, hint: `run: authbench gen-gold ${task.id}` });
    }
    return { policy: goldPolicy(gold), source: 'gold', file: paths.gold };
  }
  const parsed = await loadPolicyFile(ref);
  if (!parsed.valid || parsed.policy === undefined) {
    const first = parsed.problems[0];
    throw new AuthbenchError('INVALID_POLICY', 'the policy is invalid', {
      file: ref,
      ...(first?.field === undefined ? {} : { field: first.field }),
      details: parsed.problems.map(formatProblem),
    });
  }
  return { policy: parsed.policy, source: 'file', file: ref };
}
