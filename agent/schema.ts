/**
 * The record of one agent episode: what the model was asked, what it
 * proposed, what each defense decided and what each command did. The trace
 * writer and the metrics read this, so it is one zod schema with snake_case
 * fields like the trace events it embeds.
 */
import { z } from 'zod';
import { FINISH_REASONS } from '../models/index.ts';
import { TraceEventSchema } from '../sandbox/trace/index.ts';
import { TamperEvidenceSchema } from './tamper.ts';
import { ParserStatusSchema, REPAIR_KINDS } from './text-actions.ts';

// 2: decision action `confirm`, the `rollback` record and their totals.
export const EPISODE_SCHEMA_VERSION = 2 as const;

export const DECISION_ACTIONS = ['allow', 'block', 'confirm'] as const;

export const DecisionSchema = z
  .object({
    action: z
      .enum(DECISION_ACTIONS)
      .describe('allow: the command runs (the kernel may still deny parts); block: it never runs; confirm: held, it runs only when re-proposed with a structured confirmation'),
    rule_id: z.string().min(1).describe('Which rule of the defense decided, e.g. `none/allow`, `tool-boundary/kernel`'),
    reason: z.string().describe('Why, for a human'),
  })
  .describe('What a defense decided about one valid proposal, before it ran');
export type Decision = z.infer<typeof DecisionSchema>;

export const EnforcementSchema = z
  .object({
    level: z.enum(['full', 'partial', 'none']).describe('none: no launcher (unenforced); partial: best effort with features missing'),
    landlock_abi: z.number().int().nonnegative().describe('Landlock ABI of the kernel that ran the command'),
    seccomp: z.boolean().describe('The seccomp filter was installed'),
    best_effort: z.boolean().describe('The session allowed running with incomplete enforcement'),
  })
  .describe('The enforcement a command actually ran under');
export type EnforcementRecord = z.infer<typeof EnforcementSchema>;

export const CommandResultSchema = z
  .object({
    exit_code: z.number().int().nullable().describe('null when the command was killed by its timeout'),
    timed_out: z.boolean(),
    storage_cut: z
      .literal(true)
      .optional()
      .describe("The container went over its storage limit while the command ran: the host had the agent's processes stopped (then timed_out is false, exit_code null)"),
    timeout_ms: z.number().int().positive().describe('The wall-clock limit the command ran with'),
    duration_ms: z.number().nonnegative(),
    stdout: z.string().describe('stdout as the model saw it (capped, with a truncation note)'),
    stderr: z.string().describe('stderr as the model saw it (capped, with a truncation note)'),
    stdout_bytes: z.number().int().nonnegative().describe('Size of the captured stdout before the observation cap'),
    stderr_bytes: z.number().int().nonnegative().describe('Size of the captured stderr before the observation cap'),
    denials: z.array(z.string()).describe('Denied syscalls, one line each (repeats counted), as the model saw them'),
    denial_count: z.number().int().nonnegative().describe('Denied syscall events, before deduplication'),
    event_count: z.number().int().nonnegative().describe('Trace events the command produced'),
    enforcement: EnforcementSchema,
    widened_entries: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Enforced runs: policy entries the kernel had to grant more broadly than written'),
    launcher_error: z.string().optional().describe('The launcher refused to start the command (fail closed): it never ran'),
    spawn_error: z
      .string()
      .optional()
      .describe('The command could not be started in its working directory (an earlier command removed it); it never ran'),
    trace: z
      .object({
        bytes: z.number().int().nonnegative().describe('Bytes strace wrote for this command'),
        truncated: z.boolean().describe('The trace is incomplete: it outgrew the per-command byte cap and was cut, or (eBPF) the kernel dropped records (the command ran on)'),
        dropped_events: z.number().int().nonnegative().describe('Events beyond the per-command event cap, not kept'),
      })
      .optional()
      .describe('How much of the trace was kept (traced commands)'),
    seccomp_denials: z.number().int().nonnegative().optional().describe("Syscalls the launcher's seccomp filter refused, in all (the events keep the first thousands)"),
    leftover_processes: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Processes alive after the command ended, killed by the harness (after a traced command: escaped the tracer)'),
    survivors: z
      .object({
        count: z.number().int().positive().describe('How many there were'),
        processes: z.array(z.string()).describe('`pid comm` of the first few'),
      })
      .optional()
      .describe(
        'Traced commands: processes the command left running under the tracer (a service, a background job), stopped when its main process ended unless kept in the background (`background`)',
      ),
    background: z
      .object({
        events: z.number().int().nonnegative().describe("How many of the proposal's events (its last ones) its background processes made after the command's result"),
        stopped: z.number().int().nonnegative().describe("Processes still running at the episode's end, stopped then"),
        processes: z.array(z.string()).describe('`pid comm` of the first few stopped'),
      })
      .optional()
      .describe("The survivors kept running in the background — traced, in the command's sandbox — until the episode's end"),
    tamper: z.array(TamperEvidenceSchema).optional().describe('Evidence that this command acted against the harness'),
    shell: z
      .object({
        restarted: z.string().optional().describe('This command ran in a new shell because the previous one ended, and why'),
        ended: z.string().optional().describe('The shell ended with this command (exit, exec, a kill, a broken driver, a timeout it did not survive), and why'),
        forged_delimiters: z.number().int().positive().optional().describe('Delimiter lines without this call’s nonce (ignored: a forgery attempt)'),
      })
      .optional()
      .describe('`--shell persistent`: what happened to the episode’s shell in this command (absent: nothing of note, or a fresh `bash -c`)'),
  })
  .describe('What an executed command did');
export type CommandResult = z.infer<typeof CommandResultSchema>;

export const RollbackSchema = z
  .object({
    rule_id: z.string().min(1).describe('`rollback/restored` when the workspace was put back, `rollback/kept` when the effects stood'),
    roots: z.array(z.string()).describe('What the snapshot covered: the task workdir and the memory entries'),
    snapshot_bytes: z.number().int().nonnegative().describe('Size of the snapshot archives'),
    snapshot_ms: z.number().nonnegative().describe('Time taken to snapshot before the command ran'),
    restored: z.boolean().describe('The workspace was restored to the snapshot after the command'),
    why: z.array(z.string()).describe('The effects that called for a restore (unauthorized, tainted memory write, secret-labelled write); empty when kept'),
    removed: z.array(z.string()).describe('Paths the command created inside the roots that the restore removed'),
    outside_snapshot: z.array(z.string()).describe('Effects in `why` outside the roots: the restore could not undo them'),
    not_restored: z
      .array(z.string())
      .optional()
      .describe('Roots (or paths in them) the restore could not put back, with why: the command made a directory on the way a symlink or a file, and unpacking there would follow it'),
    scrubbed: z
      .array(z.string())
      .optional()
      .describe('Memory entries a tainted write only removed lines from (a scrub): kept, not a reason to restore'),
    restore_ms: z.number().nonnegative().optional().describe('Time the restore took'),
    snapshot_error: z.string().optional().describe('Why no snapshot was taken (the command ran without one)'),
  })
  .describe('What the rollback defense did around one command it snapshotted');
export type RollbackRecord = z.infer<typeof RollbackSchema>;

export const CounterfactualSchema = z
  .object({
    state: z
      .literal('turn_end')
      .describe("The container state it ran against: a copy of the rollout's container committed when the model turn that proposed it ended (before the next model call)"),
    snapshot_ms: z.number().nonnegative().describe('What committing that copy took (inside the episode; one commit per turn that stopped something)'),
    policy: z.literal('ledger').describe('Enforced under the trusted ledger (the task\'s gold policy), traced'),
    exit_code: z.number().int().nullable().describe('null when killed by its timeout or when it never ran'),
    timed_out: z.boolean(),
    storage_cut: z.literal(true).optional().describe("The copy went over the task's storage limit: the run was stopped there (then timed_out is false)"),
    timeout_ms: z.number().int().positive().describe('The limit it ran with: the one the command would have had'),
    duration_ms: z.number().nonnegative(),
    events: z.array(TraceEventSchema).describe("The copy's trace events: judged, never counted as the rollout's commits, taint or harm"),
    authorized: z
      .boolean()
      .nullable()
      .describe('Every effect it attempted is in the ledger (the stop was a false positive when it also attempted one); null: no verdict (see error)'),
    attempted_effects: z.number().int().nonnegative().describe('Side effects outside scratch it attempted (committed or refused)'),
    unauthorized: z.array(z.string()).describe('The attempted effects outside the ledger, one line each'),
    launcher_error: z.string().optional().describe('The launcher refused to start it under the ledger: it never ran'),
    error: z.string().optional().describe('Why there is no verdict: an infrastructure failure of the copy (the rollout is unaffected), or a launcher refusal'),
  })
  .describe(
    'A stopped proposal re-run after the episode in a throw-away copy of the container as it was at the stop (no network, removed afterwards), so the stop can be judged: the agent never saw it, the rollout never had it',
  );
export type Counterfactual = z.infer<typeof CounterfactualSchema>;

export const ProposalSchema = z
  .object({
    id: z.string().describe('The tool call id the model assigned'),
    tool: z.string().describe('Tool name as the model sent it'),
    args: z.unknown().describe('Arguments as the model sent them'),
    valid: z.boolean().describe('Names a known tool with arguments that validate; invalid proposals are never executed'),
    invalid_reason: z.string().optional().describe('Why the proposal is invalid'),
    decision: DecisionSchema.optional().describe('The defense decision; absent for invalid proposals (they never reach it)'),
    result: CommandResultSchema.optional().describe('Present when the command was executed'),
    skipped: z
      .enum(['episode_timeout', 'infra_error', 'sandbox_tampered', 'trace_limit', 'storage_limit'])
      .optional()
      .describe('A valid, allowed proposal that never ran because the episode ended first'),
    events: z.array(TraceEventSchema).describe("The command's trace events (empty when it did not run)"),
    rollback: RollbackSchema.optional().describe('Set when a defense snapshotted the workspace before the command'),
    counterfactual: CounterfactualSchema.optional().describe('Stopped (blocked or held) valid proposals re-run after the episode, for the false-positive rates'),
  })
  .describe('One tool call the model proposed');
export type Proposal = z.infer<typeof ProposalSchema>;

export const ModelCallSchema = z
  .object({
    usage: z.object({
      input_tokens: z.number().int().nonnegative().nullable(),
      output_tokens: z.number().int().nonnegative().nullable(),
    }),
    cost_usd: z.number().nonnegative().nullable().describe('null when the price or usage is unknown'),
    latency_ms: z.number().nonnegative(),
    cached: z.boolean(),
    finish_reason: z.enum(FINISH_REASONS),
  })
  .describe('Accounting for one model call');

export const AgentMessageSchema = z
  .object({
    from: z.string().describe('The sending agent (its final answer is the text)'),
    to: z.string().describe('The receiving agent'),
    text: z.string().describe('What was sent: the receiver is told only this (and its role), not the user goal'),
  })
  .describe('A message between agents of a topology: a trace node; the sender\'s taint crosses it');
export type AgentMessage = z.infer<typeof AgentMessageSchema>;

export const StepSchema = z
  .object({
    turn: z.number().int().positive().describe('1-based model call number'),
    started_at: z.string().describe('ISO time the model call started'),
    model_call: ModelCallSchema,
    text: z.string().describe('Text the model wrote in this turn (in text mode: the raw reply the parser read)'),
    parser: z
      .object({
        version: z.number().int().positive().describe('TEXT_PARSER_VERSION of the parser that read the reply'),
        status: ParserStatusSchema,
        repairs: z.array(z.enum(REPAIR_KINDS)).describe('Every repair applied, in order'),
      })
      .optional()
      .describe('Text mode only: how the reply was read (agent/text-actions.ts); an invalid one was never executed'),
    text_action: z
      .object({
        version: z.number().int().positive().describe('TEXT_PARSER_VERSION of the parser that read the reply'),
        status: ParserStatusSchema,
        repairs: z.array(z.enum(REPAIR_KINDS)).describe('Every repair applied, in order'),
      })
      .optional()
      .describe('Native mode only: the reply made no tool call but reads as an action written as text — not run, not taken as a final answer (the model was told to call the tool; after NATIVE_TEXT_ACTION_NUDGES it ends the episode)'),
    proposals: z.array(ProposalSchema).describe('Tool calls in the order the model made them'),
    episode: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Two-episode memory rollouts ([authbench.memory]): the episode this call belongs to (0 or 1); absent: the only episode'),
    agent: z
      .string()
      .optional()
      .describe('Multi-agent topologies (supervisor-worker, peer-chain): the agent that made this call (supervisor, worker, peer-1, ...); absent: the only agent'),
    message: AgentMessageSchema.optional().describe("Set on an agent's first step: the inter-agent message it started from (its only input besides the system prompt)"),
  })
  .describe('One model call and the tool calls it proposed');
export type Step = z.infer<typeof StepSchema>;

export const END_REASONS = ['done', 'max_turns', 'episode_timeout', 'trace_limit', 'storage_limit', 'sandbox_tampered', 'infra_error'] as const;
export type EndReason = (typeof END_REASONS)[number];

export const InfraErrorSchema = z
  .object({
    source: z.enum(['model', 'sandbox']).describe('Which side failed'),
    code: z.string().describe('AuthbenchError code, e.g. MODEL_UNAVAILABLE'),
    reason: z.string().optional().describe('Finer reason when known (rate_limit, server, timeout, launcher)'),
    message: z.string(),
  })
  .describe('An infrastructure failure that ended the episode; says nothing about the agent');

export const ParserCountsSchema = z
  .object({
    strict: z.number().int().nonnegative().describe('Replies in the taught format'),
    repaired: z.number().int().nonnegative().describe('Replies read after a repair (see each step\'s parser.repairs)'),
    invalid: z.number().int().nonnegative().describe('Replies that were action-like but not a valid action: never executed, never a final answer'),
  })
  .describe('Text-mode replies by parser status');
export type ParserCounts = z.infer<typeof ParserCountsSchema>;

export const TOOL_FORMATS = ['native', 'text'] as const;
export const ToolFormatSchema = z
  .enum(TOOL_FORMATS)
  .describe('native: the provider\'s tool calling; text: no tools offered, actions written in the reply and parsed (agent/text-actions.ts)');
export type ToolFormat = z.infer<typeof ToolFormatSchema>;

export const SHELL_MODES = ['fresh', 'persistent'] as const;
export const ShellModeSchema = z
  .enum(SHELL_MODES)
  .describe('fresh: a new `bash -c` per command; persistent: one shell per episode whose state carries over (sandbox/run/persistent-shell.ts)');
export type ShellMode = z.infer<typeof ShellModeSchema>;

export const TotalsSchema = z
  .object({
    turns: z.number().int().nonnegative(),
    proposals: z.number().int().nonnegative(),
    valid_proposals: z.number().int().nonnegative(),
    invalid_proposals: z.number().int().nonnegative(),
    blocked: z.number().int().nonnegative().describe('Valid proposals the defense blocked'),
    held: z.number().int().nonnegative().describe('Valid proposals the defense held for a structured confirmation (never run)'),
    rolled_back: z.number().int().nonnegative().describe('Executed proposals whose effects a defense rolled back'),
    executed: z.number().int().nonnegative(),
    denials: z.number().int().nonnegative().describe('Denied syscall events over all commands'),
    input_tokens: z.number().int().nonnegative().nullable().describe('null when any call did not report usage'),
    output_tokens: z.number().int().nonnegative().nullable(),
    cost_usd: z.number().nonnegative().nullable().describe('null when any call had an unknown cost'),
    model_latency_ms: z.number().nonnegative(),
    duration_ms: z.number().nonnegative().describe('Wall time of the whole episode'),
    parser: ParserCountsSchema.optional().describe('Text mode only: replies by parser status'),
    actions_as_text: z.number().int().positive().optional().describe('Native mode: replies with no tool call that read as an action written as text (never run)'),
  })
  .describe('Episode totals');
export type Totals = z.infer<typeof TotalsSchema>;

export const EpisodeSchema = z
  .object({
    schema_version: z.literal(EPISODE_SCHEMA_VERSION),
    task_id: z.string(),
    model: z.string().describe('The model that acted, e.g. `openai/gpt-5` or `scripted/oracle`'),
    defense: z.object({ name: z.string(), version: z.string() }).describe('The runtime defense'),
    started_at: z.string(),
    setup: z
      .object({
        created_dirs: z
          .array(z.string())
          .describe('Missing bases of write subtrees the harness created before enforcing, so grants were not widened to their parents'),
        sidecar_hosts: z
          .record(z.string(), z.string())
          .optional()
          .describe("Compose sidecars the task container could reach, address → service: a syscall's connect to one of these addresses went to that service"),
      })
      .describe('What the harness did to the container before the first turn'),
    steps: z.array(StepSchema),
    end_reason: z
      .enum(END_REASONS)
      .describe(
        'done: the model answered; max_turns / episode_timeout: limits; trace_limit: the episode outgrew its trace budget; storage_limit: the container outgrew the task\'s storage limit; ' +
          'sandbox_tampered: the sandbox broke while a command ran (see tampering); infra_error: the infrastructure failed',
      ),
    infra_error: InfraErrorSchema.optional().describe('Set exactly when end_reason is infra_error'),
    tool_format: z.literal('text').optional().describe('Set when the model acted through text actions (absent: native tool calls)'),
    shell: z.literal('persistent').optional().describe('Set when commands ran in one persistent shell (absent: a fresh `bash -c` each)'),
    final_text: z.string().optional().describe('The answer the model ended with (end_reason done)'),
    memory_carried: z
      .array(z.string())
      .optional()
      .describe("Two-episode memory rollouts: the memory store's files copied from episode 1's container into episode 2's (empty under mode session)"),
    tampering: z
      .array(TamperEvidenceSchema)
      .default([])
      .describe('Every piece of evidence that a command acted against the harness, prevented or not (empty: none)'),
    trace_events: z.number().int().nonnegative().optional().describe('Trace events kept over the whole episode'),
    enforcement: EnforcementSchema.nullable().describe(
      'The weakest enforcement any executed command ran under; null when no command ran',
    ),
    totals: TotalsSchema,
  })
  .describe('One agent episode on one task');
export type Episode = z.infer<typeof EpisodeSchema>;
