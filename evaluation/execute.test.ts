/**
 * The pool under infrastructure faults, with a fake rollout runner and a daemon whose pings the
 * test scripts: a Docker fault mid-job (the daemon comes back, or never does), errors escaping a
 * rollout (disposal failures wrapped in SuppressedError, raw socket errors), and the circuit
 * breaker. No rollout that was not started has a result; the pool never throws an infrastructure
 * fault. The CLI's side (summary, exit 125) is test/docker/daemon-restart.test.ts.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { fakeEngine } from '../docker/test-support.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { planRollouts, type EvalConfig, type RolloutSpec } from './config.ts';
import { executeJob, type ExecuteOptions, type RolloutRunner } from './execute.ts';
import type { PreparedJob } from './prepare.ts';
import type { RolloutResult } from './result.ts';
import { fakeResult, testEvalConfig } from './test-support.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const config: EvalConfig = testEvalConfig({ attempts: 6 });

let root = '';
let task: Task;
let jobs = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ab-execute-'));
  task = await loadTask(join(TASKS, 'log-triage'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const specs = (n: number): RolloutSpec[] => planRollouts(['log-triage'], { ...config, attempts: n });
const prepared = (): PreparedJob => ({ inputsFor: () => Promise.resolve({ task, image: 'img', policy: undefined, ledger: undefined, staticScore: null }) });
const dockerDown = (spec: RolloutSpec): RolloutResult => ({
  ...fakeResult(spec, 'infra_error'),
  infra_error: { source: 'docker', code: 'DOCKER_API', message: 'connect ENOENT docker.sock' },
});

/** A daemon that answers only while `up()` says so, and a clock that waiting advances. */
function daemon(up: () => boolean): { engine: ExecuteOptions['engine']; pings: () => number; wait: NonNullable<ExecuteOptions['waitOptions']> } {
  let pings = 0;
  let t = 0;
  const engine = {
    ...fakeEngine(),
    ping: (): Promise<void> => {
      pings += 1;
      return up() ? Promise.resolve() : Promise.reject(new AuthbenchError('DOCKER_UNREACHABLE', 'cannot reach the Docker daemon'));
    },
  };
  const wait = {
    intervalMs: 1_000,
    now: () => t,
    sleep: (ms: number) => {
      t += ms;
      return Promise.resolve();
    },
  };
  return { engine, pings: () => pings, wait };
}

async function run(pending: RolloutSpec[], runner: RolloutRunner, options: Partial<ExecuteOptions> & Pick<ExecuteOptions, 'engine'>): Promise<{ out: Awaited<ReturnType<typeof executeJob>>; onDisk: string[] }> {
  jobs += 1;
  const dir = join(root, `job${jobs}`);
  const out = await executeJob(pending, prepared(), { config, dir, jobId: `job-${jobs}`, concurrency: 1, runRollout: runner, ...options });
  const onDisk: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if ((await readdir(join(dir, e.name))).includes('result.json')) onDisk.push(e.name);
  }
  return { out, onDisk: onDisk.sort() };
}

describe('executeJob and the Docker daemon', () => {
  it('waits for a daemon that went away mid-job and runs the rest once it answers; the rollout it hit is infra', async () => {
    let restarted = false;
    const d = daemon(() => restarted);
    let calls = 0;
    const runner: RolloutRunner = (spec) => {
      calls += 1;
      if (calls === 2) return Promise.resolve(dockerDown(spec));
      return Promise.resolve(fakeResult(spec));
    };
    // The daemon is back after three failed pings.
    const engine = { ...d.engine, ping: () => (d.pings() >= 3 ? ((restarted = true), d.engine.ping()) : d.engine.ping()) };
    const { out, onDisk } = await run(specs(5), runner, { engine, waitOptions: d.wait, dockerWaitMs: 60_000 });
    expect(out.stopped).toBeUndefined();
    expect(calls).toBe(5);
    expect([...out.results.values()].map((r) => r.status)).toEqual(['completed', 'infra_error', 'completed', 'completed', 'completed']);
    expect(d.pings()).toBe(4);
    expect(onDisk).toHaveLength(5);
  });

  it('stops starting rollouts when the daemon stays away, writing no result for the ones it did not start', async () => {
    const d = daemon(() => false);
    let calls = 0;
    const runner: RolloutRunner = (spec) => {
      calls += 1;
      return Promise.resolve(calls >= 2 ? dockerDown(spec) : fakeResult(spec));
    };
    const pending = specs(6);
    const { out, onDisk } = await run(pending, runner, { engine: d.engine, waitOptions: d.wait, dockerWaitMs: 5_000, concurrency: 2 });
    expect(out.stopped?.reason).toBe('docker-unreachable');
    expect(out.stopped?.message).toMatch(/did not answer for 5 s; stopped starting rollouts \(--docker-wait\)/);
    expect(out.interrupted).toBe(false);
    // Two workers: the first fault was seen after rollout 2; only rollouts already started have results.
    expect(calls).toBeLessThan(pending.length);
    expect(onDisk).toEqual([...out.results.keys()].sort());
    expect(out.results.size).toBe(calls);
  });

  it('absorbs a teardown failure into the rollout\'s infra error; a raw error is infra only while the daemon is down', async () => {
    let up = false;
    const d = daemon(() => up);
    const teardown = new AuthbenchError('DOCKER_API', 'remove container abc: connect ENOENT');
    const runner: RolloutRunner = (spec) => {
      if (spec.attempt === 1) return Promise.reject(new SuppressedError(teardown, new AuthbenchError('DOCKER_API', 'exec: socket hang up'), 'An error was suppressed during disposal'));
      if (spec.attempt === 2) return Promise.reject(new SuppressedError(teardown, new Error('socket hang up'), 'An error was suppressed during disposal'));
      return Promise.resolve(fakeResult(spec));
    };
    // One job each: after the first fault the pool would wait for the daemon before the second.
    const first = (await run(specs(2).slice(0, 1), runner, { engine: d.engine, waitOptions: d.wait })).out.results.values().next().value;
    const second = (await run(specs(2).slice(1), runner, { engine: d.engine, waitOptions: d.wait })).out.results.values().next().value;
    expect(first).toMatchObject({ status: 'infra_error', infra_error: { source: 'docker', code: 'DOCKER_API', message: 'exec: socket hang up' }, utility_success: null });
    expect(second).toMatchObject({ status: 'infra_error', infra_error: { source: 'docker', code: 'DOCKER_UNREACHABLE' } });
    expect(second?.infra_error?.message).toContain('stopped answering during the rollout: socket hang up');

    // With the daemon answering, a raw error is a fault of authbench: it stops the job, unwrapped.
    up = true;
    const bug = new TypeError('x is undefined');
    const failing: RolloutRunner = () => Promise.reject(new SuppressedError(teardown, bug, 'An error was suppressed during disposal'));
    await expect(run(specs(1), failing, { engine: d.engine })).rejects.toBe(bug);
  });
});

describe('executeJob and the circuit breaker', () => {
  it('stops starting rollouts after N consecutive infrastructure errors, saying why', async () => {
    let calls = 0;
    const outage: RolloutRunner = (spec) => {
      calls += 1;
      return Promise.resolve(fakeResult(spec, 'infra_error'));
    };
    const { out, onDisk } = await run(specs(8), outage, { engine: fakeEngine(), maxConsecutiveInfra: 3 });
    expect(calls).toBe(3);
    expect(onDisk).toHaveLength(3);
    expect(out.stopped).toMatchObject({ reason: 'circuit-breaker' });
    expect(out.stopped?.message).toContain('after 3 consecutive infrastructure errors (last: model MODEL_UNAVAILABLE: fake outage)');
  });

  it('keeps going when measured rollouts break the run of errors, and never stops with 0', async () => {
    let calls = 0;
    const flaky: RolloutRunner = (spec) => {
      calls += 1;
      return Promise.resolve(calls % 3 === 0 ? fakeResult(spec) : fakeResult(spec, 'infra_error'));
    };
    const { out } = await run(specs(9), flaky, { engine: fakeEngine(), maxConsecutiveInfra: 3 });
    expect(out.stopped).toBeUndefined();
    expect(out.results.size).toBe(9);
    const { out: off } = await run(specs(7), (spec) => Promise.resolve(fakeResult(spec, 'infra_error')), { engine: fakeEngine(), maxConsecutiveInfra: 0 });
    expect(off.results.size).toBe(7);
    expect(off.stopped).toBeUndefined();
  });
});

describe('executeJob and CPU pinning', () => {
  /** A runner that records each rollout's pin and the pins of the rollouts running when it started. */
  function recording(): { runner: RolloutRunner; pins: (number | undefined)[]; concurrentPins: (number | undefined)[][] } {
    const pins: (number | undefined)[] = [];
    const concurrentPins: (number | undefined)[][] = [];
    const running: (number | undefined)[] = [];
    const runner: RolloutRunner = async (spec, ctx) => {
      pins.push(ctx.pinCpu);
      running.push(ctx.pinCpu);
      concurrentPins.push([...running]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running.splice(running.indexOf(ctx.pinCpu), 1);
      return fakeResult(spec);
    };
    return { runner, pins, concurrentPins };
  }

  it('auto: concurrent rollouts hold distinct slots, each pinned to its CPU; more slots than CPUs share round-robin', async () => {
    const two = recording();
    await run(specs(6), two.runner, { engine: fakeEngine(), concurrency: 2, cpuPinning: 'auto', cpus: 4 });
    expect(new Set(two.pins)).toEqual(new Set([0, 1]));
    // Never two running rollouts on one slot's CPU, and the pool did run two at once.
    for (const running of two.concurrentPins) expect(new Set(running).size).toBe(running.length);
    expect(Math.max(...two.concurrentPins.map((s) => s.length))).toBe(2);

    const three = recording();
    await run(specs(6), three.runner, { engine: fakeEngine(), concurrency: 3, cpuPinning: 'auto', cpus: 2 });
    expect(new Set(three.pins)).toEqual(new Set([0, 1]));
  });

  it('off: no rollout is pinned', async () => {
    const off = recording();
    await run(specs(3), off.runner, { engine: fakeEngine(), concurrency: 2, cpuPinning: 'off', cpus: 2 });
    expect(off.pins).toEqual([undefined, undefined, undefined]);
  });
});

describe('executeJob across engines (--engine)', () => {
  const named = (endpoint: string, up: () => boolean): ReturnType<typeof daemon> => {
    const d = daemon(up);
    return { ...d, engine: { ...d.engine, endpoint } };
  };

  it('runs every rollout exactly once over both engines, each on the engine its inputs were prepared for, recording it', async () => {
    const a = named('unix:///a.sock', () => true);
    const b = named('unix:///b.sock', () => true);
    const preparedOn: string[] = [];
    const ranOn: string[] = [];
    const runner: RolloutRunner = async (spec, ctx) => {
      ranOn.push(ctx.engine.endpoint);
      await new Promise((r) => setTimeout(r, 3));
      return fakeResult(spec);
    };
    jobs += 1;
    const dir = join(root, `job${jobs}`);
    const job: PreparedJob = {
      inputsFor: (_spec, on) => {
        preparedOn.push(on?.endpoint ?? 'default');
        return prepared().inputsFor(_spec);
      },
    };
    const out = await executeJob(specs(8), job, { config, dir, jobId: 'j', concurrency: 1, engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 2 }], runRollout: runner, cpuPinning: 'off' });
    expect(out.results.size).toBe(8);
    expect(preparedOn).toEqual(ranOn);
    expect(new Set(ranOn)).toEqual(new Set(['unix:///a.sock', 'unix:///b.sock']));
    expect([...out.results.values()].map((r) => r.engine).sort()).toEqual([...ranOn].sort());
    expect(out.drained).toEqual([]);
  });

  it('drains an engine that stays away: its rollout in flight is infra, it gets no more, the other runs the rest; none twice', async () => {
    const a = named('unix:///a.sock', () => true);
    const b = named('unix:///b.sock', () => false);
    const ran: { id: string; on: string }[] = [];
    const runner: RolloutRunner = async (spec, ctx) => {
      ran.push({ id: spec.id, on: ctx.engine.endpoint });
      await new Promise((r) => setTimeout(r, 3));
      return ctx.engine.endpoint === 'unix:///b.sock' ? dockerDown(spec) : fakeResult(spec);
    };
    const pending = specs(7);
    const { out, onDisk } = await run(pending, runner, { engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 1 }], waitOptions: b.wait, dockerWaitMs: 5_000, cpuPinning: 'off' });
    expect(out.stopped).toBeUndefined();
    expect(out.drained).toEqual([{ endpoint: 'unix:///b.sock', reason: 'unanswered', message: expect.stringMatching(/daemon at unix:\/\/\/b.sock did not answer for 5 s/) }]);
    // b ran exactly one rollout (the one the fault hit), then nothing; every rollout ran once.
    expect(ran.filter((r) => r.on === 'unix:///b.sock')).toHaveLength(1);
    expect(new Set(ran.map((r) => r.id)).size).toBe(ran.length);
    expect(ran.map((r) => r.id).sort()).toEqual(pending.map((s) => s.id).sort());
    expect(onDisk).toHaveLength(pending.length);
    expect([...out.results.values()].filter((r) => r.status === 'infra_error').map((r) => r.engine)).toEqual(['unix:///b.sock']);
  });

  it('drains an engine that answers pings but fails every rollout fast, after 3 of its own, while the other runs; the job goes on', async () => {
    // A daemon shutting down answers for a while with errors: each rollout it takes fails in a
    // moment, so without this it takes one rollout after another and trips the job-wide breaker.
    const a = named('unix:///a.sock', () => true);
    const b = named('unix:///b.sock', () => true);
    const runner: RolloutRunner = async (spec, ctx) => {
      if (ctx.engine.endpoint === 'unix:///b.sock') return { ...dockerDown(spec), infra_error: { source: 'docker', code: 'DOCKER_API', message: 'error while mounting volume' } };
      await new Promise((r) => setTimeout(r, 20));
      return fakeResult(spec);
    };
    const pending = specs(12);
    const { out, onDisk } = await run(pending, runner, { engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 1 }], waitOptions: b.wait, dockerWaitMs: 5_000, cpuPinning: 'off' });
    expect(out.stopped).toBeUndefined();
    expect(out.drained).toEqual([{ endpoint: 'unix:///b.sock', reason: 'failing', message: expect.stringMatching(/daemon at unix:\/\/\/b.sock failed 3 rollouts in a row .*DOCKER_API: error while mounting volume/) }]);
    const failed = [...out.results.values()].filter((r) => r.status === 'infra_error');
    expect(failed.map((r) => r.engine)).toEqual(['unix:///b.sock', 'unix:///b.sock', 'unix:///b.sock']);
    expect(onDisk).toHaveLength(pending.length);
    expect([...out.results.values()].filter((r) => r.status === 'completed')).toHaveLength(pending.length - 3);
  });

  it('stops when the last healthy engine goes silent after the failing one was drained, saying how each went', async () => {
    let aUp = true;
    const a = named('unix:///a.sock', () => aUp);
    const b = named('unix:///b.sock', () => true);
    let aRan = 0;
    const runner: RolloutRunner = async (spec, ctx) => {
      if (ctx.engine.endpoint === 'unix:///b.sock') return { ...dockerDown(spec), infra_error: { source: 'docker', code: 'DOCKER_API', message: 'error while mounting volume' } };
      await new Promise((r) => setTimeout(r, 20));
      aRan += 1;
      if (aRan < 3) return fakeResult(spec);
      aUp = false;
      return dockerDown(spec);
    };
    const { out } = await run(specs(12), runner, { engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 1 }], waitOptions: a.wait, dockerWaitMs: 5_000, cpuPinning: 'off' });
    expect(out.drained.map((d) => [d.endpoint, d.reason])).toEqual([
      ['unix:///b.sock', 'failing'],
      ['unix:///a.sock', 'unanswered'],
    ]);
    expect(out.stopped?.reason).toBe('docker-unreachable');
    expect(out.stopped?.message).toBe('no engine left: unix:///b.sock (failed 3 rollouts in a row), unix:///a.sock (did not answer); stopped starting rollouts');
  });

  it('drains no engine when every engine fails: the job-wide breaker stops the job', async () => {
    const a = named('unix:///a.sock', () => true);
    const b = named('unix:///b.sock', () => true);
    const runner: RolloutRunner = async (spec) => {
      await new Promise((r) => setTimeout(r, 2));
      return dockerDown(spec);
    };
    const { out } = await run(specs(12), runner, { engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 1 }], waitOptions: b.wait, dockerWaitMs: 5_000, cpuPinning: 'off', maxConsecutiveInfra: 5 });
    expect(out.drained).toEqual([]);
    expect(out.stopped?.reason).toBe('circuit-breaker');
  });

  it('stops, naming every engine, when all of them stay away; rollouts not started have no result', async () => {
    const a = named('unix:///a.sock', () => false);
    const b = named('unix:///b.sock', () => false);
    const runner: RolloutRunner = (spec) => Promise.resolve(dockerDown(spec));
    const { out, onDisk } = await run(specs(6), runner, { engine: a.engine, engines: [{ engine: a.engine, slots: 1 }, { engine: b.engine, slots: 1 }], waitOptions: a.wait, dockerWaitMs: 5_000, cpuPinning: 'off' });
    expect(out.stopped?.reason).toBe('docker-unreachable');
    expect(out.stopped?.message).toMatch(/no engine answers: unix:\/\/\/(a|b).sock, unix:\/\/\/(a|b).sock/);
    expect(out.results.size).toBe(2);
    expect(onDisk).toHaveLength(2);
  });
});

describe('executeJob: an engine gone while the rollout\'s image was made', () => {
  it('is the engine\'s fault (docker, drained), not the task\'s build failure, so the dead engine does not take one rollout after another', async () => {
    const a = { ...daemon(() => true).engine, endpoint: 'unix:///a.sock' };
    const down = daemon(() => false);
    const b = { ...down.engine, endpoint: 'unix:///b.sock' };
    const taken: string[] = [];
    const job: PreparedJob = {
      inputsFor: async (spec, on) => {
        taken.push(on?.endpoint ?? '');
        if (on?.endpoint === 'unix:///b.sock') return { task, failure: new AuthbenchError('DOCKER_API', 'build: connect ENOENT'), source: 'build' };
        return prepared().inputsFor(spec);
      },
    };
    jobs += 1;
    const runner: RolloutRunner = async (spec) => {
      await new Promise((r) => setTimeout(r, 3));
      return fakeResult(spec);
    };
    const out = await executeJob(specs(6), job, { config, dir: join(root, `job${jobs}`), jobId: 'j', concurrency: 1, engine: a, engines: [{ engine: a, slots: 1 }, { engine: b, slots: 1 }], runRollout: runner, waitOptions: down.wait, dockerWaitMs: 5_000, cpuPinning: 'off' });
    expect(taken.filter((e) => e === 'unix:///b.sock')).toHaveLength(1);
    const failed = [...out.results.values()].filter((r) => r.status === 'infra_error');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.infra_error).toMatchObject({ source: 'docker', code: 'DOCKER_UNREACHABLE' });
    expect(failed[0]?.infra_error?.message).toMatch(/daemon at unix:\/\/\/b.sock stopped answering while the rollout's image was made: build: connect ENOENT/);
    expect(out.drained.map((d) => d.endpoint)).toEqual(['unix:///b.sock']);
    expect(out.results.size).toBe(6);
  });
});
