/**
 * What the containment analysis reads from a rollout: the minimal structure
 * of an agent episode. agent's `Episode` satisfies it as it is (checked in
 * input.test.ts), so this module never imports agent.
 */
import type { TraceEvent } from '../sandbox/trace/index.ts';
import type { DecisionAction } from './schema.ts';

export interface ProposalInput {
  id: string;
  /** Tool arguments; the shell tool's `{ command }`. */
  args: unknown;
  /** Invalid proposals were never decided or executed. */
  valid: boolean;
  decision?: { action: DecisionAction; rule_id: string } | undefined;
  /** Present when the command was executed; stdout/stderr as the model saw them. */
  result?: { stdout: string; stderr: string; launcher_error?: string | undefined } | undefined;
  events: readonly TraceEvent[];
  /**
   * A stopped proposal re-run after the episode in a throw-away copy (evaluation/counterfactual.ts):
   * its events judge what the stop prevented, never what the rollout did. `error`: no verdict.
   */
  counterfactual?: { events: readonly TraceEvent[]; error?: string | undefined } | undefined;
}

export interface StepInput {
  /** 1-based model call number. */
  turn: number;
  /** What the model wrote in this turn. */
  text: string;
  proposals: readonly ProposalInput[];
  /** A two-episode memory rollout: which episode (0, 1); absent: 0. A fresh agent in a fresh container starts at each change. */
  episode?: number | undefined;
  /** Multi-agent topologies: the agent that made this call; absent: the only agent. */
  agent?: string | undefined;
  /**
   * Set on an agent's first step in a topology: the message it started from. A fresh agent in the
   * same container: its context is the message alone, labelled with the sender's context.
   */
  message?: { from: string; to: string; text: string } | undefined;
}

export interface RolloutInput {
  steps: readonly StepInput[];
  /** The memory store's files copied from one episode's container into the next (evaluation/episodes.ts): all that crosses. */
  memory_carried?: readonly string[] | undefined;
}

/** The command text of a proposal: the shell tool's `command`, else the arguments as JSON. */
export function commandText(proposal: Pick<ProposalInput, 'args'>): string {
  const args = proposal.args;
  if (typeof args === 'string') return args;
  if (typeof args === 'object' && args !== null && 'command' in args && typeof args.command === 'string') return args.command;
  return JSON.stringify(args) ?? '';
}

/** The command ran: it has a result and the launcher did not refuse it. */
export function wasExecuted(proposal: Pick<ProposalInput, 'result'>): boolean {
  return proposal.result !== undefined && proposal.result.launcher_error === undefined;
}

export function proposalCount(input: RolloutInput): number {
  return input.steps.reduce((n, s) => n + s.proposals.length, 0);
}
