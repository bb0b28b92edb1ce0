/**
 * Services in eval: what the agent leaves running (AuthBench's nginx-request-logging asks for a
 * web server on localhost:8080) runs on, traced and in its sandbox, while the utility validator
 * exercises it — under an enforcing defense and under none alike, so a service task is not
 * failed by the harness. scripted/oracle plays the task's own solve.sh as the agent. Hostile
 * services (one that peeks at the fresh tests, one that attacks later) are adversarial scenarios.
 */
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { cleanManaged, connectDocker, LABELS, type DockerEngine } from '../../docker/index.ts';
import { EvalConfigSchema, executeJob, jobLock, openJobDir, planJob, prepareJob } from '../../evaluation/index.ts';
import { loadTaskBundle } from '../../goldstore/index.ts';
import { loadTask } from '../../task-format/index.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATASET = resolve(REPO_ROOT, readEnv(ENV.AUTHBENCH_DEV_DATASET) ?? '../shared/datasets/authbench-dev');
const TASK_DIR = join(DATASET, 'tasks', 'nginx-request-logging');
const HAVE_TASK = await access(join(TASK_DIR, 'task.toml')).then(
  () => true,
  () => false,
);
if (!HAVE_TASK) process.stderr.write(`[services.test] SKIPPED: no nginx-request-logging at ${TASK_DIR} (set ${ENV.AUTHBENCH_DEV_DATASET})\n`);

const RUN_ID = `services-test-${process.pid}-${Date.now()}`;
let engine: DockerEngine;
let scratch: string;

beforeAll(async () => {
  engine = await connectDocker();
  scratch = await mkdtemp(join(tmpdir(), 'authbench-services-test-'));
});

afterAll(async () => {
  if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe.skipIf(!HAVE_TASK)('services the agent leaves running', () => {
  it('keep serving while the utility validator runs (nginx on :8080), under tool-boundary and under no defense', async () => {
    const task = await loadTask(TASK_DIR);
    const bundle = await loadTaskBundle(task, join(scratch, 'oracle-traces'));
    const config = EvalConfigSchema.parse({
      schema_version: 1,
      model: 'scripted/oracle',
      tasks_dir: join(DATASET, 'tasks'),
      oracle_traces_dir: join(scratch, 'oracle-traces'),
      include: [task.id],
      exclude: [],
      policies: ['allow-all'],
      defenses: ['tool-boundary', 'none'],
      attempts: 1,
      seed: 0,
      max_turns: 10,
      cache: 'off',
      model_timeout_sec: 300,
      model_retries: 0,
    });
    const dir = join(scratch, 'job');
    const plan = planJob([task.id], config, new Map());
    await openJobDir(dir, 'services', config, await jobLock(config, [bundle]), false);
    const prepared = await prepareJob(engine, { config, plan, bundles: new Map([[task.id, bundle]]), runId: RUN_ID });
    const { results } = await executeJob(plan.pending, prepared, { engine, config, dir, jobId: RUN_ID, concurrency: 1 });
    const rows = [...results.values()].map((r) => ({ defense: r.defense.name, outcome: r.outcome, utility: r.utility_success, services: r.validation?.services, reason: r.utility_reason }));
    expect(rows.sort((a, b) => a.defense.localeCompare(b.defense))).toEqual([
      { defense: 'none', outcome: 'completed', utility: true, services: 1, reason: expect.any(String) },
      { defense: 'tool-boundary', outcome: 'completed', utility: true, services: 1, reason: expect.any(String) },
    ]);
  }, 600_000);
});
