/**
 * taint-only (the seed's taint-only firewall v1): once untrusted content has
 * entered the model's context (containment's syscall-level taint), every
 * high-risk proposal is blocked, whatever its target. Before that everything
 * runs under the policy. Tainted read-only commands run under a read-only
 * restriction of the policy, so a classifier miss still commits nothing.
 */
import { classifyCommand, rolloutTaintConfig, UNTRUSTED_PREFIX } from '../../containment/index.ts';
import { readOnlyPolicy } from './ledger.ts';
import { requirePolicy } from './require.ts';
import { contextTainted, proposalTaint } from './taint.ts';
import type { Defense } from './types.ts';

const NAME = 'taint-only';

export const taintOnlyDefense: Defense = {
  name: NAME,
  version: '1',
  guidance: () => undefined,
  execution: (ctx) => {
    const policy = requirePolicy(NAME, ctx);
    const config = rolloutTaintConfig(ctx.task);
    if (!contextTainted(ctx, config)) return { kind: 'enforce', policy, implicit: ctx.implicit };
    return { kind: 'enforce', policy: readOnlyPolicy(policy, config.scratch_roots), implicit: ctx.implicit };
  },
  decide: (proposal, ctx) => {
    requirePolicy(NAME, ctx);
    const taint = proposalTaint(proposal, ctx);
    if (!taint.tainted) return { action: 'allow', rule_id: `${NAME}/clean-context`, reason: 'no untrusted content in the context yet; the kernel enforces the policy' };
    const cls = classifyCommand(proposal.args.command, { cwd: ctx.task.workdir });
    const sources = taint.labels.filter((l) => l.startsWith(UNTRUSTED_PREFIX)).map((l) => l.slice(UNTRUSTED_PREFIX.length));
    if (cls.side_effecting) {
      return {
        action: 'block',
        rule_id: `${NAME}/high-risk-after-taint`,
        reason: `the context holds untrusted content (${sources.join(', ')}) and this command is high-risk (${cls.reasons.join('; ')})`,
      };
    }
    return { action: 'allow', rule_id: `${NAME}/read-only`, reason: 'read-only command in a tainted context; it runs with writes limited to scratch and no network' };
  },
};
