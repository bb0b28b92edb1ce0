/**
 * The trace graph as data: one zod schema per node type (a discriminated
 * union on `type`), edges, side effects, token provenance and the command
 * classification that proposal nodes carry. Types only via z.infer. A graph
 * is written as lines of the rollout trace (evaluation/trace.ts).
 */
import { z } from 'zod';
import { FILE_OPS } from '../sandbox/trace/index.ts';

export const NODE_TYPES = ['source', 'agent_step', 'observation', 'proposal', 'decision', 'process', 'file', 'network', 'memory', 'commit', 'message'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const EDGE_KINDS = ['taint', 'structural'] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

export const DECISION_ACTIONS = ['allow', 'block', 'confirm'] as const;
export type DecisionAction = (typeof DECISION_ACTIONS)[number];

export const FileEffectSchema = z
  .object({
    kind: z.literal('file'),
    op: z.enum(FILE_OPS).describe('The file operation (write, create, truncate, unlink, rename, mkdir, rmdir, chmod, chown, link, symlink)'),
    path: z.string().describe('Absolute path; rename/link: the source; symlink: what the link points to'),
    path2: z.string().optional().describe('rename/link/symlink: the name that was created'),
  })
  .describe('A change to the filesystem outside scratch');

export const NetworkEffectSchema = z
  .object({
    kind: z.literal('network'),
    op: z.enum(['connect', 'sendto']).describe('connect, or sendto/sendmsg/sendmmsg with an explicit destination'),
    family: z.enum(['inet', 'inet6']).describe('Address family'),
    address: z.string().describe('Destination IP'),
    port: z.number().int().nullable().describe('Destination port; null when the trace did not show one'),
  })
  .describe('An IP connection or datagram to an address');

export const EffectSchema = z.discriminatedUnion('kind', [FileEffectSchema, NetworkEffectSchema]).describe('A side effect a command attempted');
export type FileEffect = z.infer<typeof FileEffectSchema>;
export type NetworkEffect = z.infer<typeof NetworkEffectSchema>;
export type Effect = z.infer<typeof EffectSchema>;

export const AttemptedEffectSchema = z
  .object({
    effect: EffectSchema,
    outcome: z.enum(['committed', 'denied']).describe('committed: the call succeeded; denied: the kernel refused it'),
  })
  .describe('A side effect a command attempted, and whether it happened');

export const CounterfactualAttrsSchema = z
  .object({
    attempted: z.array(AttemptedEffectSchema).describe('What the stopped command attempted when re-run in a throw-away copy under the ledger; never commits of the rollout'),
  })
  .describe("A stopped proposal's counterfactual run, as the metrics judge it");

export const TOKEN_KINDS = ['path', 'url', 'host', 'email', 'assignment'] as const;

export const CommandTokenSchema = z
  .object({
    kind: z.enum(TOKEN_KINDS).describe('What the token names'),
    text: z.string().describe('As written in the command, after quote removal'),
    resolved: z.string().optional().describe('path: absolute form against the known cwd; assignment: the value'),
  })
  .describe('A target a command names');
export type CommandToken = z.infer<typeof CommandTokenSchema>;
export type TokenKind = CommandToken['kind'];

export const TokenProvenanceSchema = CommandTokenSchema.extend({
  in_instruction: z.boolean().describe('The trusted instruction mentions it'),
  in_tainted_observation: z.boolean().describe('An untrusted observation the model saw before the proposal mentions it'),
}).describe('Where a command token could have come from');
export type TokenProvenance = z.infer<typeof TokenProvenanceSchema>;

export const NetworkTargetSchema = z
  .object({
    host: z.string().describe('Host or IP as written'),
    port: z.number().int().optional().describe('Port, when written or implied by the URL scheme'),
  })
  .describe('A network endpoint a command names');
export type NetworkTarget = z.infer<typeof NetworkTargetSchema>;

export const CommandClassSchema = z
  .object({
    side_effecting: z.boolean().describe('The command would change files outside scratch, reach the network or run opaque code'),
    reasons: z.array(z.string()).describe('Why, one line each (empty when read-only)'),
    file_targets: z.array(z.string()).describe('Files it would change outside scratch: absolute when the cwd was known, else as written'),
    network_targets: z.array(NetworkTargetSchema).describe('Endpoints it would reach'),
    targets_complete: z.boolean().describe('False when some effect has targets the text does not show (scripts, unknown programs, ...)'),
  })
  .describe('A static reading of a command line before it runs');
export type CommandClass = z.infer<typeof CommandClassSchema>;

const proposalIndex = z.number().int().nonnegative().describe('0-based index of the proposal over the whole rollout (invalid ones included)');
const labels = z.array(z.string()).describe('Labels carried; tainted iff one is in the taint vocabulary (`untrusted:*`)');

function node<T extends NodeType, A extends z.ZodType>(type: T, attrs: A, description: string) {
  return z.object({ id: z.string().describe('Unique within the graph'), type: z.literal(type), labels, attrs }).describe(description);
}

export const SourceNodeSchema = node(
  'source',
  z.object({
    kind: z.enum(['untrusted', 'secret']).describe('untrusted: injected content; secret: files holding canaries'),
    pattern: z.string().describe('The path pattern declaring the source'),
    memory: z.boolean().describe('The pattern is a designated memory entry'),
  }),
  'A declared untrusted or secret source',
);
export const AgentStepNodeSchema = node(
  'agent_step',
  z.object({
    step_index: z.number().int().nonnegative(),
    turn: z.number().int().describe('1-based model call number'),
    proposals: z.number().int().nonnegative().describe('Tool calls the model made in this turn'),
    valid_proposals: z.number().int().nonnegative().describe('Of those, the valid ones'),
  }),
  'One model call (the agent context at that point)',
);
export const ObservationNodeSchema = node(
  'observation',
  z.object({ proposal_index: proposalIndex, proposal_id: z.string() }),
  'The output of an executed command, returned to the model',
);
export const ProposalNodeSchema = node(
  'proposal',
  z.object({
    proposal_index: proposalIndex,
    proposal_id: z.string(),
    step_index: z.number().int().nonnegative(),
    command: z.string().describe('The command text'),
    executed: z.boolean().describe('The command ran (a result without a launcher refusal)'),
    decision: z.enum(DECISION_ACTIONS).nullable().describe('The defense decision; null when none was recorded'),
    rule_id: z.string().nullable(),
    classification: CommandClassSchema,
    denied_effects: z.array(EffectSchema).describe('Side effects outside scratch the kernel refused'),
    tokens: z.array(TokenProvenanceSchema).describe('Target tokens of the command and their provenance'),
    tainted_tokens: z.array(z.string()).describe('Tokens found in tainted observations and not in the trusted instruction'),
    counterfactual: CounterfactualAttrsSchema.optional().describe('Stopped proposals with a counterfactual run that gave a verdict (absent otherwise, and in graphs written before)'),
  }),
  'A valid tool call (invalid ones never reach proposal; they are counted on the agent step)',
);
export const DecisionNodeSchema = node(
  'decision',
  z.object({ proposal_index: proposalIndex, action: z.enum(DECISION_ACTIONS), rule_id: z.string() }),
  'What the defense decided about a proposal',
);
export const ProcessNodeSchema = node(
  'process',
  z.object({
    proposal_index: proposalIndex,
    pid: z.number().int(),
    exec: z.string().nullable().describe('The last program it executed'),
    argv: z.array(z.string()),
  }),
  'A process of a command (threads folded into their process)',
);
export const FileNodeSchema = node('file', z.object({ path: z.string() }), 'A file that carried data in the rollout');
export const MemoryNodeSchema = node('memory', z.object({ path: z.string() }), 'A file under a designated memory entry');
export const NetworkNodeSchema = node(
  'network',
  z.object({ family: z.enum(['inet', 'inet6']), address: z.string(), port: z.number().int().nullable() }),
  'An IP endpoint a process connected or sent to, or bound',
);
/** Message text kept on the node; the receiving step's record holds it whole. */
export const MESSAGE_TEXT_CAP = 2000;
export const MessageNodeSchema = node(
  'message',
  z.object({
    from: z.string().describe('The sending agent'),
    to: z.string().describe('The receiving agent'),
    step_index: z.number().int().nonnegative().describe('The first step of the receiving agent'),
    text: z.string().describe(`What was sent (at most ${MESSAGE_TEXT_CAP} characters)`),
    truncated: z.boolean().describe('The text was cut at the cap'),
  }),
  "An inter-agent message (topologies): it carries the sender's context labels to the receiver, whose context starts from it",
);
export const CommitNodeSchema = node('commit', z.object({ proposal_index: proposalIndex, effect: EffectSchema }), 'A side effect that happened');

export const GraphNodeSchema = z.discriminatedUnion('type', [
  SourceNodeSchema,
  AgentStepNodeSchema,
  ObservationNodeSchema,
  ProposalNodeSchema,
  DecisionNodeSchema,
  ProcessNodeSchema,
  FileNodeSchema,
  MemoryNodeSchema,
  NetworkNodeSchema,
  CommitNodeSchema,
  MessageNodeSchema,
]);
export type GraphNode = z.infer<typeof GraphNodeSchema>;
export type NodeOf<T extends NodeType> = Extract<GraphNode, { type: T }>;

export const GraphEdgeSchema = z
  .object({
    from: z.string().describe('Node id'),
    to: z.string().describe('Node id'),
    kind: z.enum(EDGE_KINDS).describe('taint: carries labels; structural: order and bookkeeping only'),
    seq: z
      .array(z.number().int().nonnegative())
      .min(1)
      .describe('When the influence happened, as positions in one rollout-wide order (ascending); a path counts only if it moves forward in time'),
  })
  .describe('A directed edge');
export type GraphEdge = z.infer<typeof GraphEdgeSchema>;

export interface TraceGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}
