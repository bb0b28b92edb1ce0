import type { Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { PolicyMode } from '../../sandbox/run/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { Decision, Proposal } from '../schema.ts';
import type { ShellArgs } from '../tools.ts';

/** What a defense may look at. Later defenses (taint, ledger, rollback) read `history` and `container`. */
export interface DefenseContext {
  task: Task;
  /** The authorization policy of the run; absent when the run has none (e.g. defense none). */
  policy: Policy | undefined;
  /** Runtime grants every command needs (loader, locale, ...), added to the policy when enforcing. */
  implicit: PatternSet;
  /** 1-based turn of the proposal being decided. */
  turn: number;
  /** Proposals already handled in this episode, in order, with their results. */
  history: readonly Proposal[];
  container: Container | undefined;
}

/** A valid proposal as a defense sees it. */
export interface ProposalView {
  id: string;
  tool: 'shell';
  args: ShellArgs;
}

/**
 * A runtime defense: what it adds to the prompt, how allowed commands run, and
 * a decision per proposal before anything runs. `name`/`version` go into every
 * episode so results from different defense revisions never pool silently.
 */
export interface Defense {
  readonly name: string;
  readonly version: string;
  /** Extra system-prompt text; undefined adds nothing. */
  guidance(context: DefenseContext): string | undefined;
  /** How an allowed command is executed. */
  execution(context: DefenseContext): PolicyMode;
  decide(proposal: ProposalView, context: DefenseContext): Decision | Promise<Decision>;
}
