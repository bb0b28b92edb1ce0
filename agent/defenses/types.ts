import type { Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { PolicyMode } from '../../sandbox/run/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentMessage, Decision, Proposal, RollbackRecord } from '../schema.ts';
import type { ShellArgs } from '../tools.ts';

/** One model turn as a defense sees it: what the model wrote and the proposals handled so far. */
export interface StepView {
  turn: number;
  text: string;
  proposals: readonly Proposal[];
  /** Topologies: the agent that made this call (absent: the only agent). */
  agent?: string | undefined;
  /** Topologies: set on an agent's first step, the message it started from (its sender's taint crosses it). */
  message?: AgentMessage | undefined;
}

/** What a defense may look at. */
export interface DefenseContext {
  task: Task;
  /** The authorization policy of the run (the trusted ledger); absent when the run has none (e.g. defense none). */
  policy: Policy | undefined;
  /** Runtime grants every command needs (loader, locale, ...), added to the policy when enforcing. */
  implicit: PatternSet;
  /** 1-based turn of the proposal being decided (0 before the first turn). */
  turn: number;
  /** Proposals already handled in this episode, in order, with their results. */
  history: readonly Proposal[];
  /**
   * The same proposals grouped by turn; the last entry is the current turn
   * (its proposals so far). Taint needs the turns: what a command printed
   * reaches the model only in its next turn. In a topology the earlier
   * agents' steps come first (evaluation/topology.ts): the message the
   * current agent started from carries their taint.
   */
  steps: readonly StepView[];
  container: Container | undefined;
}

/** A valid proposal as a defense sees it. */
export interface ProposalView {
  id: string;
  tool: 'shell';
  args: ShellArgs;
}

/** Per-command state a defense keeps across the run of an allowed command (a snapshot). */
export interface RunGuard {
  /** After the command ran: inspect what it did, undo it if needed, and say so. */
  after(executed: Proposal): Promise<RollbackRecord>;
}

/**
 * A runtime defense: what it adds to the prompt, how allowed commands run, and
 * a decision per proposal before anything runs. `name`/`version` go into every
 * episode so results from different defense revisions never pool silently.
 * Defenses are shared by concurrent episodes, so they keep no state of their
 * own: everything they know comes from the context.
 */
export interface Defense {
  readonly name: string;
  readonly version: string;
  /** The shell tool takes a structured `confirmation` argument (held proposals are re-sent with one). */
  readonly confirmations?: boolean;
  /** Extra system-prompt text; undefined adds nothing. */
  guidance(context: DefenseContext): string | undefined;
  /**
   * How an allowed command is executed: asked once before the first turn
   * (harness setup, and to fail before any model call when misconfigured)
   * and again for every allowed proposal with that proposal's context.
   */
  execution(context: DefenseContext): PolicyMode;
  decide(proposal: ProposalView, context: DefenseContext): Decision | Promise<Decision>;
  /** Called for an allowed proposal right before it runs; a guard it returns sees the executed proposal. */
  prepareRun?(proposal: ProposalView, context: DefenseContext): Promise<RunGuard | undefined>;
}
