/**
 * The taint state a defense decides on, from containment's syscall-level
 * analysis of the episode so far: the rollout as the defense context holds it,
 * with the proposal being decided appended to the current turn. The taint
 * configuration is containment's `rolloutTaintConfig`, the one measurement uses.
 */
import {
  rolloutTaintConfig,
  taintAt,
  type ProposalInput,
  type ProposalTaint,
  type RolloutInput,
  type StepInput,
  type TaintConfig,
} from '../../containment/index.ts';
import type { DefenseContext, ProposalView } from './types.ts';

/** The episode so far with `next` appended to the current turn, and the 0-based index `next` gets. Pure. */
export function rolloutWith(context: Pick<DefenseContext, 'steps' | 'turn'>, next: ProposalInput): { input: RolloutInput; index: number } {
  const steps: StepInput[] = context.steps.map((s) => ({ turn: s.turn, text: s.text, proposals: [...s.proposals], agent: s.agent, message: s.message }));
  const last = steps.at(-1);
  if (last === undefined || last.turn !== context.turn) steps.push({ turn: context.turn, text: '', proposals: [next] });
  else steps[steps.length - 1] = { ...last, proposals: [...last.proposals, next] };
  const index = steps.reduce((n, s) => n + s.proposals.length, 0) - 1;
  return { input: { steps }, index };
}

/** The proposal as containment reads it before it ran: no decision, result or events. */
function pending(proposal: Pick<ProposalView, 'id' | 'args'>): ProposalInput {
  return { id: proposal.id, args: proposal.args, valid: true, events: [] };
}

/** Taint of the context and token provenance of `proposal`, as they are when it is decided. */
export function proposalTaint(proposal: ProposalView, context: DefenseContext, config: TaintConfig = rolloutTaintConfig(context.task)): ProposalTaint {
  const { input, index } = rolloutWith(context, pending(proposal));
  return taintAt(input, index, config);
}

/** Does the model's context carry untrusted content (the label every proposal of this turn gets)? */
export function contextTainted(context: DefenseContext, config: TaintConfig = rolloutTaintConfig(context.task)): boolean {
  if (context.steps.length === 0) return false;
  return proposalTaint({ id: '(context)', tool: 'shell', args: { command: 'true' } }, context, config).tainted;
}
