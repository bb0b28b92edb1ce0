/**
 * The evidence-stage suite (tasks/suite): every scenario builds over its
 * family base, every oracle passes its utility validator without firing the
 * attack validator, every security and memory scenario's attack_smoke.sh
 * fires it, and an untouched environment fails. Gold is re-derived and its
 * sufficiency replayed for the first instance of every family × stage (48
 * scenarios, each family and stage represented): the whole suite's gold was
 * derived with sufficiency by `make suite`, and re-deriving all of it would
 * double this test's time for little extra signal.
 *
 * That is the full tier (`make test-full`). The CI tier (`make test`) checks
 * the controls of two scenarios per stage (eight families) and re-derives the
 * gold of one per stage.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { mapPool } from '../../core/index.ts';
import { connectDocker, type BuildResult, type DockerEngine } from '../../docker/index.ts';
import { diffGold, goldPolicy, isDrift, renderGoldDiff, type GoldFile } from '../../gold/index.ts';
import { goldPaths, readStoredGold } from '../../goldstore/index.ts';
import { checkSufficiency, generateGold, type Sufficiency } from '../../oracle/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { STAGES } from '../../task-format/index.ts';
import { verifyTask, type TaskVerification } from '../../validators/index.ts';
import { retryInfraOnce } from '../infra-retry.ts';
import { FULL_TIER } from './tier.ts';

const SUITE = 'tasks/suite';
const all: Task[] = await Promise.all((await discoverTasks(SUITE)).map((dir) => loadTask(dir)));
/** Full tier: every scenario. CI tier: instance 0 of two families per stage, the families rotating (eight in all). */
const families = [...new Set(all.map((t) => t.authbench.family))].sort();
const tasks: Task[] = FULL_TIER
  ? all
  : STAGES.flatMap((stage, i) =>
      [families[(2 * i) % families.length], families[(2 * i + 1) % families.length]].flatMap((family) =>
        // The family's plain scenario of the stage: variants (live memory, listener sink, topology) carry an infix.
        all.filter((t) => t.authbench.family === family && t.authbench.stage === stage && /-(?:sec|act|cln|mem)-0$/.test(t.id)),
      ),
    );
/** Full tier: the first instance of each family × stage (ids end in -0). CI tier: the first sampled scenario of each stage. */
const goldChecked = new Set(
  FULL_TIER ? tasks.filter((t) => t.id.endsWith('-0')).map((t) => t.id) : STAGES.flatMap((stage) => tasks.filter((t) => t.authbench.stage === stage).slice(0, 1).map((t) => t.id)),
);
const images = new Map<string, BuildResult>();
const verdicts = new Map<string, TaskVerification>();
const stored = new Map<string, GoldFile>();
const fresh = new Map<string, GoldFile>();
const sufficiency = new Map<string, Sufficiency>();
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
  // Per scenario, one Docker hiccup (an infrastructure error) is retried once and reported (test/infra-retry.ts).
  await mapPool(tasks, 3, async (task) => {
    images.set(task.id, await retryInfraOnce(`suite ${task.id}: build`, () => buildTaskImage(engine, task)));
  });
  const runId = `suite-test-${process.pid}`;
  await mapPool(tasks, 3, (task) =>
    retryInfraOnce(`suite ${task.id}: controls and gold`, async () => {
      const image = images.get(task.id);
      if (image === undefined) return;
      verdicts.set(task.id, await verifyTask(engine, task, image.tag, { checkNoop: true, runId }));
      if (!goldChecked.has(task.id)) return;
      const gold = await readStoredGold(goldPaths('oracle-traces', task.id));
      if (gold === undefined) return;
      stored.set(task.id, gold);
      const [derived, sufficient] = await Promise.all([
        generateGold(engine, task, image, { sufficiency: false }),
        checkSufficiency(engine, task, image.tag, goldPolicy(gold)),
      ]);
      fresh.set(task.id, derived.gold);
      sufficiency.set(task.id, sufficient);
    }),
  );
}, 60 * 60 * 1000);

describe('the evidence-stage suite', () => {
  it('has at least 120 scenarios from at least 12 families, at least 20 per stage', () => {
    expect(all.length).toBeGreaterThanOrEqual(120);
    expect(new Set(all.map((t) => t.authbench.family)).size).toBeGreaterThanOrEqual(12);
    for (const stage of STAGES) {
      expect(all.filter((t) => t.authbench.stage === stage).length, stage).toBeGreaterThanOrEqual(20);
    }
  });

  it(`checks ${FULL_TIER ? 'every scenario' : 'two scenarios per stage'} (tier ${FULL_TIER ? 'full' : 'ci'})`, () => {
    expect(tasks.length).toBe(FULL_TIER ? all.length : 2 * STAGES.length);
    for (const stage of STAGES) expect(tasks.some((t) => t.authbench.stage === stage), stage).toBe(true);
  });

  it('scenarios of a family share one family base image', async () => {
    const again = await connectDocker();
    for (const task of tasks) expect((await buildTaskImage(again, task)).built, task.id).toBe(false);
    // One cached family build and one cached task build per scenario: nothing is rebuilt.
    expect(again.stats.buildCalls).toBe(0);
  });
});

describe.each(tasks.map((t) => t.id))('%s', (id) => {
  it('has committed gold (derived with sufficiency by make suite)', () => {
    expect(existsSync(goldPaths('oracle-traces', id).gold), `run: authbench gen-gold --tasks ${SUITE} ${id}`).toBe(true);
  });

  it('controls: the oracle passes, the attack fires only on its smoke run, a no-op fails', () => {
    const v = verdicts.get(id);
    expect(v, `no verification for ${id}`).toBeDefined();
    expect(v?.failures).toEqual([]);
    expect(v?.oracle.utility?.passed).toBe(true);
    expect(v?.noop.utility?.passed).toBe(false);
    if (v?.dataset === 'sensitive') {
      expect(v.oracle.attack?.passed).toBe(false);
      expect(v.smoke.attack?.passed).toBe(true);
    }
  });
});

describe.each([...goldChecked])('%s (gold sample)', (id) => {
  it('gold is reproduced by a fresh oracle trace and sufficient', () => {
    const s = stored.get(id);
    const f = fresh.get(id);
    expect(s, `oracle-traces/${id}/gold.json is missing: run authbench gen-gold --tasks ${SUITE} ${id}`).toBeDefined();
    expect(f, `gold of ${id} could not be re-derived`).toBeDefined();
    if (s === undefined || f === undefined) return;
    const diff = diffGold(s, f);
    expect(isDrift(diff), renderGoldDiff(diff, id)).toBe(false);
    const suff = sufficiency.get(id);
    expect(suff?.sufficient, `${suff?.launcherError ?? suff?.utility.reason}; denials: ${suff?.denials.join('; ')}`).toBe(true);
    expect(suff?.enforcement.level).toBe('full');
  });
});
