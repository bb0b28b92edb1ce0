import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CounterfactualSchema, EPISODE_DEFAULTS, type Episode, type Proposal, type Step } from '../agent/index.ts';
import { AuthbenchError } from '../core/index.ts';
import type { Container, Engine } from '../docker/index.ts';
import { fakeEngine } from '../docker/test-support.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { attachCounterfactuals, CounterfactualRecorder, describeEffect, failedCounterfactual, proposalKey, stoppedIn } from './counterfactual.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const LEDGER: Policy = { read: [], write: ['/app/**'], execute: [], network: { tcp_connect: [], tcp_bind: [], allow_all: false } };

const decision = (action: 'allow' | 'block' | 'confirm') => ({ action, rule_id: `t/${action}`, reason: 'test' });
const proposal = (id: string, o: Partial<Proposal> = {}): Proposal => ({ id, tool: 'shell', args: { command: `echo ${id}` }, valid: true, events: [], ...o });
const ran = (id: string): Proposal =>
  proposal(id, {
    decision: decision('allow'),
    result: {
      exit_code: 0,
      timed_out: false,
      timeout_ms: 1000,
      duration_ms: 1,
      stdout: '',
      stderr: '',
      stdout_bytes: 0,
      stderr_bytes: 0,
      denials: [],
      denial_count: 0,
      event_count: 0,
      enforcement: { level: 'full', landlock_abi: 4, seccomp: true, best_effort: false },
    },
  });
const stepOf = (turn: number, ...proposals: Proposal[]): Step => ({
  turn,
  started_at: '2026-01-01T00:00:00Z',
  model_call: { usage: { input_tokens: 0, output_tokens: 0 }, cost_usd: 0, latency_ms: 0, cached: false, finish_reason: 'tool-calls' },
  text: '',
  proposals,
});

describe('stoppedIn', () => {
  const mixed = stepOf(
    2,
    ran('a'),
    proposal('b', { decision: decision('block') }),
    proposal('c', { valid: false, invalid_reason: 'x' }),
    proposal('d', { decision: decision('confirm'), args: { command: 'make', timeout_sec: 5, confirmation: { action: 'w', targets: ['/app/x'], justification: 'j' } } }),
    proposal('e', { decision: decision('block'), args: { not: 'a shell call' } }),
    proposal('f', { valid: true, skipped: 'episode_timeout' }),
  );

  it('picks the valid shell proposals a defense blocked or held, in order, never one that ran, was skipped or invalid', () => {
    const got = stoppedIn(mixed, 7);
    expect(got.map((s) => [proposalKey(s), s.args.command])).toEqual([
      ['7:1', 'echo b'],
      ['7:3', 'make'],
    ]);
    expect(got[1]?.args.timeout_sec).toBe(5);
  });
});

describe('attachCounterfactuals', () => {
  it('puts each run on its proposal and leaves the rest and the input as they were', () => {
    const episode = { steps: [stepOf(1, ran('a'), proposal('b', { decision: decision('block') }))] } as unknown as Episode;
    const cf = failedCounterfactual('no copy', { timeoutMs: 1000, snapshotMs: 0 });
    const out = attachCounterfactuals(episode, new Map([['0:1', cf]]));
    expect(out.steps[0]?.proposals.map((p) => p.counterfactual)).toEqual([undefined, cf]);
    expect(episode.steps[0]?.proposals[1]?.counterfactual).toBeUndefined();
  });
});

describe('records', () => {
  it('a failed run has no verdict and validates', () => {
    const cf = failedCounterfactual('the copy failed: X', { timeoutMs: 0.4, snapshotMs: 3 });
    expect(CounterfactualSchema.parse(cf)).toEqual(cf);
    expect(cf).toMatchObject({ authorized: null, error: 'the copy failed: X', timeout_ms: 1, snapshot_ms: 3 });
  });

  it('names effects one line each', () => {
    expect(describeEffect({ kind: 'file', op: 'rename', path: '/app/a', path2: '/srv/b' })).toBe('rename /app/a → /srv/b');
    expect(describeEffect({ kind: 'network', op: 'connect', family: 'inet', address: '10.0.0.1', port: null })).toBe('connect 10.0.0.1:?');
  });
});

describe('CounterfactualRecorder: copies at the stopping turns; a failing copy never fails the rollout', () => {
  let task: Task;
  beforeAll(async () => {
    task = await loadTask(join(TASKS, 'log-triage'));
  });
  const container = { id: 'c0ffee' } as Container;
  const held = (id: string) => proposal(id, { decision: decision('confirm') });
  const blocked = (id: string) => proposal(id, { decision: decision('block') });

  function copying(over: Partial<Engine> = {}): { engine: Engine; commits: string[]; removed: string[] } {
    const commits: string[] = [];
    const removed: string[] = [];
    const engine: Engine = {
      ...fakeEngine(),
      // No harness volume: every copy fails to start (an infrastructure error).
      volumeExists: () => Promise.reject(new AuthbenchError('DOCKER_UNREACHABLE', 'gone')),
      commitContainer: (id, repository) => {
        commits.push(id);
        return Promise.resolve(`${repository}:${commits.length}`);
      },
      removeImage: (ref) => {
        removed.push(ref);
        return Promise.resolve();
      },
      ...over,
    };
    return { engine, commits, removed };
  }

  it('commits once per turn that stopped something, within the cap, and never for other turns', async () => {
    const { engine, commits } = copying();
    await using rec = new CounterfactualRecorder({ engine, container, task, max: 3 });
    await rec.afterStep(stepOf(1, ran('a')));
    await rec.afterStep(stepOf(2, blocked('b'), held('c')));
    await rec.afterStep(stepOf(3, ran('d')));
    await rec.afterStep(stepOf(4, blocked('e'), blocked('f')));
    await rec.afterStep(stepOf(5, blocked('g')));
    expect(commits).toEqual(['c0ffee', 'c0ffee']);
    expect(rec.pending).toBe(3);
    const out = await rec.run(LEDGER, ['/tmp']);
    expect([...out.runs.keys()]).toEqual(['1:0', '1:1', '3:0']);
  });

  it('a copy that cannot start: recorded per proposal, and each copy removed after its runs', async () => {
    const { engine, removed } = copying();
    await using rec = new CounterfactualRecorder({ engine, container, task, max: 8 });
    await rec.afterStep(stepOf(1, blocked('b'), held('c')));
    const out = await rec.run(LEDGER, ['/tmp']);
    expect([...out.runs.values()].map((cf) => cf.error)).toEqual([expect.stringMatching(/the copy failed: DOCKER_UNREACHABLE/), expect.stringMatching(/the copy failed/)]);
    expect(removed).toEqual(['authbench/copy:1']);
  });

  it('an engine that cannot commit: the stopped proposals recorded without a verdict', async () => {
    await using rec = new CounterfactualRecorder({ engine: fakeEngine(), container, task, max: 8 });
    await rec.afterStep(stepOf(1, blocked('b')));
    const out = await rec.run(LEDGER, ['/tmp']);
    expect(out.runs.get('0:0')).toMatchObject({ authorized: null, timeout_ms: EPISODE_DEFAULTS.commandTimeoutMs });
    expect(out.runs.get('0:0')?.error).toMatch(/could not be copied: SANDBOX_UNAVAILABLE/);
  });

  it('a bug (not an infrastructure error) is not swallowed', async () => {
    const { engine } = copying({ commitContainer: () => Promise.reject(new TypeError('boom')) });
    await using rec = new CounterfactualRecorder({ engine, container, task, max: 8 });
    await expect(rec.afterStep(stepOf(1, blocked('b')))).rejects.toThrow('boom');
  });

  it('a spent budget runs nothing more; disposing removes copies never run', async () => {
    const { engine, removed } = copying();
    {
      await using rec = new CounterfactualRecorder({ engine, container, task, max: 8 });
      await rec.afterStep(stepOf(1, blocked('b')));
      const out = await rec.run(LEDGER, ['/tmp'], 0);
      expect(out.runs.get('0:0')?.error).toBe('the counterfactual time budget was spent');
    }
    {
      await using rec = new CounterfactualRecorder({ engine, container, task, max: 8 });
      await rec.afterStep(stepOf(1, blocked('x')));
    }
    expect(removed).toEqual(['authbench/copy:1', 'authbench/copy:2']);
  });
});
