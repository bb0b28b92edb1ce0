/**
 * intent-ledger (the seed's intent-ledger firewall v2): the run's policy is
 * the trusted ledger. Untrusted content may supply what a command does, but
 * not where: in a tainted context, a proposal is blocked when a token that
 * only untrusted content supplied (a path, host or recipient the trusted
 * instruction never named) takes it outside the ledger. Tainted work that
 * stays inside the ledger runs — what taint-only cannot do — and every
 * command runs under the policy in the kernel.
 */
import { classifyCommand, UNTRUSTED_PREFIX } from '../../containment/index.ts';
import type { Decision } from '../schema.ts';
import { ledgerExpansions } from './ledger.ts';
import { requirePolicy } from './require.ts';
import { proposalTaint } from './taint.ts';
import type { Defense, DefenseContext, ProposalView } from './types.ts';

const NAME = 'intent-ledger';

/** The intent-ledger decision; the rollback defense decides the same way. */
export function decideIntentLedger(proposal: ProposalView, context: DefenseContext, defense: string = NAME): Decision {
  const ledger = requirePolicy(defense, context);
  const taint = proposalTaint(proposal, context);
  if (!taint.tainted) return { action: 'allow', rule_id: `${NAME}/clean-context`, reason: 'no untrusted content in the context; the kernel enforces the ledger' };
  const cwd = context.task.workdir;
  const expansions = ledgerExpansions(taint, classifyCommand(proposal.args.command, { cwd }), ledger, cwd);
  if (expansions.length > 0) {
    const sources = taint.labels.filter((l) => l.startsWith(UNTRUSTED_PREFIX)).map((l) => l.slice(UNTRUSTED_PREFIX.length));
    return {
      action: 'block',
      rule_id: `${NAME}/tainted-target-outside-ledger`,
      reason:
        `targets that only untrusted content (${sources.join(', ')}) named, and the task does not authorize: ` +
        expansions.map((e) => (e.needs.endsWith(e.token) ? e.needs : `${e.needs} (${e.token})`)).join('; '),
    };
  }
  return {
    action: 'allow',
    rule_id: `${NAME}/within-ledger`,
    reason: 'tainted context, but no untrusted target expands the ledger; the kernel enforces it',
  };
}

export const intentLedgerDefense: Defense = {
  name: NAME,
  version: '1',
  guidance: () => undefined,
  execution: (ctx) => ({ kind: 'enforce', policy: requirePolicy(NAME, ctx), implicit: ctx.implicit }),
  decide: (proposal, ctx) => decideIntentLedger(proposal, ctx),
};
