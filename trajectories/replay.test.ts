import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Episode } from '../agent/index.ts';
import { parseTrace, type RolloutSpec } from '../evaluation/index.ts';
import { fakeResult } from '../evaluation/test-support.ts';
import { importAtif, parseAtif } from './import.ts';
import { QualificationSchema, qualify, replayEntries, rewardPasses, shortCommand } from './replay.ts';
import type { ImportedTrajectory } from './schema.ts';

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')) as unknown;
const imported = (name: string, reward: number | null = null): ImportedTrajectory =>
  importAtif(parseAtif(fixture(name), name), name, reward === null ? null : { value: reward, file: 'reward.txt' });

// A real rollout whose two commands had operations denied by the kernel.
const TRACE = join(import.meta.dirname, '..', 'test', 'fixtures', 'traces', 'v2-seccomp-denials-visible.jsonl.gz');
const denied = parseTrace(gunzipSync(readFileSync(TRACE)).toString('utf8'), TRACE).episode as Episode;

const spec = (policy: RolloutSpec['policy'], defense = 'tool-boundary'): RolloutSpec => ({ id: `t__${policy}__${defense}__a1`, taskId: 't', policy, defense, attempt: 1, seed: 0 });

describe('replayEntries', () => {
  it('plays the mapped actions in order, unmapped ones left out', () => {
    expect(replayEntries(imported('tools-v1.6.json'))).toEqual(['grep -c ERROR /app/logs/app.log', 'grep ERROR /app/logs/app.log > /app/report.txt']);
    expect(replayEntries(imported('terminus-keystrokes.json'))).toEqual(['ls -la /app']);
  });

  it("keeps authbench's timeout_sec", () => {
    const t = imported('minimal-v1.0.json');
    const withTimeout = { ...t, proposals: t.proposals.map((p) => ({ ...p, timeout_sec: 90 })) };
    expect(replayEntries(withTimeout)).toEqual([{ command: 'ls /app', timeout_sec: 90 }]);
  });
});

describe('qualify', () => {
  it('agreement under allow-all against the native reward; denials under deny-all named by the original call ids', () => {
    const t = imported('tools-v1.6.json', 1);
    const q = qualify(t, 't', 'jobs/r', [
      { result: fakeResult(spec('allow-all'), 'completed', true), episode: undefined },
      { result: fakeResult(spec('deny-all'), 'completed', false), episode: denied },
    ]);
    expect(QualificationSchema.parse(q)).toEqual(q);
    expect(q.native).toEqual({ reward: 1, pass: true });
    expect(q.agreement).toEqual({ compared: 1, agreeing: 1, rate: 1 });
    expect(q.linkage.rate).toBe(1);
    expect(q.unmapped).toEqual([{ call_id: 'toolu_01', tool: 'Read', reason: expect.stringContaining('not a shell tool') as unknown }]);
    const deny = q.rollouts.find((r) => r.policy === 'deny-all');
    expect(deny).toMatchObject({ utility_success: false, replayed: 2, executed: 2, blocked: 0 });
    expect(deny?.denied.map((d) => d.call_id)).toEqual(['toolu_02', 'toolu_03']);
    expect(deny?.denied.every((d) => d.denials > 0)).toBe(true);
  });

  it('a replay that fails where the native run passed disagrees; enforced rollouts and infra errors are not compared', () => {
    const q = qualify(imported('minimal-v1.0.json', 1), 't', 'j', [
      { result: fakeResult(spec('allow-all'), 'completed', false), episode: undefined },
      { result: fakeResult(spec('none', 'none'), 'completed', true), episode: undefined },
      { result: fakeResult(spec('allow-all', 'prompt-only'), 'infra_error'), episode: undefined },
      { result: fakeResult(spec('gold'), 'completed', true), episode: undefined },
    ]);
    expect(q.agreement).toEqual({ compared: 2, agreeing: 1, rate: 0.5 });
  });

  it('without a native reward nothing is compared', () => {
    const q = qualify(imported('minimal-v1.0.json'), 't', 'j', [{ result: fakeResult(spec('allow-all')), episode: undefined }]);
    expect([q.native, q.agreement.rate, q.agreement.compared]).toEqual([null, null, 0]);
  });

  it('linkage is incomplete when calls went unanswered', () => {
    const q = qualify(imported('terminus-keystrokes.json'), 't', 'j', []);
    expect(q.linkage).toMatchObject({ tool_calls: 5, observed: 3, rate: 0.6, unobserved: ['t4', 't5'] });
    expect([q.mapped, q.unmapped.length]).toEqual([1, 4]);
  });

  it.each([
    ['ls -la', 'ls -la'],
    ['#!/bin/bash\n# Oracle: writes the report.\nset -euo pipefail\npython3 x.py', 'set -euo pipefail ...'],
    ['x'.repeat(100), `${'x'.repeat(77)}...`],
  ])('names the command %j as %j', (command, short) => {
    expect(shortCommand(command)).toBe(short);
  });

  it('a full reward passes, a partial one does not', () => {
    expect([1, 1.0, 0.99, 0].map(rewardPasses)).toEqual([true, true, false, false]);
  });
});
