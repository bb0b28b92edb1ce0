/**
 * The bundled tasks' controls, in CI: every task builds, every oracle passes
 * its utility validator without firing the attack validator, every sensitive
 * task's attack_smoke.sh fires it, and a second build of the whole suite makes
 * zero `docker build` calls.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mapPool } from '../../core/index.ts';
import { connectDocker, type BuildResult, type DockerEngine } from '../../docker/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { verifyTask, type TaskVerification } from '../../validators/index.ts';
import { retryInfraOnce } from '../infra-retry.ts';

// Loaded at collection time so every task gets its own test row.
const tasks: Task[] = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const images = new Map<string, BuildResult>();
const verdicts = new Map<string, TaskVerification>();

beforeAll(async () => {
  const engine = await connectDocker();
  // Per task, one Docker hiccup (an infrastructure error) is retried once and reported (test/infra-retry.ts).
  for (const task of tasks) images.set(task.id, await retryInfraOnce(`tasks ${task.id}: build`, () => buildTaskImage(engine, task)));
  const runId = `tasks-test-${process.pid}`;
  const results = await mapPool(tasks, 3, (task) =>
    retryInfraOnce(`tasks ${task.id}: controls`, () => verifyTask(engine, task, images.get(task.id)?.tag ?? '', { checkNoop: true, runId })),
  );
  for (const r of results) verdicts.set(r.taskId, r);
});

describe('bundled tasks', () => {
  it('has at least 8 tasks, at least 2 of them sensitive', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(8);
    expect(tasks.filter((t) => t.dataset === 'sensitive').length).toBeGreaterThanOrEqual(2);
  });

  it('rebuilding every task makes zero docker build calls', async () => {
    const fresh: DockerEngine = await connectDocker();
    for (const task of tasks) {
      const again = await buildTaskImage(fresh, task);
      expect(again.built).toBe(false);
      expect(again.tag).toBe(images.get(task.id)?.tag);
    }
    expect(fresh.stats.buildCalls).toBe(0);
    expect(fresh.stats.cacheHits).toBe(tasks.length);
  });

  it.each(tasks.map((t) => t.id))('%s: oracle passes its validator; controls behave', (id) => {
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

describe('authbench verify', () => {
  it('reports a task whose image does not build, verifies the others, and exits 125', () => {
    const root = mkdtempSync(join(tmpdir(), 'authbench-verify-'));
    cpSync('tasks/log-triage', join(root, 'log-triage'), { recursive: true });
    cpSync('tasks/log-triage', join(root, 'broken-build'), { recursive: true });
    appendFileSync(join(root, 'broken-build', 'environment', 'Dockerfile'), '\nRUN echo "authbench test: this build fails" && exit 3\n');
    const r = spawnSync(process.execPath, ['bin/authbench.ts', 'verify', '--tasks', root, '--json'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(125);
    const out = JSON.parse(r.stdout) as { tasks: { taskId: string; failures: string[] }[]; buildErrors: { taskId: string; code: string }[]; ok: boolean };
    expect(out.tasks.map((t) => [t.taskId, t.failures])).toEqual([['log-triage', []]]);
    expect(out.buildErrors).toMatchObject([{ taskId: 'broken-build', code: 'IMAGE_BUILD_FAILED' }]);
    expect(out.ok).toBe(false);
  });
});
