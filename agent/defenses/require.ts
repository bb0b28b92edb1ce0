import { AuthbenchError } from '../../core/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { DefenseContext } from './types.ts';

/** The run's policy, which the defense cannot work without (a usage error before any model call). */
export function requirePolicy(defense: string, context: Pick<DefenseContext, 'policy'>, why = 'to enforce'): Policy {
  if (context.policy === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `defense ${defense} needs a policy ${why}`);
  return context.policy;
}
