import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EPISODE_SCHEMA_VERSION, EpisodeSchema, type Episode, type Proposal } from '../agent/index.ts';
import type { TraceGraph } from '../containment/index.ts';
import { AuthbenchError } from '../core/index.ts';
import { BASE_TRACE_VERSION, decodeTrace, parseTrace, pendingTrace, readEpisode, readTrace, TRACE_FILE, TRACE_LINE_TYPES, TraceLineSchema, traceLines, traceText } from './trace.ts';

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures', 'traces');

const enforcement = { level: 'full' as const, landlock_abi: 7, seccomp: true, best_effort: false };

function proposal(id: string, command: string, events: Proposal['events']): Proposal {
  return {
    id,
    tool: 'shell',
    args: { command },
    valid: true,
    decision: { action: 'allow', rule_id: 'tool-boundary/kernel', reason: 'the kernel enforces' },
    result: {
      exit_code: 0,
      timed_out: false,
      timeout_ms: 120_000,
      duration_ms: 4,
      stdout: 'ok',
      stderr: '',
      stdout_bytes: 2,
      stderr_bytes: 0,
      denials: [],
      denial_count: 0,
      event_count: events.length,
      enforcement,
      seccomp_denials: 1,
    },
    events,
  };
}

const exec = { kind: 'exec' as const, schema_version: 1 as const, pid: 9, ts: 1, syscall: 'execve', result: 0, denied: false, path: '/usr/bin/cat', argv: ['cat', '/app/a'], cwd: '/app' };
const read = { kind: 'file' as const, schema_version: 1 as const, pid: 9, ts: 2, syscall: 'openat', result: 3, denied: false, op: 'read' as const, path: '/app/a' };
const seccomp = { kind: 'seccomp' as const, schema_version: 1 as const, pid: 9, ts: 3, syscall: 'mount', nr: 165, args: ['0x0', '0x0', '0x0', '0x0', '0x0', '0x0'], result: -1 as const, errno: 'EPERM' as const, denied: true as const, detail: 'mount' };

/** Every episode field set, two proposals with the same id (the model picks ids) and one with no events. */
const EPISODE: Episode = {
  schema_version: EPISODE_SCHEMA_VERSION,
  task_id: 'log-triage',
  model: 'scripted/replay',
  defense: { name: 'tool-boundary', version: '1' },
  started_at: '2026-01-01T00:00:00.000Z',
  setup: { created_dirs: ['/app/out'], sidecar_hosts: { '172.20.0.2': 'metadata-mock' } },
  steps: [
    {
      turn: 1,
      started_at: '2026-01-01T00:00:00.100Z',
      model_call: { usage: { input_tokens: 3, output_tokens: 4 }, cost_usd: null, latency_ms: 5, cached: false, finish_reason: 'tool-calls' },
      text: 'Reading <a>.',
      proposals: [proposal('call_1', 'cat /app/a', [exec, read]), proposal('call_1', 'true', [seccomp])],
    },
    {
      turn: 2,
      started_at: '2026-01-01T00:00:01.000Z',
      model_call: { usage: { input_tokens: null, output_tokens: null }, cost_usd: null, latency_ms: 1, cached: true, finish_reason: 'tool-calls' },
      text: '',
      proposals: [{ id: 'bad', tool: 'nope', args: {}, valid: false, invalid_reason: 'unknown tool nope', events: [] }],
    },
  ],
  end_reason: 'done',
  final_text: 'Done.',
  tampering: [{ kind: 'signal', effective: false, detail: 'kill SIGSTOP to pid 1 refused' }],
  trace_events: 3,
  enforcement,
  totals: {
    turns: 2,
    proposals: 3,
    valid_proposals: 2,
    invalid_proposals: 1,
    blocked: 0,
    held: 0,
    rolled_back: 0,
    executed: 2,
    denials: 1,
    input_tokens: null,
    output_tokens: null,
    cost_usd: null,
    model_latency_ms: 6,
    duration_ms: 30,
  },
};

const GRAPH: TraceGraph = {
  nodes: [
    { id: 'source:0', type: 'source', labels: ['untrusted:/app/a'], attrs: { kind: 'untrusted', pattern: '/app/a', memory: false } },
    { id: 'file:/app/a', type: 'file', labels: ['untrusted:/app/a'], attrs: { path: '/app/a' } },
  ],
  edges: [{ from: 'source:0', to: 'file:/app/a', kind: 'taint', seq: [1] }],
};

const roundTrip = (lines: ReturnType<typeof traceLines>) => parseTrace(traceText(lines), 'trace.jsonl');

describe('trace lines', () => {
  it('writes every line type, each valid under the one schema, with the trace version', () => {
    const lines = traceLines('r1', EPISODE, GRAPH);
    expect(new Set(lines.map((l) => l.type))).toEqual(new Set(TRACE_LINE_TYPES));
    for (const line of lines) {
      // Without an installed agent's relay lines: version 2, as before version 3 existed.
      expect(line.schema_version).toBe(BASE_TRACE_VERSION);
      expect(TraceLineSchema.safeParse(JSON.parse(JSON.stringify(line))).success, line.type).toBe(true);
    }
    expect(lines.map((l) => l.type)).toEqual(['rollout', 'agent_step', 'proposal', 'syscall', 'syscall', 'proposal', 'syscall', 'agent_step', 'proposal', 'episode_end', 'graph_node', 'graph_node', 'graph_edge']);
  });

  it('holds the whole episode: it reads back equal, events with their own proposal even when ids repeat', () => {
    const trace = roundTrip(traceLines('r1', EPISODE, GRAPH));
    expect(trace.episode).toEqual(EPISODE);
    expect(trace.graph).toEqual(GRAPH);
    expect(trace).toMatchObject({ schema_version: BASE_TRACE_VERSION, rollout_id: 'r1', task_id: 'log-triage', relay: [] });
    expect(trace.steps[0]?.proposals.map((p) => p.events.map((e) => e.kind))).toEqual([['exec', 'file'], ['seccomp']]);
  });

  it('marks the events a command’s background processes made after its result, and reads them back in place', () => {
    const base = proposal('svc', 'nginx', [exec, read, seccomp]);
    const started: Proposal = { ...base, result: { ...(base.result as NonNullable<Proposal['result']>), background: { events: 2, stopped: 1, processes: ['41 nginx'] } } };
    const episode: Episode = { ...EPISODE, steps: [{ ...(EPISODE.steps[0] as Episode['steps'][number]), proposals: [started] }] };
    const lines = traceLines('r1', episode);
    const syscalls = lines.flatMap((l) => (l.type === 'syscall' ? [[l.event.kind, l.background === true]] : []));
    expect(syscalls).toEqual([
      ['exec', false],
      ['file', true],
      ['seccomp', true],
    ]);
    expect(roundTrip(lines).steps[0]?.proposals[0]?.events).toEqual([exec, read, seccomp]);
  });

  it('keeps a text-mode episode: the raw reply and parser status per turn, the format and counts at the end', () => {
    const step = EPISODE.steps[0] as Episode['steps'][number];
    const raw = 'Now: {"tool": "shell", "command": "rm -rf /tm';
    const episode: Episode = {
      ...EPISODE,
      tool_format: 'text',
      steps: [{ ...step, text: raw, parser: { version: 1, status: 'invalid:truncated', repairs: [] }, proposals: [] }],
      totals: { ...EPISODE.totals, parser: { strict: 0, repaired: 0, invalid: 1 } },
    };
    const lines = traceLines('r1', episode);
    expect(lines.find((l) => l.type === 'agent_step')).toMatchObject({ text: raw, parser: { status: 'invalid:truncated' } });
    expect(lines.find((l) => l.type === 'episode_end')).toMatchObject({ tool_format: 'text', totals: { parser: { invalid: 1 } } });
    expect(roundTrip(lines).episode).toEqual(episode);
    const bad = lines.map((l) => (l.type === 'agent_step' ? { ...l, parser: { version: 1, status: 'invalid:because', repairs: [] } } : l));
    expect(() => roundTrip(bad as typeof lines)).toThrow(/line 2/);
  });

  it('has no graph when the rollout was not measured', () => {
    const trace = roundTrip(traceLines('r1', EPISODE));
    expect(trace.graph).toBeNull();
    expect(trace.episode).toEqual(EPISODE);
  });
});

describe('decodeTrace refuses, naming the line', () => {
  const valid = (): unknown[] => JSON.parse(`[${traceText(traceLines('r1', EPISODE, GRAPH)).trim().split('\n').join(',')}]`) as unknown[];
  const cases: [string, (lines: unknown[]) => unknown[], RegExp][] = [
    ['an empty trace', () => [], /line 1: the trace is empty/],
    ['a newer version', (l) => l.map((x) => ({ ...(x as object), schema_version: 4 })), /schema_version 4 is not one this authbench reads/],
    ['a relay line in a version 2 trace', (l) => [...l.slice(0, 10), { type: 'relay_exchange', schema_version: 2, record: {} }, ...l.slice(10)], /line 11: not a valid trace line/],
    ['mixed versions', (l) => l.map((x, i) => (i === 4 ? { ...(x as object), schema_version: 1 } : x)), /line 5: schema_version 1 in a version 2 trace/],
    ['an unknown line type', (l) => [...l.slice(0, 2), { type: 'note', schema_version: 2 }, ...l.slice(2)], /line 3: not a valid trace line/],
    ['a malformed event', (l) => l.map((x, i) => (i === 3 ? { ...(x as object), event: { kind: 'file' } } : x)), /line 4: not a valid trace line/],
    ['a syscall of another proposal', (l) => l.map((x, i) => (i === 3 ? { ...(x as object), command_id: 'call_9' } : x)), /line 4: a syscall of call_9 not right after its proposal/],
    ['a proposal outside its turn', (l) => l.map((x, i) => (i === 2 ? { ...(x as object), turn: 2 } : x)), /line 3: a proposal of turn 2/],
    ['no episode_end', (l) => l.filter((x) => (x as { type: string }).type !== 'episode_end' && !(x as { type: string }).type.startsWith('graph')), /no episode_end line/],
    ['no rollout line first', (l) => l.slice(1), /line 1: the first line is agent_step, not rollout/],
    ['a malformed graph node', (l) => l.map((x) => ((x as { type: string }).type === 'graph_node' ? { ...(x as object), node: { id: 'n', type: 'proposal', labels: [], attrs: {} } } : x)), /line 11: not a valid trace line/],
    ['a graph line before episode_end', (l) => [...l.slice(0, 2), l.at(-1), ...l.slice(2)], /line 3: a graph_edge before episode_end/],
  ];
  it.each(cases)('%s', (_name, mutate, message) => {
    expect(() => decodeTrace(mutate(valid()), 'trace.jsonl')).toThrow(message);
    expect(() => decodeTrace(mutate(valid()), 'trace.jsonl')).toThrow(AuthbenchError);
  });
});

describe('version-1 traces', () => {
  const v1 = (attrs: unknown): unknown[] => [
    { type: 'rollout', schema_version: 1, rollout_id: 'r', task_id: 't', model: 'm', defense: { name: 'none', version: '1' } },
    { type: 'episode_end', schema_version: 1, end_reason: 'done' },
    { type: 'graph_node', schema_version: 1, id: 'n', node_type: 'file', labels: [], attrs },
  ];
  it('reads graph nodes flat, as they were written, and refuses a malformed one', () => {
    expect(decodeTrace(v1({ path: '/app/a' }), 'v1.jsonl').graph?.nodes).toEqual([{ id: 'n', type: 'file', labels: [], attrs: { path: '/app/a' } }]);
    expect(() => decodeTrace(v1({}), 'v1.jsonl')).toThrow(/line 3: not a valid file node/);
  });
});

describe('real traces', () => {
  it('reads a version-2 trace of a real rollout whole: every line type, written back line for line', async () => {
    const text = gunzipSync(await readFile(join(FIXTURES, 'v2-seccomp-denials-visible.jsonl.gz'))).toString('utf8');
    expect(new Set(text.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type))).toEqual(new Set(TRACE_LINE_TYPES));
    const trace = parseTrace(text, 'v2.jsonl');
    if (trace.episode === null || trace.graph === null) throw new Error('the fixture is a measured version-2 trace');
    expect(EpisodeSchema.parse(trace.episode)).toEqual(trace.episode);
    expect(new Set(trace.episode.steps.flatMap((s) => s.proposals.flatMap((p) => p.events.map((e) => e.kind))))).toEqual(new Set(['exec', 'file', 'network', 'process', 'seccomp']));
    const json = (t: string): unknown[] => t.trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(json(traceText(traceLines(trace.rollout_id, trace.episode, trace.graph)))).toEqual(json(text));
  });

  it('reads a version-1 trace from an older job: steps and graph, every event kind it holds, no episode', async () => {
    const text = gunzipSync(await readFile(join(FIXTURES, 'v1-seccomp-denials-visible.jsonl.gz'))).toString('utf8');
    const trace = parseTrace(text, 'v1.jsonl');
    expect(trace).toMatchObject({ schema_version: 1, rollout_id: 'seccomp-denials-visible__gold', task_id: 'log-triage', episode: null });
    const events = trace.steps.flatMap((s) => s.proposals.flatMap((p) => p.events));
    expect(events).toHaveLength(text.split('\n').filter((l) => l.includes('"type":"syscall"')).length);
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['exec', 'file', 'network', 'process', 'seccomp']));
    expect(trace.graph?.nodes.length).toBeGreaterThan(0);
    expect(trace.graph?.edges.length).toBeGreaterThan(0);
  });
});

describe('trace files', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'authbench-trace-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is written once: with the graph after measurement, never again when the scope ends', async () => {
    const dir = join(root, 'measured');
    {
      await using trace = pendingTrace(dir, 'r1', EPISODE);
      await trace.write(GRAPH);
      await expect(trace.write(GRAPH)).rejects.toThrow(/already written/);
    }
    expect((await readTrace(dir))?.graph).toEqual(GRAPH);
    expect(await readEpisode(dir)).toEqual(EPISODE);
  });

  it('is written with the episode alone when the rollout ends before measurement, even by a throw', async () => {
    const dir = join(root, 'early');
    const end = async (): Promise<void> => {
      await using _trace = pendingTrace(dir, 'r1', EPISODE);
      throw new Error('validators failed');
    };
    await expect(end()).rejects.toThrow('validators failed');
    const trace = await readTrace(dir);
    expect(trace?.graph).toBeNull();
    expect(trace?.episode).toEqual(EPISODE);
  });

  it('reads nothing from a rollout without a trace, and refuses a version-1 trace as an episode', async () => {
    expect(await readTrace(join(root, 'none'))).toBeNull();
    expect(await readEpisode(join(root, 'none'))).toBeUndefined();
    const dir = join(root, 'v1');
    await pendingTrace(dir, 'x', EPISODE).write();
    await writeFile(join(dir, TRACE_FILE), await readFile(join(FIXTURES, 'v1-seccomp-denials-visible.jsonl.gz')));
    await expect(readEpisode(dir)).rejects.toThrow(/version 1 trace, which does not hold the whole episode/);
  });
});
