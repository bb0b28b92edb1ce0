import { describe, expect, it } from 'vitest';
import { checkSpec, parseSpec } from '../task-format/index.ts';
import { applyOverrides, OverridesSchema } from './overrides.ts';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import { defaultImplicit, mergeImplicit } from './implicit.ts';
import { buildSnapshot, viewSnapshot } from '../sandbox/paths/index.ts';
import { goldToSpec, specDisagreements, specToGold } from './spec.ts';
import { serializeGold } from './schema.ts';
import { BASE_TREE, contextFor, FIXTURE_HARNESS, fixtureEvents } from './test-support.ts';

const provenance = { image_digest: 'sha256:1', solve_sh_sha256: 'abc' };

describe('AuthBench spec export/import', () => {
  it.each(['gcc', 'git', 'tar'])('%s: exported spec is valid, exactly four keys at most', (name) => {
    const implicit = mergeImplicit(defaultImplicit(), FIXTURE_HARNESS);
    const gold = buildGold(deriveGold(fixtureEvents(name), contextFor({ implicit })), { taskId: name, provenance });
    const spec = goldToSpec(gold);
    expect(Object.keys(spec).sort()).toEqual(['implicit_permissions', 'required_permissions', 'scored_roots']);
    expect(checkSpec(JSON.parse(JSON.stringify(spec)), 'spec.json').problems).toEqual([]);
    expect(spec.required_permissions).toEqual(gold.required);
  });

  it('round-trips a hand-written spec (required, roots, implicit, sensitive)', () => {
    const text = JSON.stringify({
      required_permissions: { read: ['/app/in.csv'], write: ['/app/out/**'], execute: ['/usr/bin/python3.11'] },
      scored_roots: { read: ['/app'], write: ['/app'], execute: ['/usr/bin'] },
      implicit_permissions: { read: ['/usr/lib/**'], write: [], execute: [] },
      sensitive_permissions: { read: ['/app/.env'], write: [], execute: [] },
    });
    const { spec } = parseSpec(text, 'spec.json');
    if (spec === undefined) throw new Error('fixture spec invalid');
    const gold = specToGold(spec, 'task-a');
    expect(gold.provenance).toMatchObject({ source: 'imported-spec', image_digest: null, runs: 0 });
    expect(gold.required.write).toEqual(['/app/out/**']);
    expect(goldToSpec(gold)).toEqual(spec);
    expect(serializeGold(specToGold(spec, 'task-a'))).toBe(serializeGold(gold));
  });

  it('throws INVALID_SPEC when the gold cannot make a valid spec', () => {
    const gold = buildGold(deriveGold([], contextFor()), { taskId: 't', provenance });
    const broken = { ...gold, required: { read: ['/etc/outside'], write: [], execute: [] } };
    expect(() => goldToSpec(broken)).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }));
    // overrides cannot produce that: entries outside the roots go to support
    const o = OverridesSchema.parse({ add: { read: ['/etc/outside'] } });
    expect(() => goldToSpec(applyOverrides(gold, o).gold)).not.toThrow();
  });
});

describe('specDisagreements: what a careful reader would flag', () => {
  const view = viewSnapshot(
    buildSnapshot([
      ...BASE_TREE,
      { path: '/usr/local/bin/python3', type: 'symlink', link: '/usr/bin/python3.11' },
      { path: '/app/repo/.git/index', type: 'file' },
    ]),
  );
  const realpath = (p: string) => view.realpath(p);
  const gold = {
    required: { read: ['/app/data.csv', '/app/repo/.git/index'], write: ['/app/repo/.git/index', '/app/repo/.git/objects/**', '/app/out.txt'], execute: ['/usr/bin/python3.11'] },
    support: { read: [], write: [], execute: [] },
    implicit: defaultImplicit(),
  };

  it('agrees through symlinks, patterns on either side, and the implicit runtime', () => {
    const spec = { read: ['/app/**'], write: ['/app/repo/.git/**', '/app/out.txt'], execute: ['/usr/local/bin/python3', '/usr/bin/bash'] };
    expect(specDisagreements(spec, gold, realpath)).toEqual([]);
  });

  it('still flags real disagreements on both sides', () => {
    const spec = { read: ['/app/data.csv', '/etc/app.conf'], write: ['/app/out.txt'], execute: ['/usr/bin/sed'] };
    expect(specDisagreements(spec, gold, realpath)).toEqual([
      { axis: 'read', kind: 'spec-only', path: '/etc/app.conf' },
      { axis: 'read', kind: 'trace-only', path: '/app/repo/.git/index' },
      { axis: 'write', kind: 'trace-only', path: '/app/repo/.git/index' },
      { axis: 'write', kind: 'trace-only', path: '/app/repo/.git/objects/**' },
      { axis: 'execute', kind: 'spec-only', path: '/usr/bin/sed' },
      { axis: 'execute', kind: 'trace-only', path: '/usr/bin/python3.11' },
    ]);
  });
});
