/**
 * The evidence-stage suite in CI (tasks/suite): every scenario builds over its
 * family base, every oracle passes its utility validator without firing the
 * attack validator, every security and memory scenario's attack_smoke.sh
 * fires it, and an untouched environment fails. Gold is re-derived and its
 * sufficiency replayed for the first instance of every family × stage (52
 * scenarios, each family and stage represented): the whole suite's gold was
 * derived with sufficiency by `make suite`, and re-deriving all of it would
 * double this test's time for little extra signal.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { mapPool } from '../../core/index.ts';
import { connectDocker, type BuildResult, type DockerEngine } from '../../docker/index.ts';
import { diffGold, goldPolicy, isDrift, renderGoldDiff, type GoldFile } from '../../gold/index.ts';
import { checkSufficiency, generateGold, goldPaths, readStoredGold, type Sufficiency } from '../../oracle/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { verifyTask, type TaskVerification } from '../../validators/index.ts';

const SUITE = 'tasks/suite';
const tasks: Task[] = await Promise.all((await discoverTasks(SUITE)).map((dir) => loadTask(dir)));
/** The first instance of each family × stage (ids end in -0). */
const goldChecked = new Set(tasks.filter((t) => t.id.endsWith('-0')).map((t) => t.id));
const images = new Map<string, BuildResult>();
const verdicts = new Map<string, TaskVerification>();
const stored = new Map<string, GoldFile>();
const fresh = new Map<string, GoldFile>();
const sufficiency = new Map<string, Sufficiency>();
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
  await mapPool(tasks, 3, async (task) => {
    images.set(task.id, await buildTaskImage(engine, task));
  });
  const runId = `suite-test-${process.pid}`;
  await mapPool(tasks, 3, async (task) => {
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
  });
}, 60 * 60 * 1000);

describe('the evidence-stage suite', () => {
  it('has at least 120 scenarios from at least 12 families, at least 20 per stage', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(120);
    expect(new Set(tasks.map((t) => t.authbench.family)).size).toBeGreaterThanOrEqual(12);
    for (const stage of ['security', 'active-tainted', 'clean', 'memory-recovery'] as const) {
      expect(tasks.filter((t) => t.authbench.stage === stage).length, stage).toBeGreaterThanOrEqual(20);
    }
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
