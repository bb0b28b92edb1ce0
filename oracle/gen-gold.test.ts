/**
 * gen-gold's decisions: what happens to a derived gold under each mode, and
 * a run over tasks where one task's infrastructure fails (the others are
 * reported, the run's status says so). Derivation itself needs Docker and is
 * tested in test/docker/gold.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { fakeEngine } from '../docker/test-support.ts';
import { goldPaths } from '../goldstore/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { genGold, goldAction, goldActionFailsCheck, goldActionOk, type GoldAction, type GoldDrift, type GoldWriteMode } from './gen-gold.ts';
import { insufficiencyProblems } from './generate.ts';

describe('goldAction', () => {
  const cases: [GoldWriteMode, GoldDrift, GoldAction][] = [
    // --check: compare, never write
    ['check', 'none', 'checked'],
    ['check', 'changed', 'drift'],
    ['check', 'new', 'drift'],
    // default: write what is new, keep what is unchanged, refuse to overwrite a change
    ['keep', 'new', 'written'],
    ['keep', 'none', 'unchanged'],
    ['keep', 'changed', 'refused'],
    // --write: accept drift
    ['accept-drift', 'new', 'written'],
    ['accept-drift', 'none', 'written'],
    ['accept-drift', 'changed', 'written'],
  ];
  it.each(cases)('%s with drift %s: %s', (mode, drift, action) => {
    expect(goldAction({ untrusted: false, drift, mode })).toBe(action);
  });

  it('never stores an untrusted gold, whatever was asked', () => {
    for (const [mode, drift] of cases) expect(goldAction({ untrusted: true, drift, mode })).toBe('untrusted');
  });

  it('fails the check exactly on drift, refused drift and untrusted gold; `failed` is infrastructure', () => {
    const all: GoldAction[] = ['written', 'unchanged', 'refused', 'checked', 'drift', 'untrusted', 'failed'];
    expect(all.filter(goldActionFailsCheck)).toEqual(['refused', 'drift', 'untrusted']);
    expect(all.filter(goldActionOk)).toEqual(['written', 'unchanged', 'checked']);
  });
});

describe('genGold over tasks whose builds fail', () => {
  const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
  let tasks: Task[] = [];
  let traces = '';
  beforeAll(async () => {
    tasks = await Promise.all(['csv-sales-report', 'log-triage'].map((id) => loadTask(join(TASKS, id))));
    traces = await mkdtemp(join(tmpdir(), 'ab-gen-gold-'));
  });
  afterAll(async () => {
    await rm(traces, { recursive: true, force: true });
  });
  const options = { oracleTracesDir: '', mode: 'keep' as const, runs: 1, sufficiency: true, minimize: false, minimizeBudgetMs: 0, concurrency: 2 };

  it('reports an infrastructure failure in its task\'s row, goes on with the others, and writes nothing', async () => {
    const engine = fakeEngine({ fail: () => new AuthbenchError('IMAGE_BUILD_FAILED', 'no base image') });
    const done: string[] = [];
    const run = await genGold(engine, tasks, { ...options, oracleTracesDir: traces, onTaskDone: (r) => done.push(r.task) });
    expect(run.status).toBe('infra-failed');
    expect(run.tasks.map((r) => [r.task, r.action, r.error?.code])).toEqual([
      ['csv-sales-report', 'failed', 'IMAGE_BUILD_FAILED'],
      ['log-triage', 'failed', 'IMAGE_BUILD_FAILED'],
    ]);
    expect(run.failures.map((f) => f.task)).toEqual(['csv-sales-report', 'log-triage']);
    expect(done.sort()).toEqual(['csv-sales-report', 'log-triage']);
    expect(engine.builds).toHaveLength(2);
    expect(existsSync(goldPaths(traces, 'log-triage').dir)).toBe(false);
  });

  it('stops on a failure that is not infrastructure', async () => {
    const engine = fakeEngine({ fail: () => new Error('a bug') });
    await expect(genGold(engine, tasks, { ...options, oracleTracesDir: traces })).rejects.toThrow('a bug');
  });
});

describe('an oracle that fails under its own gold', () => {
  const base = { utility: { passed: false, reason: 'reward 0' }, oracleExitCode: 128 };

  it('lists every distinct denial (path, op, syscall; seccomp too) with counts', () => {
    const denials = [
      'rename /app/r/.git/refs/heads/x.lock -> /app/r/.git/refs/heads/x (rename) EACCES',
      'seccomp refused fchmodat /app/bin/tool mode 02755 EPERM',
      'rename /app/r/.git/refs/heads/x.lock -> /app/r/.git/refs/heads/x (rename) EACCES',
    ];
    const problems = insufficiencyProblems('t', { ...base, denials }, 'traces/t/gold.json');
    expect(problems.map((p) => [p.severity, p.file, p.message])).toEqual([
      ['error', 'traces/t/gold.json', 't: the oracle fails under its own gold policy (reward 0; oracle exit 128; 3 denied call(s), 2 distinct, listed below)'],
      ['error', 'traces/t/gold.json', `t: denied under gold: ${denials[0]} (×2)`],
      ['error', 'traces/t/gold.json', `t: denied under gold: ${denials[1]}`],
    ]);
  });

  it('says so when nothing was denied, and caps a flood', () => {
    expect(insufficiencyProblems('t', { ...base, denials: [] }, 'g').map((p) => p.message)).toEqual([
      't: the oracle fails under its own gold policy (reward 0; oracle exit 128; no call was denied)',
    ]);
    const flood = Array.from({ length: 45 }, (_, i) => `write /app/f${i} (openat) EACCES`);
    const problems = insufficiencyProblems('t', { ...base, denials: flood }, 'g');
    expect(problems).toHaveLength(1 + 40 + 1);
    expect(problems.at(-1)?.message).toBe('t: … and 5 more distinct denial(s)');
  });
});
