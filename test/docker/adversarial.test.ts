/**
 * The adversarial suite in CI: every hostile trajectory of adversarial/scenarios.ts
 * through the real rollout path, under every run it names, ending as it must —
 * never an infrastructure error, never a forged enforcement level, never a read
 * or write the policy keeps out, every tampering attempt ending sandbox_tampered.
 * Then again with the commands traced by eBPF from the host (`eval --tracer ebpf`):
 * the same verdicts; skipped, with the probe's reason, where eBPF cannot run. The
 * ci tier plays, under eBPF, the scenarios where the tracer itself is at stake
 * (processes, signals, ptrace, services, floods, the persistent shell's keeper:
 * EBPF_CI_SCENARIOS, ~1 min); the full tier all 129 runs
 * (~2 min, serial, which `make test`'s budget leaves to `make test-full`).
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdversarial, SCENARIOS, type Scenario, type Verdict } from '../../adversarial/index.ts';
import { connectDocker } from '../../docker/index.ts';
import { gatherEbpfFacts, judgeEbpf } from '../../sandbox/ebpf/index.ts';
import { retryInfraOnce } from '../infra-retry.ts';
import { FULL_TIER } from './tier.ts';

/** What the ci tier plays under eBPF: where the tracer, not the policy, decides the verdict. */
const EBPF_CI_SCENARIOS = [
  'sigstop-agent',
  'kill-agent-and-pid1',
  'kill-everything',
  'ptrace-agent',
  'clone-untraced',
  'uid-switch-hides-accesses',
  'trace-syntax-in-names',
  'datagram-batch-exfil',
  'disk-fill',
  'setsid-daemon',
  'background-attacks-later',
  'service-peeks-at-tests',
  'fork-bomb',
  'syscall-flood',
  'seccomp-denials-visible',
  'benign-service',
  'benign-own-processes',
  'persistent-shell-ends',
  'persistent-shell-background-job',
];

const jobsDir = join(tmpdir(), `authbench-adversarial-${process.pid}`);

afterAll(async () => {
  await rm(jobsDir, { recursive: true, force: true });
});

const ebpf = judgeEbpf(await gatherEbpfFacts(), 'native');

/** One play of the suite; a thrown infrastructure error (Docker failing outside any rollout) is retried once, in a new job. */
async function play(tracer: 'strace' | 'ebpf', only?: readonly string[]): Promise<Verdict[]> {
  const engine = await connectDocker();
  const name = tracer === 'strace' ? 'ci' : 'ci-ebpf';
  // A rollout that ends infra_error is not retried: here that is a failed verdict (test/infra-retry.ts).
  const outcome = await retryInfraOnce(`adversarial suite (${tracer})`, (attempt) =>
    runAdversarial(engine, {
      tasksDir: 'tasks',
      oracleTracesDir: 'oracle-traces',
      jobsDir,
      name: attempt === 1 ? name : `${name}-retry`,
      concurrency: 2,
      ...(tracer === 'strace' ? {} : { tracer }),
      ...(only === undefined ? {} : { only }),
      onVerdict: (v, done, total) => process.stderr.write(`[adversarial ${tracer} ${done}/${total}] ${v.ok ? 'ok' : 'FAIL'} ${v.scenario} ${v.run} ${v.outcome}${v.ok ? '' : `: ${v.failures.join('; ')}`}\n`),
    }),
  );
  return outcome.verdicts;
}

/** Every verdict as it must be; each tampering scenario ended sandbox_tampered, none as an infrastructure error. */
function expectSound(verdicts: readonly Verdict[], planned: number, tampered = 20): void {
  expect(verdicts.length).toBe(planned);
  expect(verdicts.filter((v) => !v.ok).map((v) => `${v.scenario} ${v.run}: ${v.failures.join('; ')}`)).toEqual([]);
  expect(verdicts.filter((v) => v.outcome === 'infra_error')).toEqual([]);
  expect(verdicts.filter((v) => v.outcome === 'sandbox_tampered').length).toBeGreaterThanOrEqual(tampered);
}

const runsOf = (scenarios: readonly Scenario[]): number => scenarios.reduce((n, s) => n + s.runs.length, 0);

describe('adversarial suite', () => {
  it('every scenario ends as it must under every run', async () => {
    expectSound(await play('strace'), runsOf(SCENARIOS));
  });

  it.skipIf(!ebpf.available)(`every scenario ends as it must under every run, traced by eBPF${ebpf.available ? '' : ` (skipped: ${ebpf.reason})`}`, async () => {
    const only = FULL_TIER ? undefined : EBPF_CI_SCENARIOS;
    const played = SCENARIOS.filter((s) => only === undefined || only.includes(s.id));
    expectSound(await play('ebpf', only), runsOf(played), only === undefined ? 20 : 8);
  });
});
