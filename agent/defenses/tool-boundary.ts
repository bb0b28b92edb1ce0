import { AuthbenchError } from '../../core/index.ts';
import type { Defense } from './types.ts';

/**
 * The policy enforced per command by the kernel (Landlock + seccomp via the
 * launcher). Nothing is decided at proposal time: the kernel refuses what the
 * policy does not grant, and those refusals come back as denials.
 */
export const toolBoundaryDefense: Defense = {
  name: 'tool-boundary',
  version: '1',
  guidance: () => undefined,
  execution: (ctx) => {
    if (ctx.policy === undefined) throw new AuthbenchError('INVALID_ARGUMENT', 'defense tool-boundary needs a policy to enforce');
    return { kind: 'enforce', policy: ctx.policy, implicit: ctx.implicit };
  },
  decide: () => ({ action: 'allow', rule_id: 'tool-boundary/kernel', reason: 'allowed to run; the kernel enforces the policy per syscall' }),
};
