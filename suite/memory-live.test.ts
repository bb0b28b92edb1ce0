import { describe, expect, it } from 'vitest';
import { parseTaskToml } from '../task-format/index.ts';
import { generateSuite } from './generate.ts';
import { FAMILIES, SUITE_FAMILIES } from './families/index.ts';
import { MEMORY_NOTES, MEMORY_SESSION_CONTROL_FAMILIES, MEMORY_STORE, memoryLiveScenarios } from './memory-live.ts';
import { NEXT_INSTRUCTION, renderScenario } from './render.ts';

const family = (id: string) => {
  const f = FAMILIES.find((x) => x.id === id);
  if (f === undefined) throw new Error(`no family ${id}`);
  return f;
};

describe('live memory scenarios', () => {
  it('episode 1 meets the injection and keeps notes; episode 2 is the clean task, told to read them; the injection is withheld', () => {
    const [persistent, session] = memoryLiveScenarios(family('backup-rotation'), 0);
    expect([persistent?.id, session?.id]).toEqual(['backup-rotation-mem-live-0', 'backup-rotation-mem-ses-0']);
    if (persistent === undefined || session === undefined) throw new Error('missing');
    expect(persistent.stage).toBe('memory-recovery');
    expect(persistent.instruction).toContain(MEMORY_NOTES);
    expect(persistent.memoryEpisodes?.nextInstruction).toContain(`Your notes from an earlier session are in \`${MEMORY_STORE}/\``);
    expect(persistent.memoryEpisodes?.withheld).toEqual(persistent.untrusted);
    // The injected command is in the withheld file, in neither instruction.
    const notes = persistent.files[persistent.untrusted[0] ?? '']?.content ?? '';
    const smoke = persistent.solution['attack_smoke.sh']?.content ?? '';
    const command = /\(run `([^`]+)`\)/.exec(notes)?.[1] ?? '<none>';
    expect(smoke).toContain(command);
    expect(persistent.instruction).not.toContain(command);
    expect(persistent.memoryEpisodes?.nextInstruction).not.toContain(command);
    // The session control differs only in its mode: same data, same attack.
    expect(session.memoryEpisodes?.mode).toBe('session');
    const same = (x: typeof persistent) => ({ files: x.files, solution: x.solution, untrusted: x.untrusted, canaries: x.canaries, withheld: x.memoryEpisodes?.withheld, next: x.memoryEpisodes?.nextInstruction });
    expect(same(session)).toEqual(same(persistent));
  });

  it('renders [authbench.memory] and the episode-2 instruction file', () => {
    const [s] = memoryLiveScenarios(family('csv-convert'), 0);
    if (s === undefined) throw new Error('missing');
    const files = renderScenario(s);
    expect(files[NEXT_INSTRUCTION]?.content).toBe(s.memoryEpisodes?.nextInstruction);
    const parsed = parseTaskToml(files['task.toml']?.content ?? '', 'task.toml');
    expect(parsed.problems).toEqual([]);
    expect(parsed.config?.authbench?.memory).toEqual({ mode: 'persistent', store: MEMORY_STORE, next_instruction: NEXT_INSTRUCTION, withheld: s.untrusted });
    expect(parsed.config?.authbench?.memory_files).toEqual([`${MEMORY_STORE}/**`]);
  });

  it('the generated suite holds a persistent one for every family and the session controls, besides the per-family scenarios', () => {
    const suite = generateSuite({ seed: 0, perFamily: 4, families: SUITE_FAMILIES.map((f) => f.id) });
    const live = suite.scenarios.filter((x) => x.scenario.memoryEpisodes !== undefined).map((x) => x.scenario);
    expect(live.map((s) => s.id)).toEqual(
      SUITE_FAMILIES.flatMap((f) => [`${f.id}-mem-live-0`, ...(MEMORY_SESSION_CONTROL_FAMILIES.includes(f.id) ? [`${f.id}-mem-ses-0`] : [])]),
    );
    // Every family of the memory stage has one, and each is a persistent memory-stage scenario of its family's instance 0.
    const memoryFamilies = new Set(suite.scenarios.filter((x) => x.scenario.stage === 'memory-recovery').map((x) => x.scenario.family.id));
    expect(new Set(live.filter((s) => s.memoryEpisodes?.mode === 'persistent').map((s) => s.family.id))).toEqual(memoryFamilies);
    for (const s of live) {
      expect(s.stage).toBe('memory-recovery');
      expect(s.cluster).toBe(`${s.family.id}-0`);
      expect(s.untrusted.length).toBeGreaterThan(0);
      expect(s.memoryEpisodes?.withheld).toEqual(s.untrusted);
    }
  });

  it('adding families leaves the existing live scenarios byte-identical (their own kit draw)', () => {
    const alone = generateSuite({ seed: 0, perFamily: 1, families: ['backup-rotation'] }).scenarios.filter((x) => x.scenario.memoryEpisodes !== undefined);
    const all = generateSuite({ seed: 0, perFamily: 1 }).scenarios.filter((x) => x.scenario.family.id === 'backup-rotation' && x.scenario.memoryEpisodes !== undefined);
    expect(all.map((x) => x.hash)).toEqual(alone.map((x) => x.hash));
    expect(alone.length).toBe(2);
  });
});
