/**
 * A trace graph as trace JSONL lines (`type` + `schema_version` on each), and
 * back. Nodes come first, so a reader meets every edge's endpoints before it.
 */
import { AuthbenchError, formatProblem, zodProblems } from '../core/index.ts';
import { GRAPH_SCHEMA_VERSION, GraphEdgeSchema, GraphLineSchema, GraphNodeSchema, type GraphLine, type TraceGraph } from './schema.ts';

export function graphLines(graph: TraceGraph): GraphLine[] {
  return [
    ...graph.nodes.map((n): GraphLine => ({ type: 'graph_node', schema_version: GRAPH_SCHEMA_VERSION, id: n.id, node_type: n.type, labels: n.labels, attrs: n.attrs })),
    ...graph.edges.map((e): GraphLine => ({ type: 'graph_edge', schema_version: GRAPH_SCHEMA_VERSION, from: e.from, to: e.to, kind: e.kind, seq: e.seq })),
  ];
}

/**
 * The graph in a rollout's trace lines (other line types are skipped).
 * `file` names the trace in errors; a malformed graph line is TRACE_UNREADABLE.
 */
export function graphFromLines(lines: readonly unknown[], file = 'trace'): TraceGraph {
  const graph: TraceGraph = { nodes: [], edges: [] };
  lines.forEach((raw, i) => {
    const type = typeof raw === 'object' && raw !== null && 'type' in raw ? raw.type : undefined;
    if (type !== 'graph_node' && type !== 'graph_edge') return;
    const fail = (error: Parameters<typeof zodProblems>[0]): never => {
      throw new AuthbenchError('TRACE_UNREADABLE', `${file} line ${i + 1} is not a valid ${type} line`, {
        file,
        field: `line ${i + 1}`,
        details: zodProblems(error, file).map(formatProblem),
      });
    };
    const line = GraphLineSchema.safeParse(raw);
    if (!line.success) return fail(line.error);
    if (line.data.type === 'graph_edge') {
      const { type: _t, schema_version: _v, ...edge } = line.data;
      graph.edges.push(GraphEdgeSchema.parse(edge));
      return;
    }
    const node = GraphNodeSchema.safeParse({ id: line.data.id, type: line.data.node_type, labels: line.data.labels, attrs: line.data.attrs });
    if (!node.success) return fail(node.error);
    graph.nodes.push(node.data);
  });
  return graph;
}
