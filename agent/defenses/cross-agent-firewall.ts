/**
 * cross-agent-firewall (the seed's cross-agent taint firewall): in a topology, a message from an
 * agent whose context held untrusted content cannot authorize side effects downstream. An agent
 * that started from such a message has every side-effecting proposal blocked — not held for
 * confirmation: the seed's firewall is a commit-time block (its transfer table counts zero
 * commits under it), and a confirmation would have to come from the same tainted chain. Its
 * read-only commands run under a read-only cut of the policy, so a classifier miss still commits
 * nothing. Everything else is intent-ledger: the ledger is the user's goal (the task's
 * instruction), never an agent's restatement of it, and taint an agent picked up itself may not
 * take a proposal outside it. With one agent it decides exactly as intent-ledger.
 */
import { classifyCommand, rolloutTaintConfig, type ProposalTaint } from '../../containment/index.ts';
import type { Decision } from '../schema.ts';
import { decideIntentLedger } from './intent-ledger.ts';
import { readOnlyPolicy } from './ledger.ts';
import { requirePolicy } from './require.ts';
import { proposalTaint } from './taint.ts';
import type { Defense, DefenseContext, ProposalView } from './types.ts';

const NAME = 'cross-agent-firewall';

/** The tainted message the current agent started from, as the proposal's taint state shows it; undefined: none. */
export function taintedInbox(taint: Pick<ProposalTaint, 'message'>): { id: string; from: string } | undefined {
  return taint.message?.tainted === true ? { id: taint.message.id, from: taint.message.from } : undefined;
}

export function decideCrossAgentFirewall(proposal: ProposalView, context: DefenseContext): Decision {
  requirePolicy(NAME, context);
  const inbox = taintedInbox(proposalTaint(proposal, context));
  if (inbox === undefined) return decideIntentLedger(proposal, context, NAME);
  const cls = classifyCommand(proposal.args.command, { cwd: context.task.workdir });
  if (cls.side_effecting) {
    return {
      action: 'block',
      rule_id: `${NAME}/tainted-message`,
      reason: `this agent acts on a message from ${inbox.from}, whose context held untrusted content; a side effect it cannot authorize (${cls.reasons.join('; ')})`,
    };
  }
  return { action: 'allow', rule_id: `${NAME}/read-only`, reason: `read-only command on a tainted message from ${inbox.from}; it runs with writes limited to scratch and no network` };
}

export const crossAgentFirewallDefense: Defense = {
  name: NAME,
  version: '1',
  guidance: () => undefined,
  execution: (ctx) => {
    const policy = requirePolicy(NAME, ctx);
    const config = rolloutTaintConfig(ctx.task);
    const inbox = ctx.steps.length === 0 ? undefined : taintedInbox(proposalTaint({ id: '(context)', tool: 'shell', args: { command: 'true' } }, ctx, config));
    return { kind: 'enforce', policy: inbox === undefined ? policy : readOnlyPolicy(policy, config.scratch_roots), implicit: ctx.implicit };
  },
  decide: (proposal, ctx) => decideCrossAgentFirewall(proposal, ctx),
};
