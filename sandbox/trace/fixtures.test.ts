/**
 * The parser against real strace output recorded with straceArgv's options
 * (see fixtures/README.md). Each `<name>.strace` has a `<name>.expect.json`
 * naming events that must appear and the unparsed lines that are explained.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FILE_OPS, NETWORK_OPS, parseStrace, StraceParser, TraceEventSchema, type TraceEvent } from './index.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');

const ExpectFileSchema = z.object({
  cwd: z.string().describe('cwd the traced command started in'),
  events: z.array(z.record(z.string(), z.unknown())).describe('partial events; each must match one parsed event'),
  unparsed: z
    .array(
      z.object({
        count: z.number().int().describe('how many unparsed events carry this reason'),
        reason: z.string().describe('substring of their reason'),
        why: z.string().describe('why the parser cannot do better'),
      }),
    )
    .default([])
    .describe('unparsed events that are expected, each explained'),
});

const names = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.strace'))
  .map((f) => f.slice(0, -'.strace'.length))
  .sort();

function load(name: string) {
  const text = readFileSync(join(FIXTURES, `${name}.strace`), 'utf8');
  const spec = ExpectFileSchema.parse(JSON.parse(readFileSync(join(FIXTURES, `${name}.expect.json`), 'utf8')));
  return { text, spec, events: parseStrace(text, { cwd: spec.cwd }) };
}

function feed(parser: StraceParser, chunks: Iterable<string | Uint8Array>): TraceEvent[] {
  const out: TraceEvent[] = [];
  for (const c of chunks) out.push(...parser.push(c));
  out.push(...parser.end());
  return out;
}

it('has the fixtures the tests below rely on', () => {
  expect(names).toEqual(
    expect.arrayContaining(['denied', 'gcc', 'git', 'network', 'python-files', 'shell-ops', 'tar', 'uid-drop']),
  );
});

describe.each(names)('fixture %s', (name) => {
  const { text, spec, events } = load(name);

  it('yields events that satisfy the schema', () => {
    expect(events.length).toBeGreaterThan(10);
    for (const e of events) expect(TraceEventSchema.safeParse(e).error).toBeUndefined();
  });

  it('contains the expected events', () => {
    for (const want of spec.events) expect(events).toContainEqual(expect.objectContaining(want));
  });

  it('has no unparsed events beyond the explained ones', () => {
    const unparsed = events.filter((e) => e.kind === 'unparsed');
    const unexplained = unparsed.filter((e) => !spec.unparsed.some((u) => e.reason.includes(u.reason)));
    expect(unexplained).toEqual([]);
    for (const u of spec.unparsed) {
      expect(unparsed.filter((e) => e.reason.includes(u.reason))).toHaveLength(u.count);
    }
  });

  it('resolves every path to an absolute one', () => {
    for (const e of events) {
      if (e.kind === 'exec') expect(e.path).toMatch(/^\//);
      if (e.kind === 'file') {
        expect(e.path).toMatch(e.op === 'memfd' ? /^memfd:/ : /^\/(?!.*\/\.\.?(\/|$))/);
        if (e.path2 !== undefined) expect(e.path2).toMatch(/^\//);
      }
    }
  });

  it('parses the same when fed in arbitrary chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...[...cuts].sort((a, b) => a - b), text.length];
        const chunks = points.slice(1).map((end, i) => text.slice(points[i], end));
        expect(feed(new StraceParser({ cwd: spec.cwd }), chunks)).toEqual(events);
      }),
      { numRuns: 20 },
    );
  });
});

it('parses a fixture fed one character at a time, and one byte at a time, identically', () => {
  const { text, spec, events } = load('shell-ops');
  expect(feed(new StraceParser({ cwd: spec.cwd }), text)).toEqual(events);
  const bytes = new TextEncoder().encode(text);
  const byteChunks = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  expect(feed(new StraceParser({ cwd: spec.cwd }), byteChunks)).toEqual(events);
});

it('covers every event kind, file op and network op across the fixtures', () => {
  const all = names.flatMap((n) => load(n).events);
  const kinds = new Set(all.map((e) => e.kind));
  expect([...kinds].sort()).toEqual(['exec', 'file', 'network', 'process', 'unparsed']);
  const fileOps = new Set(all.flatMap((e) => (e.kind === 'file' ? [e.op] : [])));
  // memfd only appears in synthetic tests: no everyday tool in the fixtures calls memfd_create.
  expect(FILE_OPS.filter((op) => !fileOps.has(op))).toEqual(['memfd']);
  const netOps = new Set(all.flatMap((e) => (e.kind === 'network' ? [e.op] : [])));
  expect(NETWORK_OPS.filter((op) => !netOps.has(op))).toEqual([]);
  expect(all.some((e) => e.kind === 'file' && e.denied)).toBe(true);
});
