/**
 * The data the trace viewer draws, one entry per rollout: built in Node by
 * trace-view.ts, inlined into report.html as JSON, read in the browser by
 * viewer.js. Types only and no imports, so the browser script's own
 * type-check (tsconfig.json here, with the DOM) reads it without Node's.
 */

export interface SyscallView {
  text: string;
  denied: boolean;
  /** exec | file | network | process | seccomp | unparsed: how the viewer colours it. */
  kind: string;
}

export interface ProposalView {
  index: number;
  turn: number;
  id: string;
  command: string;
  valid: boolean;
  invalid_reason: string | null;
  decision: { action: string; rule_id: string; reason: string } | null;
  /** What happened: executed, blocked, invalid, refused by the launcher, or skipped (why). */
  outcome: string;
  exit_code: number | null;
  output: string;
  tainted: boolean;
  tainted_tokens: string[];
  side_effecting: boolean | null;
  /** Multi-agent rollouts: the agent that proposed it (supervisor, worker, peer-1…); null for one agent. */
  agent: string | null;
  processes: { exec: string; argv: string; tainted: boolean }[];
  syscalls: SyscallView[];
  syscalls_total: number;
  syscalls_hidden: number;
  commits: { text: string; tainted: boolean; secret: boolean }[];
  denied_effects: string[];
}

export interface TraceMeta {
  rollout_id: string;
  job: string;
  task_id: string;
  stage: string;
  model: string;
  defense: string;
  seed: number;
  status: string;
  /** How the rollout ended (completed, sandbox_tampered, …). */
  outcome: string;
  utility_success: boolean | null;
  attack_success: boolean | null;
  committed_harm: number | null;
  end_reason: string | null;
  /** Utility tests that did not pass (full output in the rollout's verifier/ folder). */
  failed_tests: string[];
  /** Evidence of tampering, one line each. */
  tampering: string[];
  /** Multi-agent rollouts: supervisor-worker or peer-chain; null for one agent. */
  topology: string | null;
}

export interface TraceView extends TraceMeta {
  /** False when the rollout wrote no trace, or when the report's rollout cap left it out. */
  available: boolean;
  note: string | null;
  sources: { kind: string; pattern: string }[];
  messages: { turn: number; text: string }[];
  /** Messages between the agents of a topology, in order; tainted when the sender's context was. */
  agent_messages: { from: string; to: string; text: string; tainted: boolean }[];
  proposals: ProposalView[];
  tainted_files: string[];
  caps: { proposals_total: number; proposals_shown: number; tainted_files_total: number; text_chars: number; syscalls_per_proposal: number };
}

/** One plot as the page carries it: the container's id suffix and the Vega-Lite spec. */
export interface PagePlot {
  id: string;
  spec: unknown;
}

/** The ids of the page's JSON data elements: html.ts writes them, viewer.js reads them. */
export type PageDataId = 'report-plots' | 'report-traces';
