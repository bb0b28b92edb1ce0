/**
 * (a) and (b): the launcher's and strace's cost per command, timed inside one
 * container so the Docker exec round trip stays out of the numbers. The
 * container has the harness mounted read-only at HARNESS_ROOT, as task
 * containers do: the launcher and strace (with its loader and libraries) come
 * from there, never from the image.
 */
import { AuthbenchError } from '../../core/index.ts';
import type { Container, ContainerSpec, Engine } from '../../docker/index.ts';
import { HARNESS_STRACE, LAUNCHER_PATH, ensureHarness, harnessMount, launcherArgv, parseLauncherReport } from '../../sandbox/launcher/index.ts';
import type { Rounds } from './plan.ts';
import { summarize, type Summary } from './stats.ts';
import { TIMER_SOURCE, parseTimerOutput, timerArgv } from './timer.ts';
import { BENCH_DIR, HELLO_C, RULES_PATH, SCRATCH_DIR, benchRulesText, variantArgv, type Variant, type Workload } from './workloads.ts';

export const TIMER_PATH = `${BENCH_DIR}/timer.py`;
export const OUT_DIR = `${BENCH_DIR}/out`;
export const WORKLOAD_TIMEOUT_MS = 15 * 60_000;

/**
 * A container of `image` as a task container gets it: the harness mounted
 * read-only, the harness's idle process as its main process.
 */
export async function startHarnessContainer(engine: Engine, image: string, spec: Omit<ContainerSpec, 'image' | 'volumes' | 'idleCommand'>): Promise<Container> {
  const harness = await ensureHarness(engine);
  return engine.startContainer({ ...spec, image, volumes: [harnessMount(harness)], idleCommand: [LAUNCHER_PATH, '--idle'] });
}

/**
 * Write the bench files, then make sure the harness really works here: its
 * strace starts through its own loader, and the launcher enforces (full
 * Landlock + seccomp, a write outside the rules refused) — a no-op launcher
 * would make every ratio look perfect.
 */
export async function prepareBenchContainer(container: Container): Promise<void> {
  const strace = await container.exec({ cmd: [...HARNESS_STRACE, '-V'] });
  if (strace.exitCode !== 0) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', "the harness's strace does not start in the bench container", {
      details: strace.stderr.trim().split('\n').slice(-5),
    });
  }
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
