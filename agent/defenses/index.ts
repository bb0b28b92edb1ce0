import { AuthbenchError } from '../../core/index.ts';
import { crossAgentFirewallDefense } from './cross-agent-firewall.ts';
import { intentLedgerDefense } from './intent-ledger.ts';
import { noneDefense } from './none.ts';
import { promptOnlyDefense } from './prompt-only.ts';
import { rollbackDefense } from './rollback.ts';
import { structuredGuardDefense } from './structured-guard.ts';
import { taintOnlyDefense } from './taint-only.ts';
import { toolBoundaryDefense } from './tool-boundary.ts';
import type { Defense } from './types.ts';

export type { Defense, DefenseContext, ProposalView, RunGuard, StepView } from './types.ts';
export { noneDefense } from './none.ts';
export { promptOnlyDefense, renderPolicyGuidance } from './prompt-only.ts';
export { toolBoundaryDefense } from './tool-boundary.ts';
export { decideStructuredGuard, STRUCTURED_GUARD_GUIDANCE, structuredGuardDefense } from './structured-guard.ts';
export { taintOnlyDefense } from './taint-only.ts';
export { decideIntentLedger, intentLedgerDefense } from './intent-ledger.ts';
export { rollbackDefense } from './rollback.ts';
export { crossAgentFirewallDefense, decideCrossAgentFirewall, taintedInbox } from './cross-agent-firewall.ts';
export { contextTainted, proposalTaint } from './taint.ts';
export { MAX_SNAPSHOT_BYTES, restoreSnapshot, snapshotRoots, takeSnapshot, type WorkspaceSnapshot } from './snapshot.ts';

export const DEFENSE_NAMES = ['none', 'prompt-only', 'structured-guard', 'tool-boundary', 'taint-only', 'intent-ledger', 'rollback', 'cross-agent-firewall'] as const;
export type DefenseName = (typeof DEFENSE_NAMES)[number];

const DEFENSES: Record<DefenseName, Defense> = {
  none: noneDefense,
  'prompt-only': promptOnlyDefense,
  'structured-guard': structuredGuardDefense,
  'tool-boundary': toolBoundaryDefense,
  'taint-only': taintOnlyDefense,
  'intent-ledger': intentLedgerDefense,
  rollback: rollbackDefense,
  'cross-agent-firewall': crossAgentFirewallDefense,
};

export function isDefenseName(name: string): name is DefenseName {
  return (DEFENSE_NAMES as readonly string[]).includes(name);
}

/** A built-in defense by name (`--defense`). */
export function getDefense(name: string): Defense {
  if (!isDefenseName(name)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `unknown defense ${JSON.stringify(name)}`, { hint: `valid defenses: ${DEFENSE_NAMES.join(', ')}` });
  }
  return DEFENSES[name];
}

/** Whether the defense needs an authorization policy to work. */
export function defenseNeedsPolicy(name: DefenseName): boolean {
  return name !== 'none';
}
