/**
 * Which runtime defenses an installed agent can run under, as data. The
 * built-in loop shows each proposal to the defense before it runs; an
 * installed agent runs its own tool calls and offers no hook before them, so
 * only the defenses that need none apply: `none` (traced, nothing enforced),
 * `prompt-only` (the policy text goes before the instruction: the agent's
 * system prompt is its own) and `tool-boundary` (the kernel enforces the
 * policy around the whole agent process tree). The others are refused.
 * Keyed by the defense names of agent/defenses (checked by a test there is
 * one entry per defense: agents does not import agent).
 */
import { AuthbenchError } from '../core/index.ts';
import type { AgentAdapter } from './schema.ts';

export type InstalledDefenseSupport =
  | {
      supported: true;
      /** How the agent runs: its headless command enforced under the policy, or only traced. */
      execution: 'enforce' | 'unenforced';
      /** The policy text goes before the instruction. */
      policyInInstruction: boolean;
      /** The decision every proposal is recorded with (nothing decides before an agent's own call runs). */
      rule_id: string;
      reason: string;
    }
  | { supported: false; why: string };

const NO_HOOK = 'needs to see each proposal before it runs, and an installed agent runs its own tool calls with no hook before them';

export const INSTALLED_AGENT_DEFENSES: Readonly<Record<string, InstalledDefenseSupport>> = {
  none: { supported: true, execution: 'unenforced', policyInInstruction: false, rule_id: 'none/allow', reason: 'no defense: the agent runs its calls, traced' },
  'prompt-only': {
    supported: true,
    execution: 'unenforced',
    policyInInstruction: true,
    rule_id: 'prompt-only/allow',
    reason: 'guidance only: the policy text is prepended to the instruction, not enforced',
  },
  'tool-boundary': {
    supported: true,
    execution: 'enforce',
    policyInInstruction: false,
    rule_id: 'tool-boundary/kernel',
    reason: 'the kernel enforces the policy (plus the agent runtime grant and the relay port) around the whole agent process tree',
  },
  'structured-guard': { supported: false, why: `structured-guard decides per proposal before it runs: it ${NO_HOOK}` },
  'taint-only': { supported: false, why: `taint-only blocks tainted proposals before they run: it ${NO_HOOK}` },
  'intent-ledger': { supported: false, why: `intent-ledger checks each proposal against the ledger before it runs: it ${NO_HOOK}` },
  rollback: { supported: false, why: `rollback snapshots the workspace before each command: it ${NO_HOOK}` },
  'cross-agent-firewall': { supported: false, why: `cross-agent-firewall checks each proposal against the message its agent started from: it ${NO_HOOK}` },
};

/** The defenses an installed agent runs under, in table order. */
export function supportedAgentDefenses(): string[] {
  return Object.entries(INSTALLED_AGENT_DEFENSES).flatMap(([name, s]) => (s.supported ? [name] : []));
}

/** How the agent runs under `defense`; INVALID_ARGUMENT (exit 1) for a defense it cannot support. */
export function installedDefense(adapter: Pick<AgentAdapter, 'name'>, defense: string): Extract<InstalledDefenseSupport, { supported: true }> {
  const support = INSTALLED_AGENT_DEFENSES[defense];
  if (support === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `unknown defense ${JSON.stringify(defense)}`);
  if (!support.supported) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--agent ${adapter.name} cannot run under --defense ${defense}: ${support.why}`, {
      hint: `defenses an installed agent supports: ${supportedAgentDefenses().join(', ')}`,
    });
  }
  return support;
}
