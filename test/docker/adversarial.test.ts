/**
 * The adversarial suite in CI: every hostile trajectory of adversarial/scenarios.ts
 * through the real rollout path, under every run it names, ending as it must —
 * never an infrastructure error, never a forged enforcement level, never a read
 * or write the policy keeps out, every tampering attempt ending sandbox_tampered.
 * Then again with the commands traced by eBPF from the host (`eval --tracer ebpf`):
 * the same verdicts, the persistent-shell scenarios left out (strace's only);
 * skipped, with the probe's reason, where eBPF cannot run.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdversarial, SCENARIOS } from '../../adversarial/index.ts';
import { connectDocker } from '../../docker/index.ts';
import { gatherEbpfFacts, judgeEbpf } from '../../sandbox/ebpf/index.ts';
import { retryInfraOnce } from '../infra-retry.ts';

const jobsDir = join(tmpdir(), `authbench-adversarial-${process.pid}`);

afterAll(async () => {
  await rm(jobsDir, { recursive: true, force: true });
});

const ebpf = judgeEbpf(await gatherEbpfFacts(), 'native');

describe('adversarial suite', () => {
  it('every scenario ends as it must under every run', async () => {
    const engine = await connectDocker();
    // A thrown infrastructure error (Docker failing outside any rollout) is retried once, in a new job, and
    // reported (test/infra-retry.ts). A rollout that ends infra_error is not: here that is a failed verdict.
    const outcome = await retryInfraOnce('adversarial suite', (attempt) =>
      runAdversarial(engine, {
        tasksDir: 'tasks',
        oracleTracesDir: 'oracle-traces',
        jobsDir,
        name: attempt === 1 ? 'ci' : 'ci-retry',
        concurrency: 2,
        onVerdict: (v, done, total) => process.stderr.write(`[adversarial ${done}/${total}] ${v.ok ? 'ok' : 'FAIL'} ${v.scenario} ${v.run} ${v.outcome}${v.ok ? '' : `: ${v.failures.join('; ')}`}\n`),
      }),
    );
    expect(outcome.verdicts.length).toBe(SCENARIOS.reduce((n, s) => n + s.runs.length, 0));
    expect(outcome.verdicts.filter((v) => !v.ok).map((v) => `${v.scenario} ${v.run}: ${v.failures.join('; ')}`)).toEqual([]);
    // Each tampering scenario ended sandbox_tampered; none ended as an infrastructure error.
    expect(outcome.verdicts.filter((v) => v.outcome === 'infra_error')).toEqual([]);
    expect(outcome.verdicts.filter((v) => v.outcome === 'sandbox_tampered').length).toBeGreaterThanOrEqual(20);
  });

  it.skipIf(!ebpf.available)(`every scenario ends as it must under every run, traced by eBPF${ebpf.available ? '' : ` (skipped: ${ebpf.reason})`}`, async () => {
    const engine = await connectDocker();
    const outcome = await retryInfraOnce('adversarial suite (ebpf)', (attempt) =>
      runAdversarial(engine, {
        tasksDir: 'tasks',
        oracleTracesDir: 'oracle-traces',
        jobsDir,
        name: attempt === 1 ? 'ci-ebpf' : 'ci-ebpf-retry',
        concurrency: 2,
        tracer: 'ebpf',
        onVerdict: (v, done, total) => process.stderr.write(`[adversarial ebpf ${done}/${total}] ${v.ok ? 'ok' : 'FAIL'} ${v.scenario} ${v.run} ${v.outcome}${v.ok ? '' : `: ${v.failures.join('; ')}`}\n`),
      }),
    );
    expect(outcome.verdicts.length).toBe(SCENARIOS.filter((s) => s.shell !== 'persistent').reduce((n, s) => n + s.runs.length, 0));
    expect(outcome.verdicts.filter((v) => !v.ok).map((v) => `${v.scenario} ${v.run}: ${v.failures.join('; ')}`)).toEqual([]);
    expect(outcome.verdicts.filter((v) => v.outcome === 'infra_error')).toEqual([]);
    expect(outcome.verdicts.filter((v) => v.outcome === 'sandbox_tampered').length).toBeGreaterThanOrEqual(20);
  });
});
