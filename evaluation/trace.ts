/**
 * The rollout trace, `trace.jsonl.gz` in each rollout folder: one JSON object
 * per line, `type` and `schema_version` on every line, one zod schema per line
 * type. The rollout writes it once; the report, the reproduction script and
 * the adversarial suite read it through this module. It is the only record of
 * the episode: the episode's own fields open (`rollout`) and close
 * (`episode_end`) it, and its steps, proposals and each command's syscall
 * events are lines in between.
 *
 * Order: `rollout`; per model call an `agent_step`, then each of its
 * `proposal`s, each followed by its command's `syscall` lines (so events join
 * their proposal by position, checked against `command_id` — the model picks
 * ids and may repeat one); `episode_end`; an installed agent's rollout then has
 * one `relay_exchange` line per exchange with the model relay; then, when the
 * rollout was measured, the trace graph as `graph_node` lines and `graph_edge` lines.
 */
import { promisify } from 'node:util';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { gunzip, gzip } from 'node:zlib';
import { z } from 'zod';
import { CommandResultSchema, EPISODE_SCHEMA_VERSION, EpisodeSchema, ProposalSchema, StepSchema, type Episode, type Proposal, type Step } from '../agent/index.ts';
import { GraphEdgeSchema, GraphNodeSchema, NODE_TYPES, type TraceGraph } from '../containment/index.ts';
import { RelayRecordSchema, type RelayRecord } from '../agents/index.ts';
import { AuthbenchError, formatProblem, writeFileAtomic, zodProblems } from '../core/index.ts';

// 3: version 2 plus `relay_exchange` lines (an installed agent's rollout). Written only when there are
//    some: every other trace is still written as version 2, byte for byte what it was.
// 2: the episode's own fields on the rollout and episode_end lines (episode.json is gone: the trace is the
//    only copy); graph lines carry the node or edge whole and the trace's version.
// 1: the first format. Still read (jobs written before 2 stay reportable): its steps and graph, not its
//    episode, whose head and tail fields were in episode.json.
export const TRACE_SCHEMA_VERSION = 3 as const;
/** The version of a trace without relay lines (the built-in loop's). */
export const BASE_TRACE_VERSION = 2 as const;
export const READABLE_TRACE_VERSIONS = [1, BASE_TRACE_VERSION, TRACE_SCHEMA_VERSION] as const;

export const TRACE_FILE = 'trace.jsonl.gz';

const version = z.union([z.literal(BASE_TRACE_VERSION), z.literal(TRACE_SCHEMA_VERSION)]).describe('Version of the trace format; the same on every line of a file');

/** Episode fields on the `rollout` line; every other field but `steps` is on `episode_end`. */
const HEAD = { task_id: true, model: true, defense: true, started_at: true, setup: true } as const;
const NOT_TAIL = { ...HEAD, schema_version: true, steps: true } as const;

const rolloutId = z.string().min(1).describe('The rollout (its folder name in the job)');

export const RolloutLineSchema = z
  .object({ type: z.literal('rollout'), schema_version: version, rollout_id: rolloutId, ...EpisodeSchema.pick(HEAD).shape })
  .describe('The first line: which rollout, and the episode fields known before the first model call');

const stepShape = StepSchema.omit({ proposals: true }).shape;
export const AgentStepLineSchema = z
  .object({ type: z.literal('agent_step'), schema_version: version, ...stepShape })
  .describe('One model call; its proposals follow');

const proposalShape = { turn: StepSchema.shape.turn.describe('The model call it came from (the agent_step line before it)'), ...ProposalSchema.omit({ events: true }).shape };
export const ProposalLineSchema = z
  .object({ type: z.literal('proposal'), schema_version: version, ...proposalShape })
  .describe('One tool call with its decision and result; its syscall lines follow');

const syscallShape = {
  command_id: ProposalSchema.shape.id.describe('The id of the proposal line this event follows'),
  event: ProposalSchema.shape.events.element.describe('One strace event (or a seccomp refusal) of the command'),
  background: z.literal(true).optional().describe("Made by a process the command left running in the background, after the command's result (its result's `background`)"),
};
export const SyscallLineSchema = z.object({ type: z.literal('syscall'), schema_version: version, ...syscallShape }).describe('One event of the command of the proposal before it');

// Everything of the episode that is neither the head nor a step: a field added to the episode lands here.
export const EpisodeEndLineSchema = z
  .object({ type: z.literal('episode_end'), schema_version: version, ...EpisodeSchema.omit(NOT_TAIL).shape })
  .describe('How the episode ended, its totals and tampering evidence');

export const RelayExchangeLineSchema = z
  .object({ type: z.literal('relay_exchange'), schema_version: z.literal(TRACE_SCHEMA_VERSION), record: RelayRecordSchema.describe('The relay\'s record, as it kept it') })
  .describe("One exchange of an installed agent with the model relay (tokens, cost, latency, the reply's tool calls); after episode_end, in the relay's order");

export const GraphNodeLineSchema = z
  .object({ type: z.literal('graph_node'), schema_version: version, node: GraphNodeSchema.describe('The node') })
  .describe('One node of the trace graph (measured rollouts); nodes precede edges');

export const GraphEdgeLineSchema = z
  .object({ type: z.literal('graph_edge'), schema_version: version, edge: GraphEdgeSchema.describe('The edge') })
  .describe('One edge of the trace graph, between nodes listed before it');

export const TraceLineSchema = z.discriminatedUnion('type', [
  RolloutLineSchema,
  AgentStepLineSchema,
  ProposalLineSchema,
  SyscallLineSchema,
  EpisodeEndLineSchema,
  RelayExchangeLineSchema,
  GraphNodeLineSchema,
  GraphEdgeLineSchema,
]);
export type TraceLine = z.infer<typeof TraceLineSchema>;
export type TraceLineType = TraceLine['type'];
/** The line types of every measured rollout's trace; an installed agent's adds `relay_exchange`. */
export const TRACE_LINE_TYPES = TraceLineSchema.options.map((o) => o.shape.type.value).filter((t) => t !== 'relay_exchange');

/**
 * What every readable version holds of a proposal — what the report shows. Version 1 embedded the
 * episode's records as they were then (fields were added since without a version), so it is read
 * through these picks of today's schemas, never whole.
 */
const ProposalCoreSchema = ProposalSchema.pick({ id: true, tool: true, args: true, valid: true, invalid_reason: true, decision: true, skipped: true }).extend({
  result: CommandResultSchema.pick({ exit_code: true, timed_out: true, stdout: true, stderr: true, launcher_error: true }).optional().describe('Present when the command was executed'),
});
export type ProposalCore = z.infer<typeof ProposalCoreSchema> & Pick<Proposal, 'events'>;
export interface StepCore {
  turn: number;
  text: string;
  proposals: ProposalCore[];
}

const v1 = z.literal(1);
const LegacyV1LineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('rollout'), schema_version: v1, rollout_id: rolloutId, ...EpisodeSchema.pick({ task_id: true }).shape }),
  z.object({ type: z.literal('agent_step'), schema_version: v1, ...StepSchema.pick({ turn: true, text: true }).shape }),
  z.object({ type: z.literal('proposal'), schema_version: v1, turn: proposalShape.turn, ...ProposalCoreSchema.shape }),
  z.object({ type: z.literal('syscall'), schema_version: v1, ...syscallShape }),
  // Its totals and enforcement were the episode's of the day: not read.
  z.object({ type: z.literal('episode_end'), schema_version: v1 }),
  z.object({ type: z.literal('graph_node'), schema_version: v1, id: z.string(), node_type: z.enum(NODE_TYPES), labels: z.array(z.string()), attrs: z.unknown() }),
  z.object({ type: z.literal('graph_edge'), schema_version: v1, ...GraphEdgeSchema.shape }),
]);

/** The trace lines of one rollout: the episode, an installed agent's relay records, then the measurement's graph when there is one. Pure. */
export function traceLines(rollout: string, episode: Episode, graph?: TraceGraph, relay?: readonly RelayRecord[]): TraceLine[] {
  const { schema_version: _episodeVersion, steps, task_id, model, defense, started_at, setup, ...tail } = episode;
  const schema_version = relay === undefined ? BASE_TRACE_VERSION : TRACE_SCHEMA_VERSION;
  const lines: TraceLine[] = [{ type: 'rollout', schema_version, rollout_id: rollout, task_id, model, defense, started_at, setup }];
  for (const { proposals, ...step } of steps) {
    lines.push({ type: 'agent_step', schema_version, ...step });
    for (const { events, ...proposal } of proposals) {
      lines.push({ type: 'proposal', schema_version, turn: step.turn, ...proposal });
      // The last `background.events` events are what its background processes did later.
      const firstBackground = events.length - (proposal.result?.background?.events ?? 0);
      for (const [i, event] of events.entries()) {
        lines.push({ type: 'syscall', schema_version, command_id: proposal.id, event, ...(i >= firstBackground ? { background: true as const } : {}) });
      }
    }
  }
  lines.push({ type: 'episode_end', schema_version, ...tail });
  for (const record of relay ?? []) lines.push({ type: 'relay_exchange', schema_version: TRACE_SCHEMA_VERSION, record });
  if (graph !== undefined) {
    // Nodes first: a reader meets both ends of every edge before the edge.
    for (const node of graph.nodes) lines.push({ type: 'graph_node', schema_version, node });
    for (const edge of graph.edges) lines.push({ type: 'graph_edge', schema_version, edge });
  }
  return lines;
}

/** A rollout's trace as read back. */
export interface RolloutTrace {
  schema_version: (typeof READABLE_TRACE_VERSIONS)[number];
  rollout_id: string;
  task_id: string;
  /** The model calls, each with its proposals, each with its command's events (in a version-2 trace, the episode's own steps). */
  steps: StepCore[];
  /** The measurement's graph; null when the rollout was not measured (no gold, or it ended before). */
  graph: TraceGraph | null;
  /** The whole episode; null for a version-1 trace (episode.json held the fields it lacked). */
  episode: Episode | null;
  /** An installed agent's exchanges with the model relay (version 3); empty otherwise. */
  relay: RelayRecord[];
}

function unreadable(file: string, line: number, message: string, details: readonly string[] = []): AuthbenchError {
  return new AuthbenchError('TRACE_UNREADABLE', `${file} line ${line}: ${message}`, { file, field: `line ${line}`, details });
}

function versionOf(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null && 'schema_version' in raw ? raw.schema_version : undefined;
}

type Head = Omit<z.infer<typeof RolloutLineSchema>, 'type' | 'schema_version' | 'rollout_id'>;
type Tail = Omit<z.infer<typeof EpisodeEndLineSchema>, 'type' | 'schema_version'>;

/**
 * Parsed trace lines (one JSON value each, in file order) → the rollout's
 * trace. `file` names the trace in errors; anything out of shape or out of
 * order is TRACE_UNREADABLE, naming the line.
 */
export function decodeTrace(raw: readonly unknown[], file: string): RolloutTrace {
  const first = versionOf(raw[0]);
  const readable = READABLE_TRACE_VERSIONS.find((v) => v === first);
  if (readable === undefined) {
    throw unreadable(file, 1, raw.length === 0 ? 'the trace is empty' : `trace schema_version ${JSON.stringify(first)} is not one this authbench reads (${READABLE_TRACE_VERSIONS.join(', ')})`);
  }
  const schema = readable === 1 ? LegacyV1LineSchema : TraceLineSchema;
  const relay: RelayRecord[] = [];
  let ids: { rollout_id: string; task_id: string } | undefined;
  let head: Head | undefined;
  let tail: Tail | undefined;
  let ended = false;
  const steps: StepCore[] = [];
  // Version 2: the same step and proposal objects, typed whole, for the episode.
  const whole: Step[] = [];
  const graph: TraceGraph = { nodes: [], edges: [] };
  raw.forEach((value, i) => {
    const n = i + 1;
    if (versionOf(value) !== readable) throw unreadable(file, n, `schema_version ${JSON.stringify(versionOf(value))} in a version ${readable} trace`);
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw unreadable(file, n, 'not a valid trace line', zodProblems(parsed.error, file, `line ${n}`).map(formatProblem));
    const line = parsed.data;
    if ((i === 0) !== (line.type === 'rollout')) throw unreadable(file, n, i === 0 ? `the first line is ${line.type}, not rollout` : 'a second rollout line');
    const step = steps.at(-1);
    const proposal = step?.proposals.at(-1);
    switch (line.type) {
      case 'rollout':
        ids = { rollout_id: line.rollout_id, task_id: line.task_id };
        if (line.schema_version !== 1) {
          const { type: _t, schema_version: _v, rollout_id: _r, ...rest } = line;
          head = rest;
        }
        return;
      case 'agent_step': {
        if (ended) throw unreadable(file, n, 'an agent_step after episode_end');
        if (line.schema_version !== 1) {
          const { type: _t, schema_version: _v, ...rest } = line;
          const added: Step = { ...rest, proposals: [] };
          whole.push(added);
          steps.push(added);
        } else steps.push({ turn: line.turn, text: line.text, proposals: [] });
        return;
      }
      case 'proposal': {
        if (ended || step === undefined || step.turn !== line.turn) throw unreadable(file, n, `a proposal of turn ${line.turn} outside that turn's agent_step`);
        if (line.schema_version !== 1) {
          const { type: _t, schema_version: _v, turn: _turn, ...rest } = line;
          const added: Proposal = { ...rest, events: [] };
          whole.at(-1)?.proposals.push(added);
        } else {
          const { type: _t, schema_version: _v, turn: _turn, ...rest } = line;
          step.proposals.push({ ...rest, events: [] });
        }
        return;
      }
      case 'syscall':
        if (ended || proposal === undefined || proposal.id !== line.command_id) throw unreadable(file, n, `a syscall of ${line.command_id} not right after its proposal`);
        proposal.events.push(line.event);
        return;
      case 'episode_end':
        if (ended) throw unreadable(file, n, 'a second episode_end');
        ended = true;
        if (line.schema_version !== 1) {
          const { type: _t, schema_version: _v, ...rest } = line;
          tail = rest;
        }
        return;
      case 'relay_exchange':
        if (!ended || graph.nodes.length > 0 || graph.edges.length > 0) throw unreadable(file, n, 'a relay_exchange outside the lines between episode_end and the graph');
        relay.push(line.record);
        return;
      case 'graph_node': {
        if (!ended || graph.edges.length > 0) throw unreadable(file, n, 'a graph_node before episode_end or after an edge');
        if (line.schema_version !== 1) {
          graph.nodes.push(line.node);
          return;
        }
        const node = GraphNodeSchema.safeParse({ id: line.id, type: line.node_type, labels: line.labels, attrs: line.attrs });
        if (!node.success) throw unreadable(file, n, `not a valid ${line.node_type} node`, zodProblems(node.error, file, `line ${n}`).map(formatProblem));
        graph.nodes.push(node.data);
        return;
      }
      case 'graph_edge': {
        if (!ended) throw unreadable(file, n, 'a graph_edge before episode_end');
        if (line.schema_version !== 1) graph.edges.push(line.edge);
        else {
          const { type: _t, schema_version: _v, ...edge } = line;
          graph.edges.push(edge);
        }
        return;
      }
    }
  });
  if (!ended) throw unreadable(file, raw.length, 'the trace has no episode_end line');
  if (ids === undefined) throw unreadable(file, 1, 'the trace has no rollout line');
  return {
    schema_version: readable,
    rollout_id: ids.rollout_id,
    task_id: ids.task_id,
    steps,
    graph: graph.nodes.length === 0 && graph.edges.length === 0 ? null : graph,
    episode: head === undefined || tail === undefined ? null : { schema_version: EPISODE_SCHEMA_VERSION, ...head, steps: whole, ...tail },
    relay,
  };
}

/** JSONL text → parsed lines → the trace. */
export function parseTrace(text: string, file: string): RolloutTrace {
  const values = text.split('\n').flatMap((l, i): unknown[] => {
    if (l.trim() === '') return [];
    try {
      return [JSON.parse(l)];
    } catch (e) {
      throw unreadable(file, i + 1, `not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  });
  return decodeTrace(values, file);
}

export function traceText(lines: readonly TraceLine[]): string {
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

export async function writeTrace(dir: string, lines: readonly TraceLine[]): Promise<void> {
  await writeFileAtomic(join(dir, TRACE_FILE), await promisify(gzip)(traceText(lines)));
}

/** A rollout folder's trace; null when it has none (it ended before its episode ran). */
export async function readTrace(dir: string): Promise<RolloutTrace | null> {
  const file = join(dir, TRACE_FILE);
  let text: string;
  try {
    text = (await promisify(gunzip)(await readFile(file))).toString('utf8');
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return null;
    throw new AuthbenchError('TRACE_UNREADABLE', `cannot read ${file}`, { file, cause: e });
  }
  return parseTrace(text, file);
}

/** A rollout folder's episode, from its trace; undefined when the rollout has no trace. */
export async function readEpisode(dir: string): Promise<Episode | undefined> {
  const trace = await readTrace(dir);
  if (trace === null) return undefined;
  if (trace.episode === null) {
    throw new AuthbenchError('TRACE_UNREADABLE', `${join(dir, TRACE_FILE)} is a version ${trace.schema_version} trace, which does not hold the whole episode`, {
      file: join(dir, TRACE_FILE),
      hint: 'its episode.json does; re-run the rollout to get a current trace',
    });
  }
  return trace.episode;
}

/**
 * The rollout's trace, written exactly once: by `write`, with the measurement's graph, after
 * measurement; or, when the rollout ends before that (an early return or a throw), with the episode
 * alone as the scope that holds it is left.
 */
export function pendingTrace(dir: string, rollout: string, first: Episode, relay?: readonly RelayRecord[]): { write: (graph?: TraceGraph) => Promise<void>; update: (episode: Episode) => void } & AsyncDisposable {
  let written = false;
  // The services an episode left running add their events when they stop (after the utility validator).
  let episode = first;
  const write = async (graph?: TraceGraph): Promise<void> => {
    if (written) throw new AuthbenchError('INTERNAL', `the trace of ${rollout} was already written`);
    written = true;
    await writeTrace(dir, traceLines(rollout, episode, graph, relay));
  };
  return {
    write,
    update: (next) => {
      episode = next;
    },
    [Symbol.asyncDispose]: async () => {
      if (!written) await write();
    },
  };
}
