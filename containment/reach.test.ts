import { describe, expect, it } from 'vitest';
import { longestJourneys, temporalReach } from './reach.ts';
import type { EdgeKind, GraphEdge, TraceGraph } from './schema.ts';

const e = (from: string, to: string, seq: number[], kind: EdgeKind = 'taint'): GraphEdge => ({ from, to, kind, seq });
const g = (...edges: GraphEdge[]): TraceGraph => ({ nodes: [], edges });

describe('temporalReach', () => {
  it('follows hops that move forward in time, with the earliest arrival', () => {
    const r = temporalReach(g(e('s', 'a', [1]), e('a', 'b', [2, 5]), e('b', 'c', [3])), ['s']);
    expect(Object.fromEntries(r)).toEqual({ s: -1, a: 1, b: 2, c: 3 });
  });

  it('does not follow a hop that happened before the node was reached', () => {
    // b read a at 1; the source reached a only at 4.
    expect([...temporalReach(g(e('s', 'a', [4]), e('a', 'b', [1])), ['s']).keys()]).toEqual(['s', 'a']);
  });

  it('uses a later repeat of an edge', () => {
    expect(temporalReach(g(e('s', 'a', [4]), e('a', 'b', [1, 6])), ['s']).get('b')).toBe(6);
  });

  it('filters by edge kind', () => {
    const graph = g(e('s', 'a', [1], 'structural'), e('s', 'b', [2]));
    expect([...temporalReach(graph, ['s'], new Set(['taint'])).keys()]).toEqual(['s', 'b']);
    expect([...temporalReach(graph, ['s']).keys()]).toEqual(['s', 'a', 'b']);
  });
});

describe('longestJourneys', () => {
  it('counts the most hops of any forward journey', () => {
    const graph = g(e('s', 'a', [1]), e('a', 'x', [2]), e('s', 'x', [3]), e('a', 'b', [4]), e('b', 'x', [5]), e('x', 'y', [0]));
    const d = longestJourneys(graph, ['s']);
    expect(d.get('x')).toBe(3);
    expect(d.has('y')).toBe(false);
  });
});
