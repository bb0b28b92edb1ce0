import { describe, expect, it } from 'vitest';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import { applyOverrides, OverridesSchema, parseOverrides, type Overrides } from './overrides.ts';
import { serializeGold } from './schema.ts';
import { contextFor, execEv, fileEv } from './test-support.ts';

const gold = buildGold(
  deriveGold([fileEv('read', '/app/data.csv'), fileEv('read', '/app/noise.log'), fileEv('create', '/app/out.json'), execEv('/usr/bin/cat')], contextFor()),
  { taskId: 't', provenance: { image_digest: 'sha256:1', solve_sh_sha256: 'abc' } },
);

const overrides = (value: unknown): Overrides => OverridesSchema.parse(value);

describe('overrides', () => {
  it('parses strictly, normalises entries, fills absent lists', () => {
    const { overrides: o, problems } = parseOverrides('{"remove": {"read": ["/app//noise.log"]}, "notes": "n"}', 'overrides.json');
    expect(problems).toEqual([]);
    expect(o).toEqual({
      add: { read: [], write: [], execute: [] },
      remove: { read: ['/app/noise.log'], write: [], execute: [] },
      sensitive: { read: [], write: [], execute: [] },
      notes: 'n',
    });
    const bad = parseOverrides('{"add": {"read": ["x"], "exec": []}, "extra": 1}', 'overrides.json').problems;
    expect(bad.map((p) => p.field)).toEqual(expect.arrayContaining(['add.read.0']));
    expect(bad.length).toBeGreaterThanOrEqual(3);
  });

  it('removes, adds, marks sensitive and records the overrides hash', () => {
    const o = overrides({
      add: { write: ['/app/report.md'], execute: ['/usr/bin/jq'] },
      remove: { read: ['/app/noise.log'] },
      sensitive: { read: ['/app/secret.key'] },
      reviewed_by: 'ann',
    });
    const { gold: out, problems } = applyOverrides(gold, o);
    expect(problems).toEqual([]);
    expect(out.required.read).toEqual(['/app/data.csv']);
    expect(out.required.write).toEqual(['/app/out.json', '/app/report.md']);
    expect(out.required.execute).toEqual(['/usr/bin/cat', '/usr/bin/jq']);
    expect(out.sensitive.read).toEqual(['/app/secret.key']);
    expect(out.provenance.overrides_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is deterministic and survives re-derivation (applied to a fresh gold gives the same bytes)', () => {
    const o = overrides({ remove: { read: ['/app/noise.log'] }, add: { read: ['/app/extra.txt'] } });
    const once = serializeGold(applyOverrides(gold, o).gold);
    const again = serializeGold(applyOverrides(structuredClone(gold), o).gold);
    expect(once).toBe(again);
  });

  it('warns about stale removals and additions outside the roots; errors on conflicts', () => {
    const o = overrides({
      remove: { read: ['/app/gone.txt', '/app/both'] },
      add: { read: ['/etc/app.conf', '/app/both', '/app/data.csv'] },
      sensitive: { write: ['/etc/shadow'] },
    });
    const { gold: out, problems } = applyOverrides(gold, o);
    const byField = Object.fromEntries(problems.map((p) => [p.field, `${p.severity}: ${p.message}`]));
    expect(byField['remove.read[0]']).toMatch(/^warning: \/app\/gone.txt is not in the gold set/);
    expect(byField['remove.read[1]']).toMatch(/^error: \/app\/both is both added and removed/);
    expect(byField['add.read[0]']).toMatch(/^warning: \/etc\/app.conf is outside the read scored roots \(\/app\); added to support/);
    expect(byField['add.read[2]']).toMatch(/^warning: \/app\/data.csv is already in required/);
    expect(byField['sensitive.write[0]']).toMatch(/^error: \/etc\/shadow is outside the write scored roots/);
    expect(out.support.read).toEqual(['/etc/app.conf']);
    expect(out.required.read).not.toContain('/app/both');
    expect(out.sensitive.write).toEqual([]);
  });
});
