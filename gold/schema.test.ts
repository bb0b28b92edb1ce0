import { describe, expect, it } from 'vitest';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import { GoldFileSchema, parseGold, serializeGold, type GoldFile } from './schema.ts';
import { contextFor, fileEv } from './test-support.ts';

function sample(): GoldFile {
  const d = deriveGold([fileEv('read', '/app/data.csv'), fileEv('create', '/app/out.json')], contextFor());
  return buildGold(d, { taskId: 'demo', provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc', strace_version: '6.1' } });
}

describe('gold file', () => {
  it('round-trips through serializeGold/parseGold byte for byte', () => {
    const text = serializeGold(sample());
    const parsed = parseGold(text, 'gold.json');
    expect(parsed.problems).toEqual([]);
    expect(serializeGold(parsed.gold as GoldFile)).toBe(text);
  });

  it('serialises with sorted keys and lists, no timestamps, a trailing newline', () => {
    const gold = sample();
    const shuffled: GoldFile = { ...gold, required: { execute: [], write: ['/app/out.json'], read: ['/app/z', '/app/data.csv'] } };
    const text = serializeGold(shuffled);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.indexOf('"/app/data.csv"')).toBeLessThan(text.indexOf('"/app/z"'));
    const keys = Object.keys(JSON.parse(text) as object);
    expect(keys).toEqual([...keys].sort());
    expect(text).not.toMatch(/"(time|date|created)/);
  });

  it('reports unknown keys, bad patterns and duplicates with their field', () => {
    const value = JSON.parse(serializeGold(sample())) as Record<string, unknown>;
    const bad = { ...value, extra: 1, required: { read: ['relative/path', '/a/**/b', '/a/../b'], write: ['/x', '/x'], execute: [] } };
    const { problems } = parseGold(JSON.stringify(bad), 'gold.json');
    const fields = problems.map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(['required.read.0', 'required.read.1', 'required.read.2', 'required.write.1']));
    expect(problems.some((p) => p.message.includes('extra'))).toBe(true);
    expect(parseGold('{', 'gold.json').problems[0]?.message).toMatch(/not valid JSON/);
  });

  it('describes every field', () => {
    for (const [key, field] of Object.entries(GoldFileSchema.shape)) expect(field.description, key).toBeTruthy();
  });
});

describe('provenance: the tracer', () => {
  it('records which tracer watched the oracle, its version and a fallback, and reads them back', () => {
    const d = deriveGold([fileEv('read', '/app/data.csv')], contextFor());
    const gold = buildGold(d, {
      taskId: 'demo',
      provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc', tracer: 'strace', strace_version: '6.1', tracer_fallback: 'eBPF unavailable: not root' },
    });
    const parsed = parseGold(serializeGold(gold), 'gold.json');
    expect(parsed.problems).toEqual([]);
    expect(parsed.gold?.provenance).toMatchObject({ tracer: 'strace', strace_version: '6.1', tracer_fallback: 'eBPF unavailable: not root' });
    const ebpf = buildGold(d, { taskId: 'demo', provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc', tracer: 'ebpf', bpftrace_version: '0.17.0' } });
    expect(ebpf.provenance).toMatchObject({ tracer: 'ebpf', bpftrace_version: '0.17.0' });
    expect(ebpf.provenance).not.toHaveProperty('tracer_fallback');
    const native = buildGold(d, { taskId: 'demo', provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc', tracer: 'ebpf', ebpf_backend: 'native', ab_ebpf_version: '0123456789abcdef' } });
    expect(GoldFileSchema.parse(native).provenance).toMatchObject({ tracer: 'ebpf', ebpf_backend: 'native', ab_ebpf_version: '0123456789abcdef' });
    expect(native.provenance).not.toHaveProperty('bpftrace_version');
  });

  it('still loads a gold written before the tracer was recorded, and refuses an unknown tracer', () => {
    const value = JSON.parse(serializeGold(sample())) as { provenance: Record<string, unknown> };
    expect(value.provenance).not.toHaveProperty('tracer');
    expect(parseGold(JSON.stringify(value), 'gold.json').problems).toEqual([]);
    const unknown = { ...value, provenance: { ...value.provenance, tracer: 'dtrace' } };
    expect(parseGold(JSON.stringify(unknown), 'gold.json').problems.map((p) => p.field)).toContain('provenance.tracer');
  });
});
