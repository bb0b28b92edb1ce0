import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { graphFromLines, graphLines } from './lines.ts';
import { config, ev, prop, step } from './test-support.ts';
import { buildTraceGraph } from './walk.ts';

const graph = buildTraceGraph(
  {
    steps: [
      step(1, prop('c1', 'cat /app/inbox/n', [ev.read(10, '/app/inbox/n'), ev.fork(10, 11), ev.write(11, '/app/o')], { stdout: 'x' })),
      step(2, prop('c2', 'rm /app/o', [], { decision: 'block' })),
    ],
  },
  config(),
);

describe('graph lines', () => {
  it('writes nodes then edges, each with type and schema_version', () => {
    const lines = graphLines(graph);
    expect(lines).toHaveLength(graph.nodes.length + graph.edges.length);
    expect(lines[0]).toMatchObject({ type: 'graph_node', schema_version: 1, id: 'source:untrusted:/app/inbox/**', node_type: 'source' });
    expect(lines.at(-1)).toMatchObject({ type: 'graph_edge', schema_version: 1 });
    expect(lines.findIndex((l) => l.type === 'graph_edge')).toBe(graph.nodes.length);
  });

  it('round-trips through JSON, skipping other trace lines', () => {
    const jsonl = [{ type: 'rollout', schema_version: 1 }, ...graphLines(graph)].map((l) => JSON.stringify(l));
    expect(graphFromLines(jsonl.map((l) => JSON.parse(l) as unknown))).toEqual(graph);
  });

  it('rejects a malformed graph line, naming the line', () => {
    const lines: unknown[] = graphLines(graph);
    lines[2] = { ...(lines[2] as object), labels: 'oops' };
    expect(() => graphFromLines(lines, 'trace.jsonl')).toThrow(AuthbenchError);
    expect(() => graphFromLines(lines, 'trace.jsonl')).toThrow(/trace.jsonl line 3/);
    expect(() => graphFromLines([{ type: 'graph_node', schema_version: 1, id: 'x', node_type: 'file', labels: [], attrs: {} }])).toThrow(/not a valid graph_node/);
  });
});
