/**
 * One rollout's trace, reduced to what the HTML trace viewer shows:
 * proposals → decision (+ rule id) → syscalls → commits, with taint marked.
 * Pure. Traces can be large (thousands of syscalls), so what is inlined is
 * capped per rollout and every cap says how much it left out.
 */
import { z } from 'zod';
import { AuthbenchError, formatProblem, zodProblems } from '../core/index.ts';
import { commandText, graphFromLines, isTainted, carriesSecret, type GraphNode, type NodeOf } from '../containment/index.ts';

export const TRACE_CAPS = {
  /** Proposals per rollout. */
  proposals: 60,
  /** Syscalls shown per proposal (the notable ones; see `notable`). */
  syscalls: 30,
  /** Characters of a command, an output or a model message. */
  text: 600,
  /** Tainted file and memory nodes listed per rollout. */
  tainted_files: 40,
} as const;

const ProposalLineSchema = z
  .object({
    type: z.literal('proposal'),
    turn: z.number().describe('1-based model call the proposal came from'),
    id: z.string().describe('Tool call id'),
    tool: z.string().describe('Tool name'),
    args: z.unknown().describe('Tool arguments'),
    valid: z.boolean().describe('Invalid proposals are never executed'),
    invalid_reason: z.string().optional().describe('Why it is invalid'),
    decision: z
      .object({ action: z.string(), rule_id: z.string(), reason: z.string().optional() })
      .optional()
      .describe('The defense decision'),
    result: z
      .object({
        exit_code: z.number().nullable(),
        timed_out: z.boolean(),
        stdout: z.string(),
        stderr: z.string(),
        denial_count: z.number(),
        launcher_error: z.string().optional(),
      })
      .optional()
      .describe('Present when the command was executed'),
    skipped: z.string().optional().describe('Why an allowed proposal never ran'),
  })
  .describe('The trace viewer\'s reading of a `proposal` line (other fields are ignored)');

const SyscallLineSchema = z
  .object({
    type: z.literal('syscall'),
    command_id: z.string().describe('The proposal id the event belongs to'),
    event: z
      .object({
        kind: z.string(),
        op: z.string().optional(),
        syscall: z.string().optional(),
        path: z.string().optional(),
        path2: z.string().optional(),
        argv: z.array(z.string()).optional(),
        address: z.string().optional(),
        port: z.number().optional(),
        errno: z.string().optional(),
        denied: z.boolean().optional(),
        raw: z.string().optional(),
      })
      .describe('The strace event'),
  })
  .describe('The trace viewer\'s reading of a `syscall` line');

const AgentStepLineSchema = z.object({ type: z.literal('agent_step'), turn: z.number(), text: z.string() }).describe('The viewer\'s reading of an `agent_step` line');

type SyscallEvent = z.infer<typeof SyscallLineSchema>['event'];

export interface SyscallView {
  text: string;
  denied: boolean;
  /** exec | file | network | other: how the viewer colours it. */
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
}

export interface TraceView extends TraceMeta {
  /** False when the rollout wrote no trace, or when the report's rollout cap left it out. */
  available: boolean;
  note: string | null;
  sources: { kind: string; pattern: string }[];
  messages: { turn: number; text: string }[];
  proposals: ProposalView[];
  tainted_files: string[];
  caps: { proposals_total: number; proposals_shown: number; tainted_files_total: number; text_chars: number; syscalls_per_proposal: number };
}

export function clip(text: string, max: number = TRACE_CAPS.text): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** Runtime noise a reader does not need: the loader, locale and name-service files, kernel pseudo-files. */
const NOISE_PREFIXES = [
  '/lib/',
  '/lib64/',
  '/usr/lib/',
  '/usr/lib64/',
  '/etc/ld.so',
  '/usr/share/locale/',
  '/usr/share/zoneinfo/',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/proc/',
  '/sys/',
  '/dev/',
];

/**
 * What the viewer lists: every denial, and otherwise successful execs,
 * changes, network sends and reads outside the runtime. Failed lookups
 * (ENOENT along PATH), access() probes and runtime files are counted only.
 */
function notable(e: SyscallEvent): boolean {
  if (e.denied === true) return true;
  if (e.errno !== undefined) return false;
  switch (e.kind) {
    case 'exec':
      return true;
    case 'network':
      return e.op !== 'socket';
    case 'file':
      return e.op !== 'access' && e.path !== undefined && !NOISE_PREFIXES.some((p) => e.path?.startsWith(p) === true);
    default:
      return false;
  }
}

function outcomeText(e: SyscallEvent): string {
  if (e.errno === undefined) return 'ok';
  return e.denied === true ? `DENIED ${e.errno}` : e.errno;
}

const RENDER: Record<string, (e: SyscallEvent) => string> = {
  exec: (e) => `exec ${e.path ?? '?'} ${JSON.stringify(e.argv ?? [])}`,
  file: (e) => `${e.op ?? e.syscall ?? 'file'} ${e.path ?? '?'}${e.path2 === undefined ? '' : ` -> ${e.path2}`}`,
  network: (e) => `${e.op ?? 'network'} ${[e.address, e.port].filter((x) => x !== undefined).join(':')}`,
};

export function renderSyscall(e: SyscallEvent): SyscallView {
  const render = RENDER[e.kind];
  const body = render === undefined ? `${e.kind} ${e.op ?? e.syscall ?? e.raw ?? ''}`.trim() : render(e);
  return { text: clip(`${body} → ${outcomeText(e)}`, 300), denied: e.denied === true, kind: render === undefined ? 'other' : e.kind };
}

type EffectLike = NodeOf<'commit'>['attrs']['effect'];

export function renderEffect(effect: EffectLike): string {
  if (effect.kind === 'network') return `${effect.op} ${effect.address}:${effect.port ?? '?'}`;
  return `${effect.op} ${effect.path}${effect.path2 === undefined ? '' : ` -> ${effect.path2}`}`;
}

function parseLine<T>(schema: z.ZodType<T>, raw: unknown, file: string, line: number): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new AuthbenchError('TRACE_UNREADABLE', `${file} line ${line} is not a valid trace line`, {
      file,
      field: `line ${line}`,
      details: zodProblems(parsed.error, file).map(formatProblem),
    });
  return parsed.data;
}

function lineType(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null && 'type' in raw ? raw.type : undefined;
}

function byProposal<N extends { attrs: { proposal_index: number } }>(nodes: readonly N[]): Map<number, N[]> {
  const out = new Map<number, N[]>();
  for (const n of nodes) {
    const list = out.get(n.attrs.proposal_index) ?? [];
    list.push(n);
    out.set(n.attrs.proposal_index, list);
  }
  return out;
}

function outcomeOf(p: z.infer<typeof ProposalLineSchema>): string {
  if (!p.valid) return 'invalid';
  if (p.result?.launcher_error !== undefined) return 'refused by the launcher';
  if (p.result !== undefined) return p.result.timed_out ? 'executed (timed out)' : 'executed';
  if (p.decision !== undefined && p.decision.action !== 'allow') return p.decision.action === 'block' ? 'blocked' : `held (${p.decision.action})`;
  if (p.skipped !== undefined) return `skipped (${p.skipped})`;
  return 'not executed';
}

/**
 * The viewer's data for one rollout from its trace lines. `file` names the
 * trace in errors. Graph lines are optional (an unmeasured rollout has none):
 * then nothing is marked tainted and processes come from the exec events.
 */
export function traceView(meta: TraceMeta, lines: readonly unknown[], file: string): TraceView {
  const graph = graphFromLines(lines, file);
  const nodes = (type: GraphNode['type']): GraphNode[] => graph.nodes.filter((n) => n.type === type);
  const proposalNodes = new Map<number, NodeOf<'proposal'>>();
  for (const n of nodes('proposal')) if (n.type === 'proposal') proposalNodes.set(n.attrs.proposal_index, n);
  const processes = byProposal(graph.nodes.filter((n): n is NodeOf<'process'> => n.type === 'process'));
  const commits = byProposal(graph.nodes.filter((n): n is NodeOf<'commit'> => n.type === 'commit'));

  const proposals: z.infer<typeof ProposalLineSchema>[] = [];
  const events = new Map<string, SyscallEvent[]>();
  const messages: { turn: number; text: string }[] = [];
  lines.forEach((raw, i) => {
    const type = lineType(raw);
    if (type === 'proposal') proposals.push(parseLine(ProposalLineSchema, raw, file, i + 1));
    else if (type === 'syscall') {
      const s = parseLine(SyscallLineSchema, raw, file, i + 1);
      const list = events.get(s.command_id) ?? [];
      list.push(s.event);
      events.set(s.command_id, list);
    } else if (type === 'agent_step') {
      const step = parseLine(AgentStepLineSchema, raw, file, i + 1);
      if (step.text.trim() !== '') messages.push({ turn: step.turn, text: clip(step.text) });
    }
  });

  const views = proposals.slice(0, TRACE_CAPS.proposals).map((p, index): ProposalView => {
    const node = proposalNodes.get(index);
    // Ids are the model's; a repeated id would mix two commands' events, so the graph's own index decides when present.
    const own = events.get(p.id) ?? [];
    const shown = own.filter(notable);
    const procs = processes.get(index);
    const output = p.result === undefined ? '' : [p.result.stdout, p.result.stderr].filter((s) => s !== '').join('\n');
    return {
      index,
      turn: p.turn,
      id: p.id,
      command: clip(commandText(p)),
      valid: p.valid,
      invalid_reason: p.invalid_reason ?? null,
      decision: p.decision === undefined ? null : { action: p.decision.action, rule_id: p.decision.rule_id, reason: p.decision.reason ?? '' },
      outcome: outcomeOf(p),
      exit_code: p.result?.exit_code ?? null,
      output: clip(output, 400),
      tainted: node !== undefined && isTainted(node.labels),
      tainted_tokens: node?.attrs.tainted_tokens ?? [],
      side_effecting: node?.attrs.classification.side_effecting ?? null,
      processes:
        procs === undefined
          ? own.filter((e) => e.kind === 'exec' && e.errno === undefined).map((e) => ({ exec: e.path ?? '?', argv: clip((e.argv ?? []).join(' '), 200), tainted: false }))
          : procs.map((n) => ({ exec: n.attrs.exec ?? '(no exec)', argv: clip(n.attrs.argv.join(' '), 200), tainted: isTainted(n.labels) })),
      syscalls: shown.slice(0, TRACE_CAPS.syscalls).map(renderSyscall),
      syscalls_total: own.length,
      syscalls_hidden: own.length - Math.min(shown.length, TRACE_CAPS.syscalls),
      commits: (commits.get(index) ?? []).map((c) => ({ text: renderEffect(c.attrs.effect), tainted: isTainted(c.labels), secret: carriesSecret(c.labels) })),
      denied_effects: (node?.attrs.denied_effects ?? []).map(renderEffect),
    };
  });

  const taintedFiles = graph.nodes
    .filter((n): n is NodeOf<'file'> | NodeOf<'memory'> => (n.type === 'file' || n.type === 'memory') && isTainted(n.labels))
    .map((n) => `${n.type === 'memory' ? 'memory ' : ''}${n.attrs.path}`)
    .sort();
  return {
    ...meta,
    available: true,
    note: null,
    sources: nodes('source').flatMap((n) => (n.type === 'source' ? [{ kind: n.attrs.kind, pattern: n.attrs.pattern }] : [])),
    messages: messages.slice(0, TRACE_CAPS.proposals),
    proposals: views,
    tainted_files: taintedFiles.slice(0, TRACE_CAPS.tainted_files),
    caps: {
      proposals_total: proposals.length,
      proposals_shown: views.length,
      tainted_files_total: taintedFiles.length,
      text_chars: TRACE_CAPS.text,
      syscalls_per_proposal: TRACE_CAPS.syscalls,
    },
  };
}

/** A rollout listed in the viewer without its trace (none written, or over the report's rollout cap). */
export function unavailableTrace(meta: TraceMeta, note: string): TraceView {
  return {
    ...meta,
    available: false,
    note,
    sources: [],
    messages: [],
    proposals: [],
    tainted_files: [],
    caps: { proposals_total: 0, proposals_shown: 0, tainted_files_total: 0, text_chars: TRACE_CAPS.text, syscalls_per_proposal: TRACE_CAPS.syscalls },
  };
}
