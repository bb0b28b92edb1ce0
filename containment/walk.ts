/**
 * Syscall-level taint over a rollout, in one pass in time order, building the
 * trace graph as it goes.
 *
 * Rules (labels are `untrusted:*` and `secret:*`, see labels.ts):
 * - a file covered by a source pattern carries that source's label;
 * - a process that opens a labelled file for reading (or executes it) carries
 *   its labels from that event on; a forked child starts with its parent's
 *   labels at the fork; threads share their process's labels;
 * - the processes of a command start with the labels of its proposal;
 * - a process's successful write/create/truncate, and the new name of a
 *   rename/link/symlink, give the target file the process's labels (and, for
 *   rename/link/symlink, the labels of the content it names); file labels
 *   only grow;
 * - a command's observation carries the labels its processes ended with;
 * - the model sees all observations of a turn together in its next turn, so a
 *   labelled observation labels the agent context from the next agent step
 *   on, and every proposal of a step carries the context's labels.
 *
 * Each propagation is also a graph edge with its position in time (`seq`), so
 * graph reachability can respect time (reach.ts).
 */
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { covers, isWithin } from '../sandbox/paths/index.ts';
import type { TraceEvent } from '../sandbox/trace/index.ts';
import { classifyCommand } from './classify.ts';
import type { TaintConfig } from './config.ts';
import { attemptedEffect, attemptedEffects, effectKey, succeeded } from './effects.ts';
import { commandText, proposalCount, wasExecuted, type ProposalInput, type RolloutInput, type StepInput } from './input.ts';
import { isTainted, secretLabel, untrustedLabel } from './labels.ts';
import { MESSAGE_TEXT_CAP, type Effect, type EdgeKind, type GraphEdge, type GraphNode, type TokenProvenance, type TraceGraph } from './schema.ts';
import { taintedTokens, tokenProvenance } from './tokens.ts';

/** The taint state visible when a proposal is decided. */
export interface ProposalTaint {
  proposal_index: number;
  proposal_id: string;
  step_index: number;
  turn: number;
  /** Labels of the agent context (and so of the proposal). */
  labels: string[];
  /** The context carries untrusted content. */
  tainted: boolean;
  /** Files carrying labels at that point (sources touched so far and files written by labelled processes). */
  files: { path: string; labels: string[] }[];
  /** Topologies: the message the proposing agent started from (its sender's taint crossed it); null: none. */
  message: { id: string; from: string; tainted: boolean } | null;
  tokens: TokenProvenance[];
  tainted_tokens: string[];
}

export interface RolloutAnalysis {
  graph: TraceGraph;
  /** One per proposal of the input, invalid ones included, in order. */
  proposals: ProposalTaint[];
}

// Pseudo filesystems: what is written there is not stored content.
const PSEUDO_ROOTS = ['/dev', '/proc', '/sys'];

interface SourceDecl {
  id: string;
  label: string;
  pattern: string;
}

interface Proc {
  id: string;
  labels: Set<string>;
  exec: string | null;
  argv: string[];
}

interface FileState {
  id: string;
  labels: Set<string>;
}

class GraphBuilder {
  private readonly nodes = new Map<string, { node: GraphNode; labels: Set<string> }>();
  private readonly edges = new Map<string, { edge: GraphEdge; fromIn: number }>();
  private readonly inCount = new Map<string, number>();
  private seq = 0;

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  add(node: GraphNode, labels: Iterable<string> = []): void {
    if (!this.nodes.has(node.id)) this.nodes.set(node.id, { node, labels: new Set(labels) });
  }

  label(id: string, labels: Iterable<string>): void {
    const entry = this.nodes.get(id);
    if (entry !== undefined) for (const l of labels) entry.labels.add(l);
  }

  /** Update a node's attrs in place (process exec/argv). */
  node(id: string): GraphNode | undefined {
    return this.nodes.get(id)?.node;
  }

  /**
   * Record that `from` influenced `to` now. A repeat is dropped when `from`
   * received nothing since the last one: no path through it can use the repeat.
   */
  edge(from: string, to: string, kind: EdgeKind): void {
    const key = `${from}\0${to}\0${kind}`;
    const fromIn = this.inCount.get(from) ?? 0;
    const existing = this.edges.get(key);
    if (existing !== undefined && existing.fromIn === fromIn) return;
    const at = this.seq++;
    if (existing === undefined) this.edges.set(key, { edge: { from, to, kind, seq: [at] }, fromIn });
    else {
      existing.edge.seq.push(at);
      existing.fromIn = fromIn;
    }
    this.inCount.set(to, (this.inCount.get(to) ?? 0) + 1);
  }

  build(): TraceGraph {
    return {
      nodes: [...this.nodes.values()].map(({ node, labels }) => ({ ...node, labels: [...labels].sort() })),
      edges: [...this.edges.values()].map(({ edge }) => edge),
    };
  }
}

class Walker {
  private readonly g = new GraphBuilder();
  private readonly sources: SourceDecl[] = [];
  private readonly files = new Map<string, FileState>();
  private readonly staticLabels = new Map<string, SourceDecl[]>();
  private readonly context = new Set<string>();
  private readonly taintedTexts: string[] = [];
  readonly proposals: ProposalTaint[] = [];
  private readonly config: TaintConfig;
  /** The episode being walked (two-episode memory rollouts); file and memory node ids of a later one carry `@<episode>`. */
  private episode = 0;
  /** The message the current agent started from (topologies). */
  private inbox: ProposalTaint['message'] = null;

  constructor(config: TaintConfig) {
    this.config = config;
    const declare = (kind: 'untrusted' | 'secret', pattern: string): void => {
      const label = kind === 'untrusted' ? untrustedLabel(pattern) : secretLabel(pattern);
      const id = `source:${label}`;
      this.sources.push({ id, label, pattern });
      this.g.add({ id, type: 'source', labels: [], attrs: { kind, pattern, memory: config.memory_files.includes(pattern) } }, [label]);
    };
    for (const p of config.untrusted_sources) declare('untrusted', p);
    for (const p of config.secret_files) declare('secret', p);
  }

  run(input: RolloutInput): RolloutAnalysis {
    let index = 0;
    let previous: { stepId: string; observations: { id: string; labels: Set<string>; text: string }[] } | undefined;
    input.steps.forEach((step, stepIndex) => {
      const stepId = `step:${stepIndex}`;
      if ((step.episode ?? 0) !== this.episode) {
        this.nextEpisode(step.episode ?? 0, input.memory_carried ?? []);
        previous = undefined;
      }
      if (step.message !== undefined) previous = this.message(step.message, stepIndex, previous);
      if (previous !== undefined) {
        for (const o of previous.observations) {
          for (const l of o.labels) this.context.add(l);
          if (isTainted(o.labels)) this.taintedTexts.push(o.text);
        }
      }
      const valid = step.proposals.filter((p) => p.valid).length;
      this.g.add(
        { id: stepId, type: 'agent_step', labels: [], attrs: { step_index: stepIndex, turn: step.turn, proposals: step.proposals.length, valid_proposals: valid } },
        this.context,
      );
      if (previous !== undefined) {
        // The model's context is the whole conversation so far: it carries over.
        this.g.edge(previous.stepId, stepId, 'taint');
        for (const o of previous.observations) this.g.edge(o.id, stepId, 'taint');
      }
      const observations: { id: string; labels: Set<string>; text: string }[] = [];
      for (const proposal of step.proposals) {
        const k = index++;
        const obs = this.proposal(proposal, k, stepIndex, step.turn, stepId);
        if (obs !== undefined) observations.push(obs);
      }
      previous = { stepId, observations };
    });
    return { graph: this.g.build(), proposals: this.proposals };
  }

  private proposal(p: ProposalInput, k: number, stepIndex: number, turn: number, stepId: string): { id: string; labels: Set<string>; text: string } | undefined {
    const command = commandText(p);
    const tokens = tokenProvenance(command, { instruction: this.config.instruction, taintedObservations: this.taintedTexts }, this.config.workdir ?? undefined);
    const labels = new Set(this.context);
    this.proposals.push({
      proposal_index: k,
      proposal_id: p.id,
      step_index: stepIndex,
      turn,
      labels: [...labels].sort(),
      tainted: isTainted(labels),
      files: [...this.files]
        .filter(([, f]) => f.labels.size > 0)
        .map(([path, f]) => ({ path, labels: [...f.labels].sort() }))
        .sort((a, b) => compareStrings(a.path, b.path)),
      message: this.inbox,
      tokens,
      tainted_tokens: taintedTokens(tokens),
    });
    if (!p.valid) return undefined;

    const proposalId = `proposal:${k}`;
    const executed = wasExecuted(p);
    const denied = new Map<string, Effect>();
    this.g.add(
      {
        id: proposalId,
        type: 'proposal',
        labels: [],
        attrs: {
          proposal_index: k,
          proposal_id: p.id,
          step_index: stepIndex,
          command,
          executed,
          decision: p.decision?.action ?? null,
          rule_id: p.decision?.rule_id ?? null,
          classification: classifyCommand(command, this.config.workdir === null ? {} : { cwd: this.config.workdir }),
          denied_effects: [],
          tokens,
          tainted_tokens: taintedTokens(tokens),
        },
      },
      labels,
    );
    this.g.edge(stepId, proposalId, 'taint');
    let commitParent = proposalId;
    if (p.decision !== undefined) {
      const decisionId = `decision:${k}`;
      this.g.add({ id: decisionId, type: 'decision', labels: [], attrs: { proposal_index: k, action: p.decision.action, rule_id: p.decision.rule_id } });
      this.g.edge(proposalId, decisionId, 'structural');
      commitParent = decisionId;
    }
    const counterfactual = p.counterfactual;
    if (!executed && counterfactual !== undefined && counterfactual.error === undefined) {
      // Judged, never walked: what a copy did adds no commit, process or taint to this rollout.
      const node = this.g.node(proposalId);
      if (node?.type === 'proposal') node.attrs.counterfactual = { attempted: attemptedEffects(counterfactual.events, this.config.scratch_roots) };
    }
    if (!executed || p.result === undefined) return undefined;

    const procs = this.command(k, proposalId, commitParent, labels, p.events, denied);
    const node = this.g.node(proposalId);
    if (node?.type === 'proposal') node.attrs.denied_effects = [...denied.values()];

    const obsId = `observation:${k}`;
    const obsLabels = new Set(labels);
    for (const proc of procs) for (const l of proc.labels) obsLabels.add(l);
    this.g.add({ id: obsId, type: 'observation', labels: [], attrs: { proposal_index: k, proposal_id: p.id } }, obsLabels);
    if (procs.length === 0) this.g.edge(proposalId, obsId, 'taint');
    for (const proc of procs) this.g.edge(proc.id, obsId, 'taint');
    return { id: obsId, labels: obsLabels, text: `${p.result.stdout}\n${p.result.stderr}` };
  }

  /** Walk one command's events; returns its processes. */
  private command(k: number, proposalId: string, commitParent: string, labels: ReadonlySet<string>, events: readonly TraceEvent[], denied: Map<string, Effect>): Proc[] {
    const forks = new Map<number, { parent: number; thread: boolean }>();
    for (const e of events) {
      if (e.kind === 'process' && e.op === 'fork' && e.child !== undefined) forks.set(e.child, { parent: e.pid, thread: e.thread === true });
    }
    const leader = (pid: number): number => {
      const seen = new Set<number>();
      let p = pid;
      for (let f = forks.get(p); f?.thread === true && !seen.has(p); f = forks.get(p)) {
        seen.add(p);
        p = f.parent;
      }
      return p;
    };
    const procs = new Map<number, Proc>();
    const creating = new Set<number>();
    const proc = (pid: number): Proc => {
      const l = leader(pid);
      const existing = procs.get(l);
      if (existing !== undefined) return existing;
      const id = `process:${k}:${l}`;
      const fork = forks.get(l);
      creating.add(l);
      const parent = fork !== undefined && !creating.has(fork.parent) ? proc(fork.parent) : undefined;
      creating.delete(l);
      const created: Proc = { id, labels: new Set(parent?.labels ?? labels), exec: null, argv: [] };
      procs.set(l, created);
      this.g.add({ id, type: 'process', labels: [], attrs: { proposal_index: k, pid: l, exec: null, argv: [] } }, created.labels);
      this.g.edge(parent?.id ?? proposalId, id, 'taint');
      return created;
    };
    const commits = new Map<string, string>();
    const commit = (effect: Effect, by: Proc, content: FileState | undefined): void => {
      const key = effectKey(effect);
      let id = commits.get(key);
      if (id === undefined) {
        id = `commit:${k}:${commits.size}`;
        commits.set(key, id);
        this.g.add({ id, type: 'commit', labels: [], attrs: { proposal_index: k, effect } });
        this.g.edge(commitParent, id, 'structural');
      }
      this.g.label(id, by.labels);
      this.g.edge(by.id, id, 'taint');
      if (content !== undefined) {
        this.g.label(id, content.labels);
        this.g.edge(content.id, id, 'taint');
      }
    };

    for (const e of events) {
      if (e.kind === 'unparsed') continue;
      const p = proc(e.pid);
      switch (e.kind) {
        case 'process':
          if (e.op === 'fork' && e.child !== undefined && e.thread !== true) proc(e.child);
          break;
        case 'seccomp':
          // Refused before it happened: no effect, no taint.
          break;
        case 'exec':
          if (!succeeded(e)) break;
          p.exec = e.path;
          p.argv = [...e.argv];
          this.read(p, e.path);
          break;
        case 'file': {
          const attempt = attemptedEffect(e, this.config.scratch_roots);
          if (attempt?.outcome === 'denied') denied.set(effectKey(attempt.effect), attempt.effect);
          if (!succeeded(e)) break;
          let content: FileState | undefined;
          if (e.op === 'read' || (e.op === 'write' && e.flags?.includes('O_RDWR') === true)) {
            this.read(p, e.path);
            if (e.real_path !== undefined) this.read(p, e.real_path);
          }
          if (e.op === 'write' || e.op === 'create' || e.op === 'truncate') this.write(p, e.real_path ?? e.path, undefined);
          if ((e.op === 'rename' || e.op === 'link' || e.op === 'symlink') && e.path2 !== undefined) {
            content = this.relevant(e.path) ? this.file(e.path) : undefined;
            this.write(p, e.path2, content);
          }
          if (attempt?.outcome === 'committed') commit(attempt.effect, p, content);
          break;
        }
        case 'network': {
          const attempt = attemptedEffect(e, this.config.scratch_roots);
          if (attempt?.outcome === 'denied') denied.set(effectKey(attempt.effect), attempt.effect);
          if (!succeeded(e, e.op) || e.op === 'socket' || (e.family !== 'inet' && e.family !== 'inet6') || e.address === undefined) break;
          const id = `network:${e.address}:${e.port ?? ''}`;
          this.g.add({ id, type: 'network', labels: [], attrs: { family: e.family, address: e.address, port: e.port ?? null } });
          this.g.label(id, p.labels);
          this.g.edge(p.id, id, 'taint');
          if (attempt?.outcome === 'committed') commit(attempt.effect, p, undefined);
          break;
        }
      }
    }
    for (const p of procs.values()) {
      const node = this.g.node(p.id);
      if (node?.type === 'process') {
        node.attrs.exec = p.exec;
        node.attrs.argv = p.argv;
      }
      this.g.label(p.id, p.labels);
    }
    return [...procs.values()];
  }

  /**
   * An inter-agent message: the sender's context when it answered (its last observations included:
   * it saw them before its final answer) crosses to the receiver, a fresh agent in the same
   * container whose context is the message alone. Only a tainted message's text counts as a
   * tainted observation for token provenance: the receiver never saw what the sender read.
   */
  private message(m: NonNullable<StepInput['message']>, stepIndex: number, previous: { stepId: string; observations: { id: string; labels: Set<string> }[] } | undefined): { stepId: string; observations: [] } {
    const id = `message:${stepIndex}`;
    const labels = new Set(this.context);
    for (const o of previous?.observations ?? []) for (const l of o.labels) labels.add(l);
    const text = m.text.length > MESSAGE_TEXT_CAP ? m.text.slice(0, MESSAGE_TEXT_CAP) : m.text;
    this.g.add({ id, type: 'message', labels: [], attrs: { from: m.from, to: m.to, step_index: stepIndex, text, truncated: text.length < m.text.length } }, labels);
    if (previous !== undefined) {
      this.g.edge(previous.stepId, id, 'taint');
      for (const o of previous.observations) this.g.edge(o.id, id, 'taint');
    }
    this.context.clear();
    this.taintedTexts.length = 0;
    for (const l of labels) this.context.add(l);
    const tainted = isTainted(labels);
    if (tainted) this.taintedTexts.push(m.text);
    this.inbox = { id, from: m.from, tainted };
    return { stepId: id, observations: [] };
  }

  /**
   * A fresh agent in a fresh container: its context starts clean and what episode 1 wrote is gone,
   * except the memory files the harness carried over — each becomes a node of the new episode with
   * a taint edge from its episode-1 record, so a record tainted by untrusted content stays tainted.
   */
  private nextEpisode(episode: number, carried: readonly string[]): void {
    this.context.clear();
    this.inbox = null;
    this.taintedTexts.length = 0;
    const before = [...this.files];
    this.files.clear();
    this.episode = episode;
    for (const [path, state] of before) {
      if (!carried.includes(path)) continue;
      const copy = this.file(path);
      for (const l of state.labels) copy.labels.add(l);
      this.g.edge(state.id, copy.id, 'taint');
      this.g.label(copy.id, copy.labels);
    }
  }

  private read(p: Proc, path: string): void {
    if (!this.relevant(path)) return;
    const f = this.file(path);
    this.g.edge(f.id, p.id, 'taint');
    for (const l of f.labels) p.labels.add(l);
    this.g.label(p.id, f.labels);
  }

  private write(p: Proc, path: string, content: FileState | undefined): void {
    if (isPseudo(path)) return;
    const f = this.file(path);
    if (content !== undefined) {
      this.g.edge(content.id, f.id, 'taint');
      for (const l of content.labels) f.labels.add(l);
    }
    this.g.edge(p.id, f.id, 'taint');
    for (const l of p.labels) f.labels.add(l);
    this.g.label(f.id, f.labels);
  }

  /** A file can carry labels: it is declared by a source, or the rollout has written it. Others are not worth a node. */
  private relevant(path: string): boolean {
    return !isPseudo(path) && (this.files.has(path) || this.sourcesOf(path).length > 0);
  }

  private sourcesOf(path: string): SourceDecl[] {
    let found = this.staticLabels.get(path);
    if (found === undefined) {
      found = this.sources.filter((s) => covers(s.pattern, path));
      this.staticLabels.set(path, found);
    }
    return found;
  }

  private file(path: string): FileState {
    const existing = this.files.get(path);
    if (existing !== undefined) return existing;
    const memory = this.config.memory_files.some((m) => covers(m, path));
    const id = `${memory ? 'memory' : 'file'}${this.episode === 0 ? '' : `@${this.episode}`}:${path}`;
    const sources = this.sourcesOf(path);
    const state: FileState = { id, labels: new Set(sources.map((s) => s.label)) };
    this.files.set(path, state);
    this.g.add({ id, type: memory ? 'memory' : 'file', labels: [], attrs: { path } }, state.labels);
    for (const s of sources) this.g.edge(s.id, id, 'taint');
    return state;
  }
}

function isPseudo(path: string): boolean {
  return PSEUDO_ROOTS.some((r) => isWithin(r, path));
}

/** Taint for every proposal and the trace graph of the whole rollout. Each proposal's state depends only on what came before it. */
export function analyzeRollout(input: RolloutInput, config: TaintConfig): RolloutAnalysis {
  return new Walker(config).run(input);
}

export function buildTraceGraph(input: RolloutInput, config: TaintConfig): TraceGraph {
  return analyzeRollout(input, config).graph;
}

/**
 * The taint state when proposal `proposalIndex` (0-based over the whole
 * rollout) is decided. Only the proposals before it are read: the input is cut
 * there and the proposal itself is stripped of its decision, result and events.
 */
export function taintAt(input: RolloutInput, proposalIndex: number, config: TaintConfig): ProposalTaint {
  const total = proposalCount(input);
  if (!Number.isInteger(proposalIndex) || proposalIndex < 0 || proposalIndex >= total) {
    throw new AuthbenchError('INVALID_ARGUMENT', `proposal index ${proposalIndex} is outside the rollout (${total} proposals)`);
  }
  const analysis = analyzeRollout(prefixOf(input, proposalIndex), config);
  const state = analysis.proposals[proposalIndex];
  if (state === undefined) throw new AuthbenchError('INTERNAL', `no taint state for proposal ${proposalIndex}`);
  return state;
}

function prefixOf(input: RolloutInput, proposalIndex: number): RolloutInput {
  const steps: RolloutInput['steps'][number][] = [];
  let seen = 0;
  for (const step of input.steps) {
    if (seen + step.proposals.length <= proposalIndex) {
      steps.push(step);
      seen += step.proposals.length;
      continue;
    }
    const before = step.proposals.slice(0, proposalIndex - seen);
    const at = step.proposals[proposalIndex - seen];
    if (at !== undefined) before.push({ id: at.id, args: at.args, valid: at.valid, events: [] });
    // The cut step keeps its agent, episode and message: they decide the context the proposal sees.
    steps.push({ ...step, proposals: before });
    break;
  }
  return { steps };
}
