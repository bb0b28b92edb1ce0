/**
 * runJob through its phases — plan, prepare, execute — with an in-memory
 * engine (builds answer at once or fail as told) and an injected rollout
 * runner in place of a container: what each rollout is handed, resume after
 * an interruption, infrastructure failures kept apart from agent failures,
 * and a job where nothing could be measured. The real rollout path is
 * test/docker/eval.test.ts.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { fakeEngine } from '../docker/test-support.ts';
import { goldPolicy, parseGold } from '../gold/index.ts';
import { denyAllPolicy } from '../sandbox/policy/index.ts';
import type { EvalConfig } from './config.ts';
import { everyRolloutInfra, runJob, type JobDeps, type JobEvent } from './job.ts';
import type { WrittenPolicy } from './prepare.ts';
import { RolloutResultSchema, type RolloutResult } from './result.ts';
import { summarize } from './summary.ts';
import { fakeResult, type RolloutCall } from './test-support.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../oracle-traces', import.meta.url));

let root = '';
let jobs = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ab-run-job-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function config(overrides: Partial<EvalConfig> = {}): EvalConfig {
  return {
    schema_version: 1,
    model: 'scripted/oracle',
    tasks_dir: TASKS,
    oracle_traces_dir: TRACES,
    include: ['csv-sales-report', 'log-triage'],
    exclude: [],
    policies: ['gold', 'allow-all'],
    defenses: ['tool-boundary', 'none'],
    attempts: 2,
    seed: 0,
    max_turns: 5,
    cache: 'off',
    model_timeout_sec: 10,
    model_retries: 0,
    ...overrides,
  };
}

/** A rollout runner that records what it was handed and answers with `answer`'s result (default: completed, passed). */
function recorder(answer: (call: RolloutCall) => RolloutResult = ({ spec }) => fakeResult(spec)): { calls: RolloutCall[]; deps: JobDeps } {
  const calls: RolloutCall[] = [];
  return {
    calls,
    deps: {
      runRollout: (spec, ctx) => {
        calls.push({ spec, ctx });
        return Promise.resolve(answer({ spec, ctx }));
      },
    },
  };
}

/** A fresh job folder under the test's root. */
function newJob(): { jobsDir: string; name: string } {
  jobs += 1;
  return { jobsDir: join(root, 'jobs'), name: `job${jobs}` };
}

async function resultsOnDisk(dir: string): Promise<RolloutResult[]> {
  const out: RolloutResult[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const text = await readFile(join(dir, e.name, 'result.json'), 'utf8').catch(() => undefined);
    if (text !== undefined) out.push(RolloutResultSchema.parse(JSON.parse(text)));
  }
  return out;
}

describe('runJob', () => {
  it('runs every planned rollout once, writes each result.json, and builds each task once', async () => {
    const engine = fakeEngine();
    const { calls, deps } = recorder();
    const out = await runJob(engine, { config: config(), ...newJob(), resume: false, concurrency: 3 }, deps);
    // per task: tool-boundary × (gold, allow-all) × 2 attempts + none × 2 attempts
    expect(out.planned).toBe(12);
    expect(calls.map((c) => c.spec.id).sort()).toEqual(out.results.map((r) => r.rollout_id).sort());
    expect(new Set(calls.map((c) => c.spec.id)).size).toBe(12);
    expect(out).toMatchObject({ reused: 0, interrupted: false, allInfra: false });
    expect((await resultsOnDisk(out.dir)).map((r) => r.rollout_id).sort()).toEqual(out.results.map((r) => r.rollout_id).sort());
    expect(engine.builds.map((b) => b.repository).sort()).toEqual(['authbench/task-csv-sales-report', 'authbench/task-log-triage']);
  });

  it('hands each rollout its source\'s policy and score, and the task\'s gold as the ledger whatever it runs under', async () => {
    const { calls, deps } = recorder();
    await runJob(fakeEngine(), { config: config({ include: ['log-triage'] }), ...newJob(), resume: false, concurrency: 2 }, deps);
    const gold = parseGold(await readFile(join(TRACES, 'log-triage', 'gold.json'), 'utf8'), 'gold.json').gold;
    if (gold === undefined) throw new Error('log-triage has no committed gold');
    for (const { spec, ctx } of calls) {
      expect(ctx.ledger, spec.id).toEqual(goldPolicy(gold));
      expect(ctx.image).toMatch(/^authbench\/task-log-triage:/);
      if (spec.policy === 'none') expect([ctx.policy, ctx.staticScore]).toEqual([undefined, null]);
      // The gold source is the ledger itself: one read of gold.json serves both.
      if (spec.policy === 'gold') expect(ctx.policy).toBe(ctx.ledger);
      if (spec.policy === 'allow-all') expect(ctx.policy?.read).toEqual(['/**']);
      if (spec.policy !== 'none') expect(ctx.staticScore?.macro_f1).toBeGreaterThan(0);
    }
    const score = (source: string): number | undefined => calls.find((c) => c.spec.policy === source)?.ctx.staticScore?.macro_f1;
    expect(score('gold')).toBeGreaterThan(score('allow-all') ?? 1);
  });

  it('resumes an interrupted job with exactly the rollouts it had not finished: none lost, none run twice', async () => {
    const job = newJob();
    const first = recorder();
    const controller = new AbortController();
    const onEvent = (e: JobEvent): void => {
      if (e.kind === 'rollout-done' && e.done === 5) controller.abort();
    };
    const stopped = await runJob(fakeEngine(), { config: config(), ...job, resume: false, concurrency: 1, onEvent, signal: controller.signal }, first.deps);
    expect(stopped).toMatchObject({ interrupted: true, reused: 0 });
    expect(stopped.results).toHaveLength(5);

    // Without --resume the job is not touched again.
    await expect(runJob(fakeEngine(), { config: config(), ...job, resume: false, concurrency: 1 }, recorder().deps)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });

    const second = recorder();
    const skipped: string[] = [];
    const resumed = await runJob(
      fakeEngine(),
      { config: config(), ...job, resume: true, concurrency: 3, onEvent: (e) => e.kind === 'skipped' && skipped.push(e.rollout?.id ?? '') },
      second.deps,
    );
    expect(resumed).toMatchObject({ interrupted: false, reused: 5, planned: 12 });
    const ran = [...first.calls, ...second.calls].map((c) => c.spec.id);
    expect(new Set(ran).size).toBe(ran.length);
    expect(ran.sort()).toEqual(resumed.results.map((r) => r.rollout_id).sort());
    expect(skipped.sort()).toEqual(first.calls.map((c) => c.spec.id).sort());
    expect(await resultsOnDisk(resumed.dir)).toHaveLength(12);
  });

  it('runs infrastructure errors again on resume and keeps every completed outcome, failures included', async () => {
    const job = newJob();
    // csv-sales-report's rollouts hit an outage; log-triage's agent fails its task.
    const first = recorder(({ spec }) => (spec.taskId === 'csv-sales-report' ? fakeResult(spec, 'infra_error') : fakeResult(spec, 'completed', false)));
    // Six outages in a row would trip the circuit breaker (tested on its own in execute.test.ts).
    const out = await runJob(fakeEngine(), { config: config(), ...job, resume: false, concurrency: 2, maxConsecutiveInfra: 0 }, first.deps);
    expect(out.results).toHaveLength(12);
    const second = recorder();
    const resumed = await runJob(fakeEngine(), { config: config(), ...job, resume: true, concurrency: 2 }, second.deps);
    expect(second.calls.every((c) => c.spec.taskId === 'csv-sales-report')).toBe(true);
    expect(second.calls).toHaveLength(6);
    expect(resumed.reused).toBe(6);
    expect(resumed.results.filter((r) => r.task_id === 'log-triage').every((r) => r.utility_success === false)).toBe(true);
  });

  it('scores a task whose image does not build as infrastructure, never as the agent\'s failure; the other task runs', async () => {
    const engine = fakeEngine({ fail: (b) => (b.repository === 'authbench/task-log-triage' ? new AuthbenchError('IMAGE_BUILD_FAILED', 'no base image') : undefined) });
    const { calls, deps } = recorder();
    const out = await runJob(engine, { config: config(), ...newJob(), resume: false, concurrency: 2 }, deps);
    expect(calls.every((c) => c.spec.taskId === 'csv-sales-report')).toBe(true);
    const broken = out.results.filter((r) => r.task_id === 'log-triage');
    expect(broken).toHaveLength(6);
    for (const r of broken) {
      expect(r).toMatchObject({ status: 'infra_error', infra_error: { source: 'build', code: 'IMAGE_BUILD_FAILED' }, utility_success: null, attack_success: null, static_score: null });
    }
    expect(out.allInfra).toBe(false);
    // The summary counts them apart and rates only what ran.
    const gold = summarize(out.results).find((r) => r.policy === 'gold' && r.defense === 'tool-boundary');
    expect(gold).toMatchObject({ rollouts: 4, completed: 2, infraErrors: 2, tsrStandard: 1 });
  });

  it('says so when nothing could be measured: every rollout an infrastructure error', async () => {
    const engine = fakeEngine({ fail: () => new AuthbenchError('DOCKER_API', 'daemon went away') });
    const { calls, deps } = recorder();
    const out = await runJob(engine, { config: config(), ...newJob(), resume: false, concurrency: 2 }, deps);
    expect(calls).toHaveLength(0);
    expect(out.results).toHaveLength(12);
    expect(out.allInfra).toBe(true);
    // No results at all (a job interrupted before its first rollout) is not "every rollout failed".
    expect(everyRolloutInfra([])).toBe(false);
    const spec = { id: 'x', taskId: 'x', policy: 'gold' as const, defense: 'none', attempt: 1, seed: 0 };
    expect(everyRolloutInfra([fakeResult(spec, 'infra_error'), fakeResult(spec, 'completed', false)])).toBe(false);
  });

  it('ends a job whose Docker daemon went away with what it ran, and a resume runs every other rollout exactly once', async () => {
    const job = newJob();
    const gone = { ...fakeEngine(), ping: () => Promise.reject(new AuthbenchError('DOCKER_UNREACHABLE', 'cannot reach the Docker daemon')) };
    const first = recorder(({ spec }) =>
      first.calls.length === 2 ? { ...fakeResult(spec, 'infra_error'), infra_error: { source: 'docker', code: 'DOCKER_API', message: 'connect ENOENT' } } : fakeResult(spec),
    );
    const stopped = await runJob(gone, { config: config(), ...job, resume: false, concurrency: 1, dockerWaitMs: 0 }, first.deps);
    expect(stopped).toMatchObject({ interrupted: false, incomplete: true, stopped: { reason: 'docker-unreachable' } });
    expect(stopped.results.map((r) => r.status)).toEqual(['completed', 'infra_error']);
    expect(await resultsOnDisk(stopped.dir)).toHaveLength(2);

    const second = recorder();
    const resumed = await runJob(fakeEngine(), { config: config(), ...job, resume: true, concurrency: 2 }, second.deps);
    expect(resumed).toMatchObject({ incomplete: false, reused: 1, planned: 12 });
    expect(resumed.stopped).toBeUndefined();
    const ran = second.calls.map((c) => c.spec.id);
    expect(new Set(ran).size).toBe(11);
    expect(ran).toContain(first.calls[1]?.spec.id);
    expect(ran).not.toContain(first.calls[0]?.spec.id);
    expect(await resultsOnDisk(resumed.dir)).toHaveLength(12);
  });

  it('stops the job on a failure that is not infrastructure', async () => {
    const engine = fakeEngine({ fail: () => new Error('a bug in the build code') });
    await expect(runJob(engine, { config: config(), ...newJob(), resume: false, concurrency: 1 }, recorder().deps)).rejects.toThrow('a bug in the build code');
  });
});

describe('runJob and stored gold', () => {
  it('fails before anything is built when a task run under its gold has none (GOLD_MISSING)', async () => {
    const traces = join(root, 'no-gold');
    const engine = fakeEngine();
    await expect(runJob(engine, { config: config({ oracle_traces_dir: traces }), ...newJob(), resume: false, concurrency: 1 }, recorder().deps)).rejects.toMatchObject({
      code: 'GOLD_MISSING',
      hint: expect.stringContaining('authbench gen-gold') as unknown,
    });
    expect(engine.builds).toHaveLength(0);
  });

  it('runs built-in policies without gold, unscored and unmeasured', async () => {
    const { calls, deps } = recorder();
    await runJob(fakeEngine(), { config: config({ oracle_traces_dir: join(root, 'no-gold'), policies: ['deny-all'] }), ...newJob(), resume: false, concurrency: 1 }, deps);
    expect(calls.length).toBeGreaterThan(0);
    for (const { ctx } of calls) expect([ctx.ledger, ctx.staticScore]).toEqual([undefined, null]);
  });

  it('refuses to resume once a task\'s gold changed', async () => {
    const traces = join(root, 'changing-gold');
    await cp(join(TRACES, 'log-triage'), join(traces, 'log-triage'), { recursive: true });
    const job = newJob();
    const c = config({ oracle_traces_dir: traces, include: ['log-triage'], attempts: 1 });
    await runJob(fakeEngine(), { config: c, ...job, resume: false, concurrency: 1 }, recorder().deps);
    const file = join(traces, 'log-triage', 'gold.json');
    await writeFile(file, `${(await readFile(file, 'utf8')).trimEnd()}\n\n`);
    await expect(runJob(fakeEngine(), { config: c, ...job, resume: true, concurrency: 1 }, recorder().deps)).rejects.toMatchObject({
      code: 'CHECK_FAILED',
      message: expect.stringContaining('(task log-triage gold)') as unknown,
    });
  });

  it("builds with the job's recorded build options and the host access it is given, and refuses to resume with other build options", async () => {
    const engine = fakeEngine();
    const job = newJob();
    const build = { base_map: [{ pattern: 'python:*', image: 'authbench/base:python3.11-bookworm' }], build_args: { PY: '3.11' } };
    const hostAccess = { caBundle: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n', proxy: { HTTPS_PROXY: 'http://p:3128' } };
    const c = config({ include: ['log-triage'], attempts: 1, build });
    await runJob(engine, { config: c, ...job, resume: false, concurrency: 1, hostAccess }, recorder().deps);
    expect(engine.builds).toHaveLength(1);
    expect(engine.builds[0]).toMatchObject({ buildArgs: build.build_args, hostAccess, baseMap: { extraEntries: build.base_map } });
    // The CA and proxies are not part of the job: resuming without them is the same job; another base map is not.
    await runJob(fakeEngine(), { config: c, ...job, resume: true, concurrency: 1 }, recorder().deps);
    await expect(
      runJob(fakeEngine(), { config: { ...c, build: { ...build, base_map: [] } }, ...job, resume: true, concurrency: 1 }, recorder().deps),
    ).rejects.toMatchObject({ code: 'CHECK_FAILED' });
  });
});

describe('runJob with generated policies', () => {
  it('writes one policy per (task, attempt) for all its defenses; an invalid answer runs under deny-all; a writer outage is that attempt\'s infra_error', async () => {
    const writes: number[] = [];
    const writePolicy: JobDeps['writePolicy'] = ({ seed }) => {
      writes.push(seed);
      if (seed === 1) return Promise.reject(new AuthbenchError('MODEL_UNAVAILABLE', 'rate limited for good'));
      const answer: WrittenPolicy = {
        answers: [{ phase: 'explore', raw: 'not a policy' }],
        parse: { status: 'invalid', valid: false, problems: [] },
        usage: { input_tokens: 10, output_tokens: 5, cost_usd: 0.01 },
      };
      return Promise.resolve(answer);
    };
    const { calls, deps } = recorder();
    const out = await runJob(
      fakeEngine(),
      { config: config({ model: 'openai/gpt-test', include: ['log-triage'], policies: ['generated'], defenses: ['tool-boundary', 'intent-ledger'] }), ...newJob(), resume: false, concurrency: 4, modelEnv: { OPENAI_API_KEY: 'sk-test' } },
      { ...deps, writePolicy },
    );
    expect(writes.sort()).toEqual([0, 1]);
    // Attempt 1 (seed 0): both defenses got the same generation, executed under deny-all, scored 0.
    expect(calls.map((c) => c.spec.id).sort()).toEqual(['log-triage__generated__intent-ledger__a1', 'log-triage__generated__tool-boundary__a1']);
    const ids = new Set(calls.map((c) => c.ctx.generated?.usage.id));
    expect(ids.size).toBe(1);
    for (const { ctx } of calls) {
      expect(ctx.policy).toEqual(denyAllPolicy());
      expect(ctx.staticScore?.macro_f1).toBe(0);
      expect(ctx.generated).toMatchObject({ status: 'invalid', valid: false, answers: [{ phase: 'explore', raw: 'not a policy' }] });
    }
    // Attempt 2 (seed 1): the writer's outage is infrastructure, for both of its rollouts.
    const failed = out.results.filter((r) => r.attempt === 2);
    expect(failed.map((r) => [r.status, r.infra_error?.source, r.infra_error?.code])).toEqual([
      ['infra_error', 'policy', 'MODEL_UNAVAILABLE'],
      ['infra_error', 'policy', 'MODEL_UNAVAILABLE'],
    ]);
  });
});

describe('runJob with a hand-written policy file', () => {
  it('enforces and scores the file like any other policy, and refuses to resume once it changed', async () => {
    const file = join(root, 'hand-written.json');
    const text = JSON.stringify({ read: ['/app/**'], write: ['/app/**'], execute: ['/usr/bin/*', '/bin/*'] });
    await writeFile(file, text);
    const { sha256 } = await import('../core/index.ts');
    const { readPolicyFile } = await import('../goldstore/index.ts');
    const c = config({ include: ['log-triage'], policies: ['file', 'gold'], defenses: ['tool-boundary'], attempts: 1, policy_file: { path: file, sha256: sha256(text) } });
    const job = newJob();
    const { calls, deps } = recorder();
    await runJob(fakeEngine(), { config: c, ...job, resume: false, concurrency: 1 }, deps);
    const byPolicy = Object.fromEntries(calls.map((x) => [x.spec.policy, x.ctx]));
    expect(byPolicy.file?.policy).toEqual((await readPolicyFile(file)).policy);
    expect(byPolicy.file?.staticScore?.macro_f1).toBeGreaterThan(0);
    // Scored against the same gold as the gold policy, which it is not.
    expect(byPolicy.file?.staticScore).not.toEqual(byPolicy.gold?.staticScore);
    expect(byPolicy.file?.ledger).toEqual(byPolicy.gold?.ledger);

    await writeFile(file, JSON.stringify({ read: ['/**'], write: ['/**'], execute: ['/**'] }));
    await expect(runJob(fakeEngine(), { config: c, ...job, resume: true, concurrency: 1 }, recorder().deps)).rejects.toMatchObject({ code: 'CHECK_FAILED', file });
  });
});

describe('runJob and a killed earlier run', () => {
  it("removes the job's own orphans before anything runs and says how many", async () => {
    const asked: string[] = [];
    const engine = Object.assign(fakeEngine(), {
      removeOrphans: (runId: string) => {
        asked.push(runId);
        return Promise.resolve({ containers: 2, networks: 1 });
      },
    });
    const events: JobEvent[] = [];
    const job = newJob();
    await runJob(engine, { config: config({ attempts: 1 }), ...job, resume: false, concurrency: 1, onEvent: (e) => events.push(e) }, recorder().deps);
    expect(asked).toEqual([`job-${job.name}`]);
    expect(events[0]).toMatchObject({ kind: 'orphans-removed', orphans: { containers: 2, networks: 1 } });
    expect(events.filter((e) => e.kind === 'orphans-removed')).toHaveLength(1);
  });

  it('goes on when an orphan cannot be removed, saying which and why, and runs its rollouts', async () => {
    const engine = Object.assign(fakeEngine(), {
      removeOrphans: () => Promise.resolve({ containers: 1, networks: 0, left: [{ id: 'c80b9397ce08', message: 'device or resource busy' }] }),
    });
    const events: JobEvent[] = [];
    const outcome = await runJob(engine, { config: config({ attempts: 2 }), ...newJob(), resume: false, concurrency: 1, onEvent: (e) => events.push(e) }, recorder().deps);
    expect(events[0]).toMatchObject({ kind: 'orphans-removed', orphans: { containers: 1, left: [{ id: 'c80b9397ce08', message: 'device or resource busy' }] } });
    expect(outcome.results.length).toBeGreaterThan(0);
    expect(outcome.results.every((r) => r.status === 'completed')).toBe(true);
  });
});

describe("other runs' orphans", () => {
  it('are counted over every engine and said once, after removing its own; a listing that fails is no error', async () => {
    const order: string[] = [];
    const first = Object.assign(fakeEngine(), {
      endpoint: 'unix:///a.sock',
      removeOrphans: () => {
        order.push('remove');
        return Promise.resolve({ containers: 0, networks: 0 });
      },
      listOrphans: () => {
        order.push('list');
        return Promise.resolve({ containers: ['c1', 'c2'], networks: ['authbench-net-x'] });
      },
    });
    const second = Object.assign(fakeEngine(), { endpoint: 'unix:///b.sock', listOrphans: () => Promise.resolve({ containers: ['c3'], networks: [] }) });
    const broken = Object.assign(fakeEngine(), { endpoint: 'unix:///c.sock', listOrphans: () => Promise.reject(new Error('daemon gone')) });
    const events: JobEvent[] = [];
    const engines = [first, second, broken].map((engine) => ({ engine, slots: 1 }));
    const outcome = await runJob(first, { config: config({ attempts: 1 }), ...newJob(), resume: false, concurrency: 1, engines, cpuPinning: 'off', onEvent: (e) => events.push(e) }, recorder().deps);
    expect(order).toEqual(['remove', 'list']);
    expect(events.filter((e) => e.kind === 'orphans-elsewhere')).toEqual([expect.objectContaining({ strays: { containers: 3, networks: 1 } })]);
    expect(outcome.results.length).toBeGreaterThan(0);
  });

  it('are not mentioned when there are none', async () => {
    const engine = Object.assign(fakeEngine(), { listOrphans: () => Promise.resolve({ containers: [], networks: [] }) });
    const events: JobEvent[] = [];
    await runJob(engine, { config: config({ attempts: 1 }), ...newJob(), resume: false, concurrency: 1, onEvent: (e) => events.push(e) }, recorder().deps);
    expect(events.some((e) => e.kind === 'orphans-elsewhere')).toBe(false);
  });
});

describe('runJob on several engines (--engine)', () => {
  it('builds up front on the job\'s engine, on another only the tasks it runs (each once), and runs each rollout once on an engine that has its image', async () => {
    const first = { ...fakeEngine(), endpoint: 'unix:///a.sock' };
    const second = { ...fakeEngine(), endpoint: 'unix:///b.sock' };
    const calls: RolloutCall[] = [];
    const slow: JobDeps = {
      runRollout: async (spec, ctx) => {
        calls.push({ spec, ctx });
        await new Promise((r) => setTimeout(r, 2));
        return fakeResult(spec);
      },
    };
    const events: JobEvent[] = [];
    const out = await runJob(first, { config: config(), ...newJob(), resume: false, concurrency: 1, engines: [{ engine: first, slots: 1 }, { engine: second, slots: 2 }], cpuPinning: 'off', onEvent: (e) => events.push(e) }, slow);
    expect(out.results).toHaveLength(12);
    expect(new Set(calls.map((c) => c.spec.id)).size).toBe(12);
    expect(first.builds.map((b) => b.repository).sort()).toEqual(['authbench/task-csv-sales-report', 'authbench/task-log-triage']);
    const onSecond = calls.filter((c) => c.ctx.engine.endpoint === 'unix:///b.sock');
    expect(onSecond.length).toBeGreaterThan(0);
    // The second engine built exactly the tasks it ran, once each, and those rollouts got its tags.
    const secondTasks = [...new Set(onSecond.map((c) => c.spec.taskId))].sort();
    expect(second.builds.map((b) => b.repository).sort()).toEqual(secondTasks.map((t) => `authbench/task-${t}`));
    expect(events.filter((e) => e.kind === 'building' && e.engine === 'unix:///b.sock').map((e) => e.taskId).sort()).toEqual(secondTasks);
    expect(out.results.every((r) => r.engine === 'unix:///a.sock' || r.engine === 'unix:///b.sock')).toBe(true);
    expect(out.drained).toBeUndefined();
  });
});
