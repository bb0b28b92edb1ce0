/**
 * Shards of one job without Docker: the slice rule, several runJob calls sharing one job folder
 * at once (each rollout run exactly once), claims held by a live or a dead process, and what
 * `authbench status` counts. The real rollout path is test/docker/shards.test.ts.
 */
import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeEngine } from '../docker/test-support.ts';
import { acquireClaim, claimPath, type FoundClaim } from './claims.ts';
import { planRollouts, type EvalConfig } from './config.ts';
import { runJob, type JobDeps } from './job.ts';
import { planJob, shardAssignment, shardPlan } from './plan.ts';
import { RolloutResultSchema, type RolloutResult } from './result.ts';
import { countStatus, readJobStatus, shardCountOf } from './status.ts';
import { fakeResult } from './test-support.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../oracle-traces', import.meta.url));

let root = '';
let jobs = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ab-shards-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const newJob = (): { jobsDir: string; name: string } => ({ jobsDir: join(root, 'jobs'), name: `job${++jobs}` });

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

/** A rollout runner that records the ids it ran and yields between rollouts, so concurrent jobs interleave. */
function recorder(ran: string[]): JobDeps {
  return {
    runRollout: async (spec) => {
      ran.push(spec.id);
      await new Promise((r) => setTimeout(r, 2));
      return fakeResult(spec);
    },
  };
}

async function resultsOnDisk(dir: string): Promise<RolloutResult[]> {
  const out: RolloutResult[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name === 'claims') continue;
    const text = await readFile(join(dir, e.name, 'result.json'), 'utf8').catch(() => undefined);
    if (text !== undefined) out.push(RolloutResultSchema.parse(JSON.parse(text)));
  }
  return out;
}

describe('the slice rule', () => {
  const specs = planRollouts(['b-task', 'a-task', 'c-task'], config());

  it('gives the k-th rollout by id to shard k mod N + 1', () => {
    const sorted = specs.map((r) => r.id).sort();
    const assigned = shardAssignment(specs, 3);
    sorted.forEach((id, k) => expect(assigned.get(id), id).toBe((k % 3) + 1));
  });

  it('keeps the rollouts that share one generated policy (task, attempt) on one shard', () => {
    const generated = planRollouts(['a-task', 'b-task'], config({ policies: ['generated', 'gold'], defenses: ['tool-boundary', 'prompt-only', 'none'], attempts: 2 }));
    const assigned = shardAssignment(generated, 3);
    for (const r of generated.filter((x) => x.policy === 'generated')) {
      const siblings = generated.filter((x) => x.policy === 'generated' && x.taskId === r.taskId && x.attempt === r.attempt);
      expect(siblings.length).toBe(2);
      expect(new Set(siblings.map((x) => assigned.get(x.id))).size, r.id).toBe(1);
    }
    // Every shard still gets work, and every rollout a shard.
    expect(new Set(assigned.values())).toEqual(new Set([1, 2, 3]));
    expect(assigned.size).toBe(generated.length);
  });

  it('splits the plan into disjoint slices that together are the plan, whatever the plan order', () => {
    const plan = planJob(['b-task', 'a-task', 'c-task'], config(), new Map());
    const slices = [1, 2, 3, 4].map((index) => shardPlan(plan, { index, count: 4 }));
    const all = slices.flatMap((s) => s.rollouts.map((r) => r.id));
    expect(all.sort()).toEqual(plan.rollouts.map((r) => r.id).sort());
    expect(new Set(all).size).toBe(all.length);
    expect(Math.max(...slices.map((s) => s.rollouts.length)) - Math.min(...slices.map((s) => s.rollouts.length))).toBeLessThanOrEqual(1);
    // Plan order (tasks as given) does not change the slice.
    const reordered = planJob(['c-task', 'a-task', 'b-task'], config(), new Map());
    expect(shardPlan(reordered, { index: 2, count: 4 }).rollouts.map((r) => r.id).sort()).toEqual(slices[1]?.rollouts.map((r) => r.id).sort());
  });

  it('keeps a shard\'s completed rollouts as reused and runs only its others', () => {
    const rollouts = planRollouts(['a-task'], config());
    const existing = new Map(rollouts.slice(0, 3).map((r) => [r.id, fakeResult(r)]));
    const slice = shardPlan(planJob(['a-task'], config(), existing), { index: 1, count: 2 });
    const mine = new Set(slice.rollouts.map((r) => r.id));
    expect([...slice.reused.keys()].sort()).toEqual(rollouts.slice(0, 3).map((r) => r.id).filter((id) => mine.has(id)).sort());
    expect(slice.pending.every((r) => mine.has(r.id) && !slice.reused.has(r.id))).toBe(true);
  });
});

describe('runJob with shards', () => {
  it('two shards started at once on one new job run every rollout exactly once, each result naming its shard', async () => {
    const job = newJob();
    const ran: string[] = [];
    const c = config();
    const [one, two] = await Promise.all([1, 2].map((index) => runJob(fakeEngine(), { config: c, ...job, resume: false, concurrency: 2, shard: { index, count: 2 } }, recorder(ran))));
    if (one === undefined || two === undefined) throw new Error('no outcome');
    const planned = planRollouts(['csv-sales-report', 'log-triage'], c).map((r) => r.id).sort();
    expect(ran.sort()).toEqual(planned);
    expect([one.planned, two.planned]).toEqual([6, 6]);
    expect(one.incomplete || two.incomplete).toBe(false);
    const onDisk = await resultsOnDisk(one.dir);
    expect(onDisk.map((r) => r.rollout_id).sort()).toEqual(planned);
    const assigned = shardAssignment(planRollouts(['csv-sales-report', 'log-triage'], c), 2);
    for (const r of onDisk) expect(r.shard, r.rollout_id).toBe(`${assigned.get(r.rollout_id) ?? 0}/2`);
    // Every claim was released once its result was written, and the empty claims folder went with the last shard.
    expect(await readdir(one.dir)).not.toContain('claims');
  });

  it('a shard joins a job only with the same inputs', async () => {
    const job = newJob();
    await runJob(fakeEngine(), { config: config({ attempts: 1 }), ...job, resume: false, concurrency: 2, shard: { index: 1, count: 2 } }, recorder([]));
    await expect(runJob(fakeEngine(), { config: config({ attempts: 1, seed: 3 }), ...job, resume: false, concurrency: 2, shard: { index: 2, count: 2 } }, recorder([]))).rejects.toMatchObject({ code: 'CHECK_FAILED' });
    // An unsharded run without --resume still refuses an existing job.
    await expect(runJob(fakeEngine(), { config: config({ attempts: 1 }), ...job, resume: false, concurrency: 2 }, recorder([]))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('leaves a rollout with a live claim to its process, and takes over one whose claim went stale', async () => {
    const job = newJob();
    const c = config({ include: ['log-triage'], policies: ['gold'], defenses: ['tool-boundary'], attempts: 3 });
    const dir = join(job.jobsDir, job.name);
    const [live, dead] = planRollouts(['log-triage'], c).map((r) => r.id);
    if (live === undefined || dead === undefined) throw new Error('plan too short');
    expect((await acquireClaim(dir, live, { host: 'elsewhere', pid: 1 })).kind).toBe('claimed');
    expect((await acquireClaim(dir, dead, { host: 'crashed', pid: 2 })).kind).toBe('claimed');
    const old = (Date.now() - 10 * 60_000) / 1000;
    await utimes(claimPath(dir, dead), old, old);

    const ran: string[] = [];
    const busy: string[] = [];
    const out = await runJob(fakeEngine(), { config: c, ...job, resume: true, concurrency: 1, claims: { staleMs: 60_000 }, onEvent: (e) => e.kind === 'busy' && busy.push(e.rollout?.id ?? '') }, recorder(ran));
    expect(busy).toEqual([live]);
    expect(ran.sort()).toEqual(planRollouts(['log-triage'], c).map((r) => r.id).filter((id) => id !== live).sort());
    expect(out).toMatchObject({ planned: 3, busy: 1, incomplete: false });
    // The live claim is untouched; the taken-over one was released with its result.
    expect(await readdir(join(dir, 'claims'))).toEqual([`${live}.json`]);
  });
});

describe('status', () => {
  const spec = (id: string): Parameters<typeof fakeResult>[0] => ({ id, taskId: 't', policy: 'gold', defense: 'tool-boundary', attempt: 1, seed: 0 });
  const rollouts = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map(spec);
  const claim = (shard: string, heartbeatMs: number): FoundClaim => ({ claim: { schema_version: 1, rollout_id: 'x', shard, host: 'h', pid: 1, started: '', token: 't' }, heartbeatMs, ino: 1 });

  it('counts each rollout in one state, per shard and in total', () => {
    const results = new Map<string, RolloutResult>([
      ['r1', { ...fakeResult(spec('r1')), shard: '1/2' }],
      ['r2', { ...fakeResult(spec('r2'), 'infra_error'), shard: '2/2' }],
      // A failed rollout being run again counts as claimed.
      ['r4', { ...fakeResult(spec('r4'), 'infra_error'), shard: '2/2' }],
    ]);
    const claims = new Map([
      ['r3', claim('1/2', 100_000)],
      ['r4', claim('2/2', 95_000)],
      ['r5', claim('1/2', 10_000)],
    ]);
    const s = countStatus({ rollouts, complete: new Set(['r1']) }, results, claims, { nowMs: 100_000, staleMs: 60_000 });
    expect(s.shards).toBe(2);
    expect(s.total).toEqual({ shard: 'total', planned: 6, done: 1, claimed: 2, stale: 1, failed: 1, pending: 1 });
    // r1, r3, r5 are shard 1's (k = 0, 2, 4); r2, r4, r6 shard 2's.
    expect(s.rows).toEqual([
      { shard: '1/2', planned: 3, done: 1, claimed: 1, stale: 1, failed: 0, pending: 0 },
      { shard: '2/2', planned: 3, done: 0, claimed: 1, stale: 0, failed: 1, pending: 1 },
    ]);
    expect(s.claims.map((c) => [c.rollout, c.heartbeatAgeMs, c.stale])).toEqual([
      ['r3', 0, false],
      ['r4', 5_000, false],
      ['r5', 90_000, true],
    ]);
  });

  it('has no per-shard rows when no shard count is given or agreed on', () => {
    expect(shardCountOf(['1/2', null, '2/2'])).toBe(2);
    expect(shardCountOf(['1/2', '1/3'])).toBeUndefined();
    expect(shardCountOf([])).toBeUndefined();
    const s = countStatus({ rollouts, complete: new Set() }, new Map(), new Map(), { nowMs: 0, staleMs: 1 });
    expect(s.rows).toEqual([]);
    expect(s.total.pending).toBe(6);
    expect(countStatus({ rollouts, complete: new Set() }, new Map(), new Map(), { nowMs: 0, staleMs: 1, shards: 4 }).rows.map((r) => r.planned)).toEqual([2, 2, 1, 1]);
  });

  it('reads a sharded job folder: planned from the saved config over the locked tasks', async () => {
    const job = newJob();
    const c = config({ attempts: 1 });
    await runJob(fakeEngine(), { config: c, ...job, resume: false, concurrency: 2, shard: { index: 2, count: 3 } }, recorder([]));
    const s = await readJobStatus(join(job.jobsDir, job.name));
    expect(s.shards).toBe(3);
    expect(s.total.planned).toBe(planRollouts(['csv-sales-report', 'log-triage'], c).length);
    expect(s.rows[1]).toMatchObject({ shard: '2/3', done: s.rows[1]?.planned, pending: 0 });
    expect(s.rows[0]).toMatchObject({ shard: '1/3', done: 0 });
    expect(s.total.pending).toBe((s.rows[0]?.planned ?? 0) + (s.rows[2]?.planned ?? 0));
    await expect(readJobStatus(join(job.jobsDir, 'no-such-job'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
