/**
 * The ATIF adapter end to end: scripted/oracle on two starter tasks, every
 * rollout exported as a Harbor trial folder and re-imported (the same
 * proposals), then each trajectory replayed through `authbench trajectories
 * replay` under allow-all (its reward reproduced: endpoint agreement 100%) and
 * deny-all (the denials shown, reward 0), and the replay job rendered by
 * `authbench report`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../../docker/index.ts';
import { configFromFlags, readTrace, runJob } from '../../evaluation/index.ts';
import { readImport, type ExportedRollout, type Qualification } from '../../trajectories/index.ts';
import { runCli } from '../cli.ts';
import { retryInfraOnce } from '../infra-retry.ts';

const TASKS = ['log-triage', 'csv-sales-report'];
const jobs = mkdtempSync(join(tmpdir(), 'authbench-atif-'));
afterAll(() => rmSync(jobs, { recursive: true, force: true }));

describe('trajectories: export, import, replay', () => {
  it('round-trips oracle rollouts through ATIF and replays them under allow-all and deny-all', async () => {
    const engine = await connectDocker();
    const config = configFromFlags({ model: 'scripted/oracle', include: TASKS, policies: ['gold'], cache: 'off' });
    const outcome = await retryInfraOnce(
      'oracle job',
      (attempt) => runJob(engine, { config, jobsDir: jobs, name: `oracle-${attempt}`, resume: false, concurrency: 2 }),
      { infraResult: (o) => (o.incomplete ? 'a rollout hit an infrastructure error' : undefined) },
    );
    expect(outcome.results.map((r) => [r.task_id, r.utility_success])).toEqual(TASKS.map((t) => [t, true]).sort());

    const exported = await runCli('trajectories', 'export', outcome.dir, '--json');
    expect(exported.code, exported.err).toBe(0);
    const written = JSON.parse(exported.out) as ExportedRollout[];
    expect(written.map((w) => [w.reward, w.skipped])).toEqual([[1, undefined], [1, undefined]]);

    for (const w of written) {
      const trial = join(outcome.dir, w.rollout_id);
      const imported = await readImport(trial);
      const trace = await readTrace(join(outcome.dir, w.rollout_id));
      const proposals = trace?.steps.flatMap((s) => s.proposals) ?? [];
      expect(proposals.length).toBeGreaterThan(0);
      // The same proposals: commands, call ids, order; every call with its observation; the reward as the endpoint.
      expect(imported.proposals.map((p) => [p.id, p.command])).toEqual(proposals.map((p) => [p.id, (p.args as { command: string }).command]));
      expect(imported.linkage).toMatchObject({ observed: proposals.length, unobserved: [] });
      expect([imported.reward, imported.task_id]).toEqual([1, trace?.task_id]);

      const name = `replay-${imported.task_id ?? ''}`;
      const replayed = await runCli('trajectories', 'replay', trial, '--policy', 'deny-all', '--jobs-dir', jobs, '--job-name', name, '--json');
      expect(replayed.code, replayed.err).toBe(0);
      const q = JSON.parse(replayed.out) as Qualification;
      expect(q.agreement).toEqual({ compared: 1, agreeing: 1, rate: 1 });
      expect(q.linkage.rate).toBe(1);
      expect(q.unmapped).toEqual([]);
      const allow = q.rollouts.find((r) => r.policy === 'allow-all');
      const deny = q.rollouts.find((r) => r.policy === 'deny-all');
      expect(allow).toMatchObject({ utility_success: true, replayed: proposals.length, denied: [] });
      expect(deny?.utility_success).toBe(false);
      expect(deny?.denied.some((d) => d.denials > 0)).toBe(true);
      expect(deny?.denied.every((d) => imported.proposals.some((p) => p.id === d.call_id))).toBe(true);

      const report = await runCli('report', join(jobs, name));
      expect(report.code, report.err).toBe(0);
      expect(report.out).toContain('deny-all');
    }
  }, 300_000);
});
