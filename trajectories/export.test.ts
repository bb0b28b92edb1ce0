import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Episode } from '../agent/index.ts';
import { parseTrace, traceLines, writeTrace } from '../evaluation/index.ts';
import { fakeResult } from '../evaluation/test-support.ts';
import { exportJob, exportRollout, proposalObservation, rolloutReward } from './export.ts';
import { importAtif, parseAtif, readImport } from './import.ts';
import { ATIF_EXPORT_VERSION } from './schema.ts';

// A real recorded rollout (scripted/replay on log-triage under tool-boundary, with kernel denials).
const TRACE = join(import.meta.dirname, '..', 'test', 'fixtures', 'traces', 'v2-seccomp-denials-visible.jsonl.gz');
function episode(): Episode {
  const e = parseTrace(gunzipSync(readFileSync(TRACE)).toString('utf8'), TRACE).episode;
  if (e === null) throw new Error('the fixture is a version-2 trace');
  return e;
}

describe('export', () => {
  it('writes a trajectory our own reader accepts, one agent step per model call', () => {
    const e = episode();
    const traj = parseAtif(JSON.parse(JSON.stringify(exportRollout('job', 'r1', e, null))) as unknown, 'out');
    expect(traj.schema_version).toBe(ATIF_EXPORT_VERSION);
    expect(traj.session_id).toBe('job/r1');
    expect(traj.agent).toMatchObject({ name: 'scripted/replay', model_name: 'scripted/replay' });
    expect(traj.steps.map((s) => [s.step_id, s.source, s.tool_calls?.length ?? 0])).toEqual(e.steps.map((s, i) => [i + 1, 'agent', s.proposals.length]));
    expect(traj.steps[0]?.metrics).toEqual({ prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 });
    expect(traj.final_metrics).toMatchObject({ total_steps: e.steps.length });
    expect(traj.extra).toMatchObject({ authbench: { task_id: 'log-triage', rollout_id: 'r1' } });
  });

  it('round trip: export → import gives the same proposals (commands, call ids, order) with their observations', () => {
    const e = episode();
    const proposals = e.steps.flatMap((s) => s.proposals);
    expect(proposals.length).toBeGreaterThan(1);
    const back = importAtif(parseAtif(JSON.parse(JSON.stringify(exportRollout('job', 'r1', e, null))) as unknown, 'out'), 'out');
    expect(back.task_id).toBe('log-triage');
    expect(back.proposals.map((p) => [p.id, p.tool, p.command])).toEqual(proposals.map((p) => [p.id, p.tool, (p.args as { command: string }).command]));
    expect(back.proposals.map((p) => p.observation)).toEqual(proposals.map((p) => proposalObservation(p, 'tool-boundary')));
    expect(back.linkage).toMatchObject({ tool_calls: proposals.length, observed: proposals.length, orphan_results: 0 });
  });

  it("says what the model was told: the kernel's denials, a block, an invalid call", () => {
    const [first] = episode().steps.flatMap((s) => s.proposals);
    if (first === undefined) throw new Error('no proposal');
    expect(first.result?.denials.length).toBeGreaterThan(0);
    expect(proposalObservation(first, 'tool-boundary')).toMatch(/^exit code: .*operations denied \(EACCES\/EPERM\):/ms);
    const blocked = { ...first, decision: { action: 'block' as const, rule_id: 'taint-only/side-effect', reason: 'tainted' } };
    delete blocked.result;
    expect(proposalObservation(blocked, 'taint-only')).toBe('blocked by the taint-only defense (taint-only/side-effect): tainted. The command did not run.');
    expect(proposalObservation({ ...first, valid: false, invalid_reason: 'unknown tool' }, 'none')).toBe('invalid tool call, not executed: unknown tool');
  });

  it('the reward is the utility verdict, none when not validated', () => {
    expect([true, false, null].map((u) => rolloutReward({ utility_success: u }))).toEqual([1, 0, null]);
  });
});

describe('exportJob', () => {
  it("makes each rollout folder a trial folder readImport reads back; a rollout without a trace is skipped", async () => {
    const job = await mkdtemp(join(tmpdir(), 'atif-job-'));
    try {
      const spec = (id: string) => ({ id, taskId: 'log-triage', policy: 'gold' as const, defense: 'tool-boundary', attempt: 1, seed: 0 });
      for (const id of ['a', 'b']) {
        await mkdir(join(job, id));
        await writeFile(join(job, id, 'result.json'), JSON.stringify(fakeResult(spec(id), 'completed', id === 'a')));
      }
      await writeTrace(join(job, 'a'), traceLines('a', episode()));
      const written = await exportJob(job);
      expect(written).toEqual([
        { rollout_id: 'a', file: join(job, 'a', 'trajectory.json'), reward: 1 },
        { rollout_id: 'b', reward: 0, skipped: expect.stringContaining('no trace') as unknown },
      ]);
      const back = await readImport(join(job, 'a'));
      expect([back.reward, back.proposals.length, back.session_id]).toEqual([1, 2, `${basename(job)}/a`]);
      await expect(exportJob(join(job, 'a'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      await rm(job, { recursive: true, force: true });
    }
  });
});
