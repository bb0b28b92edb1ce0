/**
 * Reachability that moves forward in time. Graph nodes are long-lived (a file,
 * a process), so a plain path could run backwards: a process that read a file
 * before someone else wrote it was not influenced by that write. Every edge
 * carries the positions in time at which it happened (`seq`); a path counts
 * only when each hop happens after the previous one (a temporal journey).
 */
import type { EdgeKind, TraceGraph } from './schema.ts';

interface Occurrence {
  from: string;
  to: string;
  at: number;
}

function occurrences(graph: TraceGraph, kinds: ReadonlySet<EdgeKind> | undefined): Occurrence[] {
  const out: Occurrence[] = [];
  for (const e of graph.edges) {
    if (kinds !== undefined && !kinds.has(e.kind)) continue;
    for (const at of e.seq) out.push({ from: e.from, to: e.to, at });
  }
  return out.sort((a, b) => a.at - b.at);
}

/**
 * Nodes reachable from `starts` by journeys over edges of `kinds` (all kinds
 * when omitted), with the earliest time each is reached; starts map to -1.
 */
export function temporalReach(graph: TraceGraph, starts: Iterable<string>, kinds?: ReadonlySet<EdgeKind>): Map<string, number> {
  const arrival = new Map<string, number>();
  for (const s of starts) arrival.set(s, -1);
  for (const o of occurrences(graph, kinds)) {
    const at = arrival.get(o.from);
    if (at !== undefined && at < o.at && !arrival.has(o.to)) arrival.set(o.to, o.at);
  }
  return arrival;
}

/** For every node reachable from `starts`, the most hops of any journey to it (starts: 0). */
export function longestJourneys(graph: TraceGraph, starts: Iterable<string>, kinds?: ReadonlySet<EdgeKind>): Map<string, number> {
  const depth = new Map<string, number>();
  for (const s of starts) depth.set(s, 0);
  // Processing occurrences in time order, a node's depth only holds journeys that arrived before the current one.
  for (const o of occurrences(graph, kinds)) {
    const d = depth.get(o.from);
    if (d !== undefined) depth.set(o.to, Math.max(depth.get(o.to) ?? 0, d + 1));
  }
  return depth;
}
