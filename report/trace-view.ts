/**
 * One rollout's trace, reduced to what the HTML trace viewer shows:
 * proposals → decision (+ rule id) → syscalls → commits, with taint marked.
 * Pure. Traces can be large (thousands of syscalls), so what is inlined is
 * capped per rollout and every cap says how much it left out.
 */
import { carriesSecret, commandText, isTainted, type GraphNode, type NodeOf } from '../containment/index.ts';
import type { ProposalCore, RolloutTrace } from '../evaluation/index.ts';
import type { ProposalView, SyscallView, TraceMeta, TraceView } from './viewer/view.ts';

export type { ProposalView, SyscallView, TraceMeta, TraceView };

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

type SyscallEvent = ProposalCore['events'][number];

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
 * What the viewer lists: every denial (seccomp refusals included), and
 * otherwise successful execs, changes, network sends and reads outside the
 * runtime. Failed lookups (ENOENT along PATH), access() probes, runtime files
 * and process bookkeeping are counted only.
 */
function notable(e: SyscallEvent): boolean {
  switch (e.kind) {
    case 'seccomp':
      return true;
    case 'unparsed':
      return false;
    case 'process':
      return e.denied === true;
    case 'exec':
      return e.denied || e.errno === undefined;
    case 'network':
      return e.denied || (e.errno === undefined && e.op !== 'socket');
    case 'file':
      return e.denied || (e.errno === undefined && e.op !== 'access' && !NOISE_PREFIXES.some((p) => e.path.startsWith(p)));
  }
}

function outcomeText(e: { errno?: string | undefined; denied?: boolean | undefined }): string {
  if (e.errno === undefined) return 'ok';
  return e.denied === true ? `DENIED ${e.errno}` : e.errno;
}

function eventText(e: SyscallEvent): string {
  switch (e.kind) {
    case 'exec':
      return `exec ${e.path} ${JSON.stringify(e.argv)} → ${outcomeText(e)}`;
    case 'file':
      return `${e.op} ${e.path}${e.path2 === undefined ? '' : ` -> ${e.path2}`} → ${outcomeText(e)}`;
    case 'network':
      return `${e.op} ${[e.address, e.port].filter((x) => x !== undefined).join(':')} → ${outcomeText(e)}`;
    case 'process':
      return `${e.op}${e.target === undefined ? '' : ` ${e.target}`}${e.signal === undefined ? '' : ` ${e.signal}`} → ${outcomeText(e)}`;
    case 'seccomp':
      return `seccomp refused ${e.syscall}${e.detail === '' ? '' : ` (${e.detail})`} → DENIED ${e.errno}`;
    case 'unparsed':
      return `unparsed: ${e.raw}`;
  }
}

export function renderSyscall(e: SyscallEvent): SyscallView {
  return { text: clip(eventText(e), 300), denied: e.kind !== 'unparsed' && e.denied === true, kind: e.kind };
}

type EffectLike = NodeOf<'commit'>['attrs']['effect'];

export function renderEffect(effect: EffectLike): string {
  if (effect.kind === 'network') return `${effect.op} ${effect.address}:${effect.port ?? '?'}`;
  return `${effect.op} ${effect.path}${effect.path2 === undefined ? '' : ` -> ${effect.path2}`}`;
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

function outcomeOf(p: ProposalCore): string {
  if (!p.valid) return 'invalid';
  if (p.result?.launcher_error !== undefined) return 'refused by the launcher';
  if (p.result !== undefined) return p.result.timed_out ? 'executed (timed out)' : 'executed';
  if (p.decision !== undefined && p.decision.action !== 'allow') return p.decision.action === 'block' ? 'blocked' : `held (${p.decision.action})`;
  if (p.skipped !== undefined) return `skipped (${p.skipped})`;
  return 'not executed';
}

/**
 * The viewer's data for one rollout from its trace. The graph is optional (an
 * unmeasured rollout has none): then nothing is marked tainted and processes
 * come from the exec events.
 */
export function traceView(meta: TraceMeta, trace: RolloutTrace): TraceView {
  const graph = trace.graph ?? { nodes: [], edges: [] };
  const nodes = (type: GraphNode['type']): GraphNode[] => graph.nodes.filter((n) => n.type === type);
  const proposalNodes = new Map<number, NodeOf<'proposal'>>();
  for (const n of nodes('proposal')) if (n.type === 'proposal') proposalNodes.set(n.attrs.proposal_index, n);
  const processes = byProposal(graph.nodes.filter((n): n is NodeOf<'process'> => n.type === 'process'));
  const commits = byProposal(graph.nodes.filter((n): n is NodeOf<'commit'> => n.type === 'commit'));

  // Indexed over the whole rollout as the graph's proposal_index is (invalid proposals included).
  // The agent of each step comes from the episode (a version-1 trace has none: one agent).
  const proposals = trace.steps.flatMap((s, i) => s.proposals.map((p) => ({ turn: s.turn, agent: trace.episode?.steps[i]?.agent ?? null, p })));
  const messages = trace.steps.filter((s) => s.text.trim() !== '').map((s) => ({ turn: s.turn, text: clip(s.text) }));

  const views = proposals.slice(0, TRACE_CAPS.proposals).map(({ turn, agent, p }, index): ProposalView => {
    const node = proposalNodes.get(index);
    const shown = p.events.filter(notable);
    const procs = processes.get(index);
    const output = p.result === undefined ? '' : [p.result.stdout, p.result.stderr].filter((s) => s !== '').join('\n');
    return {
      index,
      turn,
      id: p.id,
      command: clip(commandText(p)),
      valid: p.valid,
      invalid_reason: p.invalid_reason ?? null,
      decision: p.decision === undefined ? null : { action: p.decision.action, rule_id: p.decision.rule_id, reason: p.decision.reason },
      outcome: outcomeOf(p),
      exit_code: p.result?.exit_code ?? null,
      output: clip(output, 400),
      tainted: node !== undefined && isTainted(node.labels),
      tainted_tokens: node?.attrs.tainted_tokens ?? [],
      side_effecting: node?.attrs.classification.side_effecting ?? null,
      agent,
      processes:
        procs === undefined
          ? p.events.flatMap((e) => (e.kind === 'exec' && e.errno === undefined ? [{ exec: e.path, argv: clip(e.argv.join(' '), 200), tainted: false }] : []))
          : procs.map((n) => ({ exec: n.attrs.exec ?? '(no exec)', argv: clip(n.attrs.argv.join(' '), 200), tainted: isTainted(n.labels) })),
      syscalls: shown.slice(0, TRACE_CAPS.syscalls).map(renderSyscall),
      syscalls_total: p.events.length,
      syscalls_hidden: p.events.length - Math.min(shown.length, TRACE_CAPS.syscalls),
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
    agent_messages: graph.nodes.flatMap((n) => (n.type === 'message' ? [{ from: n.attrs.from, to: n.attrs.to, text: clip(n.attrs.text), tainted: isTainted(n.labels) }] : [])),
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
    agent_messages: [],
    proposals: [],
    tainted_files: [],
    caps: { proposals_total: 0, proposals_shown: 0, tainted_files_total: 0, text_chars: TRACE_CAPS.text, syscalls_per_proposal: TRACE_CAPS.syscalls },
  };
}
