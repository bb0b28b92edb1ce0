/**
 * Gold in CI: every bundled task's committed gold is reproduced from a fresh
 * oracle trace (no drift), passes sufficiency (the oracle succeeds under its
 * own gold policy with the kernel enforcing it), and scores as Appendix A
 * demands against itself and the built-in policies. A changed solve.sh is
 * reported as drift with a readable diff.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapPool } from '../../core/index.ts';
import { connectDocker, type BuildResult, type DockerEngine } from '../../docker/index.ts';
import { diffGold, goldPolicy, isDrift, renderGoldDiff, type GoldFile } from '../../gold/index.ts';
import { goldPaths, readStoredGold } from '../../goldstore/index.ts';
import { checkSufficiency, generateGold, type Sufficiency } from '../../oracle/index.ts';
import { allowAllPolicy, denyAllPolicy } from '../../sandbox/policy/index.ts';
import { loadCandidateSnapshot, referenceFromGold, scorePolicy } from '../../score/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { retryInfraOnce } from '../infra-retry.ts';

const tasks: Task[] = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const stored = new Map<string, GoldFile>();
const fresh = new Map<string, GoldFile>();
const sufficiency = new Map<string, Sufficiency>();
const images = new Map<string, BuildResult>();
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
  // Per task, one Docker hiccup (an infrastructure error) is retried once and reported (test/infra-retry.ts).
  for (const task of tasks) {
    images.set(task.id, await retryInfraOnce(`gold ${task.id}: build`, () => buildTaskImage(engine, task)));
    const gold = await readStoredGold(goldPaths('oracle-traces', task.id));
    if (gold !== undefined) stored.set(task.id, gold);
  }
  await mapPool(tasks, 2, async (task) => {
    const image = images.get(task.id);
    const gold = stored.get(task.id);
    if (image === undefined || gold === undefined) return;
    // Sufficiency of the committed gold; the fresh derivation only needs the trace.
    const [derived, sufficient] = await retryInfraOnce(`gold ${task.id}: derivation and sufficiency`, () =>
      Promise.all([generateGold(engine, task, image, { sufficiency: false }), checkSufficiency(engine, task, image.tag, goldPolicy(gold))]),
    );
    fresh.set(task.id, derived.gold);
    sufficiency.set(task.id, sufficient);
  });
});

describe.each(tasks.map((t) => t.id))('gold of %s', (id) => {
  it('is committed and reproduced by a fresh oracle trace', () => {
    const s = stored.get(id);
    const f = fresh.get(id);
    expect(s, `oracle-traces/${id}/gold.json is missing: run authbench gen-gold ${id}`).toBeDefined();
    expect(f).toBeDefined();
    if (s === undefined || f === undefined) return;
    const diff = diffGold(s, f);
    expect(isDrift(diff), renderGoldDiff(diff, id)).toBe(false);
  });

  it('is sufficient: the oracle passes its validator under the enforced gold policy', () => {
    const s = sufficiency.get(id);
    expect(s?.denials, 'denials under gold').toBeDefined();
    expect(s?.sufficient, `${s?.launcherError ?? s?.utility.reason}; denials: ${s?.denials.join('; ')}`).toBe(true);
    expect(s?.enforcement.level).toBe('full');
  });

  it('scores F1 = 1 against itself, allow-all recall 1, deny-all recall 0', async () => {
    const gold = stored.get(id);
    const candidates = await loadCandidateSnapshot(goldPaths('oracle-traces', id).candidates);
    expect(gold).toBeDefined();
    expect(candidates).toBeDefined();
    if (gold === undefined || candidates === undefined) return;
    const reference = referenceFromGold(gold);
    // S_gold itself as a policy (the enforced gold policy adds support and ephemeral grants on top).
    const self = scorePolicy({ ...gold.required }, reference, candidates);
    for (const axis of ['read', 'write', 'execute'] as const) expect(self[axis].f1, axis).toBe(1);
    const all = scorePolicy(allowAllPolicy(), reference, candidates);
    const none = scorePolicy(denyAllPolicy(), reference, candidates);
    for (const axis of ['read', 'write', 'execute'] as const) {
      expect(all[axis].recall, axis).toBe(1);
      if (reference.required[axis].length > 0) expect(none[axis].recall, axis).toBe(0);
    }
    expect(all.macro_precision).toBeLessThan(0.5);
  });
});

describe('drift', () => {
  let scratch: string;
  afterAll(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'authbench-drift-'));
  });

  it('a changed solve.sh shows up as drift with a readable per-axis diff', async () => {
    const dir = join(scratch, 'log-triage');
    await cp('tasks/log-triage', dir, { recursive: true });
    const solve = join(dir, 'solution', 'solve.sh');
    // The changed oracle also writes a file the original never touched.
    await writeFile(solve, `${await readFile(solve, 'utf8')}\necho checked > /app/extra-notes.txt\n`);
    const task = await loadTask(dir);
    const image = await buildTaskImage(engine, task);
    const original = stored.get('log-triage');
    expect(original).toBeDefined();
    const changed = await generateGold(engine, task, image, { sufficiency: false });
    const diff = diffGold(original as GoldFile, changed.gold);
    expect(isDrift(diff)).toBe(true);
    const text = renderGoldDiff(diff, 'log-triage');
    expect(text).toContain('+ write /app/extra-notes.txt');
  });
});

describe('authbench gen-gold', () => {
  it('reports a task whose image does not build, derives and writes the others, and exits 125', async () => {
    const root = await mkdtemp(join(tmpdir(), 'authbench-gen-gold-'));
    try {
      await cp('tasks/log-triage', join(root, 'tasks', 'log-triage'), { recursive: true });
      await cp('tasks/log-triage', join(root, 'tasks', 'broken-build'), { recursive: true });
      const dockerfile = join(root, 'tasks', 'broken-build', 'environment', 'Dockerfile');
      await writeFile(dockerfile, `${await readFile(dockerfile, 'utf8')}\nRUN echo "authbench test: this build fails" && exit 3\n`);
      const r = spawnSync(process.execPath, ['bin/authbench.ts', 'gen-gold', '--all', '--tasks', join(root, 'tasks'), '--oracle-traces', join(root, 'gold'), '--no-sufficiency', '-n', '2', '--json'], { encoding: 'utf8' });
      expect(r.status, r.stderr.slice(-2000)).toBe(125);
      const out = JSON.parse(r.stdout) as { tasks: { task: string; action: string; error?: { code: string } }[] };
      const byTask = Object.fromEntries(out.tasks.map((t) => [t.task, t]));
      expect(byTask['log-triage']?.action).toBe('written');
      expect(byTask['broken-build']).toMatchObject({ action: 'failed', error: { code: 'IMAGE_BUILD_FAILED' } });
      expect(await readStoredGold(goldPaths(join(root, 'gold'), 'log-triage'))).toBeDefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
