import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../sandbox/trace/index.ts';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import type { GoldFile } from './schema.ts';
import { flakyCount, mergeRuns } from './stability.ts';
import { contextFor, fileEv } from './test-support.ts';

const provenance = { image_digest: 'sha256:1', solve_sh_sha256: 'abc' };
const run = (events: TraceEvent[], p = provenance): GoldFile => buildGold(deriveGold(events, contextFor()), { taskId: 't', provenance: p });

describe('mergeRuns', () => {
  const a = run([fileEv('read', '/app/data.csv'), fileEv('create', '/app/out/obj/ab12'), fileEv('read', '/etc/app.conf')]);
  const b = run([fileEv('read', '/app/data.csv'), fileEv('create', '/app/out/obj/cd34'), fileEv('create', '/srv/outbox/r.json')]);

  it('unions needs, lists entries only some runs showed as flaky, sums runs', () => {
    const merged = mergeRuns([a, b]);
    expect(merged.required.write).toEqual(['/app/out/obj/ab12', '/app/out/obj/cd34', '/srv/outbox/r.json']);
    expect(merged.flaky.write).toEqual(['/app/out/obj/ab12', '/app/out/obj/cd34', '/srv/outbox/r.json']);
    expect(merged.flaky.read).toEqual(['/etc/app.conf']);
    expect(merged.required.read).toEqual(['/app/data.csv']);
    expect(merged.provenance.runs).toBe(2);
    expect(flakyCount(merged)).toBe(4);
  });

  it('re-splits required/support by the union of inferred roots', () => {
    const c = run([fileEv('read', '/srv/outbox/template.json')]);
    expect(c.support.read).toEqual(['/srv/outbox/template.json']);
    const merged = mergeRuns([c, b]);
    expect(merged.scored_roots.read).toEqual(['/app', '/srv/outbox']);
    expect(merged.required.read).toEqual(['/app/data.csv', '/srv/outbox/template.json']);
    expect(merged.support.read).toEqual([]);
  });

  it('identical runs are not flaky and merge to the same sets', () => {
    const merged = mergeRuns([a, a, a]);
    expect(flakyCount(merged)).toBe(0);
    expect({ ...merged, provenance: undefined }).toEqual({ ...a, provenance: undefined });
    expect(merged.provenance.runs).toBe(3);
  });

  it('refuses runs of different images or no runs', () => {
    expect(() => mergeRuns([a, run([], { ...provenance, image_digest: 'sha256:2' })])).toThrow(/different tasks, images or solutions/);
    expect(() => mergeRuns([])).toThrow(/at least one/);
  });
});
