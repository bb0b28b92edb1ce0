import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ManifestSchema } from '../suite/index.ts';
import { metricGaps, smokeLiveRecoverySubset, smokeLiveSubset, smokeSubset, smokeTopologySubset, topologyOf, type PlannedScenario } from './reproduce-plan.ts';

const sc = (id: string, family: string, stage: string, instance: number, parameters: Record<string, unknown> = {}): PlannedScenario => ({ id, family, stage, instance, parameters });

// STAGES order: c rotates onto security, b onto active-tainted, a onto clean, d onto memory-recovery.
const scenarios = [
  sc('c-sec-0', 'c', 'security', 0),
  sc('c-sec-lsn-0', 'c', 'security', 0, { sink: 'listener' }),
  sc('b-act-0', 'b', 'active-tainted', 0),
  sc('b-mem-live-0', 'b', 'memory-recovery', 0, { memory_mode: 'persistent' }),
  sc('a-cln-0', 'a', 'clean', 0),
  sc('a-mem-0', 'a', 'memory-recovery', 0),
  sc('a-cln-1', 'a', 'clean', 1),
  sc('a-mem-live-0', 'a', 'memory-recovery', 0, { memory_mode: 'persistent' }),
  sc('a-mem-ses-0', 'a', 'memory-recovery', 0, { memory_mode: 'session' }),
  sc('d-mem-0', 'd', 'memory-recovery', 0),
  sc('d-mem-live-0', 'd', 'memory-recovery', 0, { memory_mode: 'persistent' }),
  sc('d-mem-live-1', 'd', 'memory-recovery', 1, { memory_mode: 'persistent' }),
];

describe('smoke plan', () => {
  it('takes every instance-0 topology scenario for the cross-agent control, and no other', () => {
    const withTopologies = [...scenarios, sc('c-sec-sw-0', 'c', 'security', 0, { topology: 'supervisor-worker' }), sc('c-sec-pc-0', 'c', 'security', 0, { topology: 'peer-chain' }), sc('c-sec-sw-1', 'c', 'security', 1, { topology: 'supervisor-worker' })];
    expect(smokeTopologySubset(withTopologies)).toEqual(['c-sec-sw-0', 'c-sec-pc-0']);
    expect(smokeTopologySubset(scenarios)).toEqual([]);
    expect(topologyOf(sc('x', 'c', 'security', 0, { topology: 'peer-chain' }))).toBe('peer-chain');
    expect(smokeSubset(withTopologies)).toEqual(smokeSubset(scenarios));
  });

  it('takes one plain instance-0 scenario per family, the stage rotating, no live-memory or listener variant', () => {
    expect(smokeSubset(scenarios)).toEqual(['c-sec-0', 'b-act-0', 'a-cln-0', 'd-mem-0']);
  });

  it('takes every instance-0 live scenario; a slice only its memory families\' and every session control with its persistent twin', () => {
    expect(smokeLiveSubset(scenarios)).toEqual(['b-mem-live-0', 'a-mem-live-0', 'a-mem-ses-0', 'd-mem-live-0']);
    expect(smokeLiveSubset(scenarios, smokeSubset(scenarios))).toEqual(['a-mem-live-0', 'a-mem-ses-0', 'd-mem-live-0']);
    // A slice without a memory-stage scenario still carries the control pair.
    expect(smokeLiveSubset(scenarios, ['a-cln-0'])).toEqual(['a-mem-live-0', 'a-mem-ses-0']);
  });

  it('takes the live recovery scenarios apart from the live ones: every instance-0 one, a slice one (its memory family\'s, else the first)', () => {
    const rec = (id: string, family: string, instance = 0) => sc(id, family, 'memory-recovery', instance, { memory_mode: 'persistent', recovery: 'scrub' });
    const withRecs = [...scenarios, rec('b-mem-rec-0', 'b'), rec('d-mem-rec-0', 'd'), rec('d-mem-rec-1', 'd', 1)];
    expect(smokeLiveRecoverySubset(withRecs)).toEqual(['b-mem-rec-0', 'd-mem-rec-0']);
    expect(smokeLiveRecoverySubset(withRecs, smokeSubset(withRecs))).toEqual(['d-mem-rec-0']);
    expect(smokeLiveRecoverySubset(withRecs, ['a-cln-0'])).toEqual(['b-mem-rec-0']);
    expect(smokeLiveSubset(withRecs)).toEqual(smokeLiveSubset(scenarios));
    expect(smokeLiveRecoverySubset(scenarios)).toEqual([]);
    // A baked memory scenario has a recovery objective too, but no live episodes.
    expect(smokeLiveRecoverySubset([sc('d-mem-0', 'd', 'memory-recovery', 0, { recovery: 'scrub' })])).toEqual([]);
  });

  it('on the committed suite: 12 scenarios, 3 per stage, and a live scenario for every family plus the session control', () => {
    const manifest = ManifestSchema.parse(JSON.parse(readFileSync('tasks/suite/manifest.json', 'utf8')));
    const main = smokeSubset(manifest.scenarios);
    const stageOf = (id: string) => manifest.scenarios.find((s) => s.id === id)?.stage;
    expect(main).toHaveLength(12);
    for (const stage of ['clean', 'active-tainted', 'security', 'memory-recovery']) expect(main.filter((id) => stageOf(id) === stage)).toHaveLength(3);
    const memoryFamilies = [...new Set(manifest.scenarios.filter((s) => s.stage === 'memory-recovery').map((s) => s.family))];
    expect(smokeLiveSubset(manifest.scenarios).sort()).toEqual([...memoryFamilies.map((f) => `${f}-mem-live-0`), 'backup-rotation-mem-ses-0'].sort());
    // The CI slice (--per-stage 1): the first memory family's live scenario and the session pair.
    const slice = ['security', 'active-tainted', 'clean', 'memory-recovery'].flatMap((stage) => main.filter((id) => stageOf(id) === stage).slice(0, 1));
    const sliceMemory = manifest.scenarios.find((s) => slice.includes(s.id) && s.stage === 'memory-recovery')?.family;
    expect(smokeLiveSubset(manifest.scenarios, slice).sort()).toEqual([`${sliceMemory}-mem-live-0`, 'backup-rotation-mem-live-0', 'backup-rotation-mem-ses-0'].sort());
    // The live recovery scenarios: every one in the smoke, the slice's memory family's in the slice.
    const recs = manifest.scenarios.filter((s) => s.id.includes('-mem-rec-')).map((s) => s.id);
    expect(recs.length).toBeGreaterThanOrEqual(2);
    expect(smokeLiveRecoverySubset(manifest.scenarios)).toEqual(recs);
    expect(smokeLiveRecoverySubset(manifest.scenarios, slice)).toEqual([`${sliceMemory}-mem-rec-0`]);
  });

  it('names every (defense, stage) group where a metric is N/A in every rollout', () => {
    const rows = [
      { defense: 'none', stage: 'clean', metrics: { fp: 0 } },
      { defense: 'none', stage: 'active-tainted', metrics: { fp: null } },
      { defense: 'none', stage: 'active-tainted', metrics: { fp: 0.5 } },
      { defense: 'guard', stage: 'clean', metrics: { fp: null } },
    ];
    expect(metricGaps(rows, 'fp', ['none', 'guard'], ['clean', 'active-tainted'])).toEqual(['guard / clean', 'guard / active-tainted']);
    expect(metricGaps(rows, 'fp', ['none'], ['clean', 'active-tainted'])).toEqual([]);
    expect(metricGaps(rows, 'other', ['none'], ['clean'])).toEqual(['none / clean']);
  });
});
