/**
 * (a) and (b): the launcher's and strace's cost per command, timed inside one
 * container so the Docker exec round trip stays out of the numbers.
 */
import { AuthbenchError } from '../../core/index.ts';
import type { Container } from '../../docker/index.ts';
import { installLauncher, launcherArgv, parseLauncherReport } from '../../sandbox/launcher/index.ts';
import type { Rounds } from './plan.ts';
import { summarize, type Summary } from './stats.ts';
import { TIMER_SOURCE, parseTimerOutput, timerArgv } from './timer.ts';
import { BENCH_DIR, HELLO_C, RULES_PATH, SCRATCH_DIR, benchRulesText, variantArgv, type Variant, type Workload } from './workloads.ts';

const TIMER_PATH = `${BENCH_DIR}/timer.py`;
const OUT_DIR = `${BENCH_DIR}/out`;
const WORKLOAD_TIMEOUT_MS = 15 * 60_000;

/**
 * Install the launcher and the bench files, then make sure the launcher really
 * enforces here (full Landlock + seccomp, a write outside the rules refused):
 * a no-op launcher would make every ratio look perfect.
 */
export async function prepareBenchContainer(container: Container, launcherHostPath: string): Promise<void> {
  await installLauncher(container, launcherHostPath);
  await container.putFiles(BENCH_DIR, { 'timer.py': TIMER_SOURCE, rules: benchRulesText(), 'hello.c': HELLO_C });
  const mkdir = await container.exec({ cmd: ['mkdir', '-p', SCRATCH_DIR, OUT_DIR] });
  if (mkdir.exitCode !== 0) throw new AuthbenchError('INTERNAL', `mkdir in the bench container failed: ${mkdir.stderr.trim()}`);

  const reportPath = `${OUT_DIR}/check-report.json`;
  const probe = await container.exec({
    cmd: launcherArgv({ rulesPath: RULES_PATH, reportPath, cmd: ['sh', '-c', ': > /etc/authbench-bench-probe'] }),
  });
  const text = await container.readFile(reportPath);
  if (text === undefined) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'the launcher wrote no report in the bench container', {
      details: probe.stderr.trim().split('\n').slice(-5),
    });
  }
  const report = parseLauncherReport(text.toString('utf8'), reportPath);
  if (report.enforcement !== 'full' || !report.seccomp || probe.exitCode === 0) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'the launcher does not fully enforce in the bench container; its cost would be meaningless', {
      details: [`enforcement ${report.enforcement}, seccomp ${String(report.seccomp)}, write outside the rules exited ${String(probe.exitCode)}`],
    });
  }
}

/** Time `variants` of one workload, interleaved, inside the container. */
export async function measureWorkload(
  container: Container,
  workload: Workload,
  variants: readonly Variant[],
  rounds: Rounds,
): Promise<Partial<Record<Variant, Summary>>> {
  const tracePath = `${OUT_DIR}/${workload.id}.trace`;
  const spec = {
    cwd: SCRATCH_DIR,
    stderr: `${OUT_DIR}/stderr`,
    warmup: rounds.warmup,
    reps: rounds.reps,
    variants: Object.fromEntries(variants.map((v) => [v, variantArgv(v, workload.cmd, tracePath)])),
  };
  const result = await container.exec({ cmd: timerArgv(TIMER_PATH, spec), timeoutMs: WORKLOAD_TIMEOUT_MS });
  if (result.timedOut || result.exitCode !== 0) {
    throw new AuthbenchError('INTERNAL', `the bench timer for ${workload.id} ${result.timedOut ? 'timed out' : `exited ${String(result.exitCode)}`}`, {
      details: result.stderr.trim().split('\n').slice(-8),
    });
  }
  const durations = parseTimerOutput(result.stdout, workload.id);
  const out: Partial<Record<Variant, Summary>> = {};
  for (const v of variants) {
    const sample = durations[v];
    if (sample === undefined || sample.length === 0) throw new AuthbenchError('INTERNAL', `the bench timer recorded no ${v} runs of ${workload.id}`);
    out[v] = summarize(sample);
  }
  return out;
}
