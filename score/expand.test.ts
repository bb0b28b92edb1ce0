import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { covers } from '../sandbox/paths/index.ts';
import { AxisIndex, literalEnds } from './expand.ts';

// Small alphabets so random patterns and paths actually collide; `-` and `.`
// sort before `/`, which exercises the sibling-between-dir-and-dir/ case.
const name = fc.constantFrom('a', 'b', 'ab', 'a.b', 'a-b', 'b.c', '.h', 'x y', 'a]', 'a[b', 'ba]');
const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((segs) => `/${segs.join('/')}`);
const globSeg = fc.constantFrom('*', '?', 'a*', '*.b', '[ab]', 'a?b', '[!a]*', 'a', 'ab', 'a-b', 'a.b', '*]', 'a[b', '*a[b', '[]a]*', '[a-b]?');
const pattern = fc
  .tuple(fc.array(globSeg, { minLength: 0, maxLength: 3 }), fc.boolean())
  .map(([segs, recursive]) => (segs.length === 0 ? '/**' : `/${segs.join('/')}${recursive ? '/**' : ''}`));

describe('AxisIndex.expand', () => {
  it('hits exactly the candidates `covers` accepts', () => {
    fc.assert(
      fc.property(fc.array(path, { maxLength: 40 }), fc.array(pattern, { minLength: 1, maxLength: 8 }), (paths, patterns) => {
        const index = new AxisIndex(paths, new Set());
        for (const p of patterns) {
          const got = index.expand(p).hits.map((i) => index.paths[i]);
          const want = index.paths.filter((c) => covers(p, c));
          expect(got).toEqual(want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('memoised results equal fresh ones', () => {
    const index = new AxisIndex(['/a/b', '/a/c', '/a-b/c'], new Set());
    const first = index.expand('/a/*');
    expect(index.expand('/a/*')).toBe(first);
    expect(first.hits.map((i) => index.paths[i])).toEqual(['/a/b', '/a/c']);
  });

  it.each([
    ['a candidate', '/a/b', ['/a/b'], undefined],
    ['a missing path', '/a/zzz', [], '/a/zzz'],
    ['an existing directory', '/a', [], undefined],
    ['a directory-like recursive pattern', '/a/**', ['/a/b', '/a/c'], undefined],
    ['a recursive pattern on a missing base', '/q/**', [], undefined],
    ['a glob matching nothing', '/q/*', [], undefined],
  ])('exact-path rule: %s', (_what, p, hits, extra) => {
    const index = new AxisIndex(['/a/b', '/a/c', '/a-b/c'], new Set(['/', '/a', '/a-b']));
    const e = index.expand(p);
    expect(e.hits.map((i) => index.paths[i])).toEqual(hits);
    expect(e.extra).toBe(extra);
  });
});

describe('literalEnds', () => {
  it.each([
    ['*.py', '', '.py'],
    ['python3*', 'python3', ''],
    ['a[bc]d?e', 'a', 'e'],
    ['plain', 'plain', ''],
    ['x*]', 'x', ''],
    ['a[b', 'a', 'b'],
  ])('%s -> head %j, tail %j', (seg, head, tail) => expect(literalEnds(seg)).toEqual({ head, tail }));
});
