/**
 * (d) and (e): tracing as eval pays for it, pinned and unpinned (eval --cpu-pinning).
 *   (d) traced ÷ untraced per workload in a container as eval starts one (the task's CPU
 *       quota, no cpuset): timed inside it — unpinned, and pinned as a rollout slot pins
 *       (tracer and tracee inherit one CPU's affinity at spawn) — and end to end through
 *       SandboxSession.run, the path a rollout's commands take (one request to the session's
 *       agent, the launcher, the harness's strace, the trace parsed on the host), with a
 *       session unpinned and one whose agent pins (SessionOptions.pinCpu);
 *   (e) rollouts per minute of a synthetic rollout (fresh container, session, the three
 *       workloads traced, teardown) at -n 1, 2 and 4, slots pinned as executeJob pins them
 *       (evaluation/cpu-pinning.ts) or not. No model and no validators: it isolates what pinning
 *       changes, not a real rollout's fixed cost.
 */
import { AuthbenchError, mapPool } from '../../core/index.ts';
import type { Container, Engine } from '../../docker/index.ts';
import { SlotPool, slotCpu } from '../../evaluation/index.ts';
import { SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';
import { DEFAULT_TASK_LIMITS } from '../../taskenv/index.ts';
import { OUT_DIR, TIMER_PATH, WORKLOAD_TIMEOUT_MS, prepareBenchContainer, startHarnessContainer } from './in-container.ts';
import type { Rounds } from './plan.ts';
import { summarize, type Summary } from './stats.ts';
import { parseTimerOutput, timerArgv, type TimerSpec } from './timer.ts';
import { SCRATCH_DIR, variantArgv, type Workload } from './workloads.ts';

/** As a task container runs when task.toml says nothing: a CPU quota, no cpuset. */
const TASK_LIKE = {
  network: 'none',
  cpus: DEFAULT_TASK_LIMITS.cpus,
  memoryBytes: DEFAULT_TASK_LIMITS.memoryMb * 1024 * 1024,
  pidsLimit: DEFAULT_TASK_LIMITS.pids,
  capAdd: ['SYS_PTRACE'],
} as const;

export type PinMode = 'unpinned' | 'pinned';
export const PIN_MODES: readonly PinMode[] = ['unpinned', 'pinned'];

/** In-container cells: the timer spawns each, pinned ones with its own affinity set to the CPU first. */
export const IN_CONTAINER_CELLS = ['untraced', 'untraced_pinned', 'traced', 'traced_pinned'] as const;
/** Through SandboxSession.run: untraced and traced unpinned, traced with the agent pinning. */
export const SESSION_CELLS = ['untraced', 'traced', 'traced_pinned'] as const;

export interface EvalPathResult {
  id: string;
  label: string;
  in_container: Record<(typeof IN_CONTAINER_CELLS)[number], Summary>;
  session: Record<(typeof SESSION_CELLS)[number], Summary>;
}

/** The timer spec of one workload's in-container cells (untraced: under the launcher, as every eval command is). Pure. */
export function inContainerSpec(workload: Workload, rounds: Rounds, pinCpu: number): TimerSpec {
  const tracePath = `${OUT_DIR}/${workload.id}.trace`;
  const untraced = variantArgv('launcher', workload.cmd, tracePath);
  const traced = variantArgv('launcher+strace', workload.cmd, tracePath);
  return {
    cwd: SCRATCH_DIR,
    stderr: `${OUT_DIR}/stderr`,
    warmup: rounds.warmup,
    reps: rounds.reps,
    variants: { untraced, untraced_pinned: untraced, traced, traced_pinned: traced },
    affinity: { untraced_pinned: [pinCpu], traced_pinned: [pinCpu] },
  };
}

async function inContainer(container: Container, workload: Workload, rounds: Rounds, pinCpu: number): Promise<EvalPathResult['in_container']> {
  const result = await container.exec({ cmd: timerArgv(TIMER_PATH, inContainerSpec(workload, rounds, pinCpu)), timeoutMs: WORKLOAD_TIMEOUT_MS });
  if (result.timedOut || result.exitCode !== 0) {
    throw new AuthbenchError('INTERNAL', `the bench timer for ${workload.id} ${result.timedOut ? 'timed out' : `exited ${String(result.exitCode)}`}`, {
      details: result.stderr.trim().split('\n').slice(-8),
    });
  }
  const ms = parseTimerOutput(result.stdout, workload.id);
  const get = (cell: (typeof IN_CONTAINER_CELLS)[number]): Summary => {
    const sample = ms[cell];
    if (sample === undefined || sample.length === 0) throw new AuthbenchError('INTERNAL', `the bench timer recorded no ${cell} runs of ${workload.id}`);
    return summarize(sample);
  };
  return { untraced: get('untraced'), untraced_pinned: get('untraced_pinned'), traced: get('traced'), traced_pinned: get('traced_pinned') };
}

async function runChecked(session: SandboxSession, cmd: readonly string[], trace: boolean): Promise<number> {
  // Unenforced (the guard rules): no host-side compile in either path, so the difference is the tracing alone.
  const options: RunOptions = { cmd, mode: { kind: 'unenforced' }, trace };
  const started = performance.now();
  const r = await session.run(options);
  const ms = performance.now() - started;
  if (r.launcherError !== undefined || r.spawnError !== undefined || r.exec.exitCode !== 0) {
    throw new AuthbenchError('INTERNAL', `SandboxSession.run of ${cmd[0] ?? '?'} failed: ${r.launcherError ?? r.spawnError ?? `exit ${String(r.exec.exitCode)}`}`, {
      details: r.exec.stderr.trim().split('\n').slice(-5),
    });
  }
  if (trace && r.events.length === 0) throw new AuthbenchError('INTERNAL', `SandboxSession.run of ${cmd[0] ?? '?'} was traced but returned no events`);
  return ms;
}

async function benchContainer(engine: Engine, image: string, labels: Readonly<Record<string, string>>): Promise<Container> {
  const container = await startHarnessContainer(engine, image, { ...TASK_LIKE, capAdd: [...TASK_LIKE.capAdd], labels: { ...labels } });
  try {
    await prepareBenchContainer(container);
    return container;
  } catch (e) {
    await container.remove();
    throw e;
  }
}

/**
 * (d): every workload in one task-like container, first timed inside it (no round trip, the
 * tracing alone), then through two sessions on it — one unpinned, one whose agent pins each
 * command with its tracer to `pinCpu` — cells interleaved round by round (order rotated) so
 * load on the shared machine hits them alike.
 */
export async function measureEvalPath(
  engine: Engine,
  image: string,
  workloads: readonly Workload[],
  rounds: Rounds,
  options: { pinCpu: number; labels: Readonly<Record<string, string>>; onProgress?: (line: string) => void },
): Promise<EvalPathResult[]> {
  const container = await benchContainer(engine, image, options.labels);
  const unpinned = new SandboxSession(container, SCRATCH_DIR, {});
  const pinned = new SandboxSession(container, SCRATCH_DIR, { pinCpu: options.pinCpu });
  try {
    // The first command of a session starts its agent: out of the numbers.
    for (const s of [unpinned, pinned]) await runChecked(s, ['true'], true);
    const out: EvalPathResult[] = [];
    for (const w of workloads) {
      options.onProgress?.(`eval path: ${w.label}, in the container`);
      const inside = await inContainer(container, w, rounds, options.pinCpu);
      options.onProgress?.(`eval path: ${w.label}, through the session`);
      const cells = [
        { key: 'untraced', session: unpinned, trace: false },
        { key: 'traced', session: unpinned, trace: true },
        { key: 'traced_pinned', session: pinned, trace: true },
      ] as const;
      const samples = new Map<string, number[]>(cells.map((c) => [c.key, []]));
      for (let round = 0; round < rounds.warmup + rounds.reps; round++) {
        const k = round % cells.length;
        for (const c of [...cells.slice(k), ...cells.slice(0, k)]) {
          const ms = await runChecked(c.session, w.cmd, c.trace);
          if (round >= rounds.warmup) samples.get(c.key)?.push(ms);
        }
      }
      const get = (key: (typeof SESSION_CELLS)[number]): Summary => summarize(samples.get(key) ?? []);
      out.push({ id: w.id, label: w.label, in_container: inside, session: { untraced: get('untraced'), traced: get('traced'), traced_pinned: get('traced_pinned') } });
    }
    return out;
  } finally {
    for (const s of [unpinned, pinned]) await s.close().catch(() => undefined);
    await container.remove();
  }
}

export interface RolloutRate {
  concurrency: number;
  mode: PinMode;
  rollouts: number;
  elapsed_ms: number;
  per_minute: number;
}

/** One synthetic rollout: a fresh task-like container, a session (pinned or not), the workloads traced once each, teardown. */
async function syntheticRollout(engine: Engine, image: string, workloads: readonly Workload[], pinCpu: number | undefined, labels: Readonly<Record<string, string>>): Promise<void> {
  const container = await benchContainer(engine, image, labels);
  const session = new SandboxSession(container, SCRATCH_DIR, pinCpu === undefined ? {} : { pinCpu });
  try {
    for (const w of workloads) await runChecked(session, w.cmd, true);
  } finally {
    await session.close().catch(() => undefined);
    await container.remove();
  }
}

/**
 * (e): `count` synthetic rollouts (at least 2n) at each concurrency n, pinned and unpinned; the configurations
 * alternate (and reverse on the second pass) so a load change on the shared machine does not
 * land on one alone.
 */
export async function measureRolloutRates(
  engine: Engine,
  image: string,
  workloads: readonly Workload[],
  options: { concurrencies: readonly number[]; count: number; cpus: number; labels: Readonly<Record<string, string>>; onProgress?: (line: string) => void },
): Promise<RolloutRate[]> {
  const configs = options.concurrencies.flatMap((n) => PIN_MODES.map((mode) => ({ n, mode })));
  const totals = new Map<string, { rollouts: number; ms: number }>();
  // At least n rollouts per pass, so every slot is busy in each.
  const target = (n: number): number => Math.max(options.count, 2 * n);
  for (const pass of [configs, [...configs].reverse()]) {
    for (const { n, mode } of pass) {
      const done = totals.get(`${n}/${mode}`) ?? { rollouts: 0, ms: 0 };
      const count = Math.min(Math.ceil(target(n) / 2), target(n) - done.rollouts);
      if (count <= 0) continue;
      options.onProgress?.(`rollouts: ${count} at -n ${n}, ${mode}`);
      const slots = new SlotPool(n);
      const started = performance.now();
      await mapPool(
        Array.from({ length: count }, (_, i) => i),
        n,
        async () => {
          const slot = slots.take();
          try {
            await syntheticRollout(engine, image, workloads, mode === 'pinned' ? slotCpu(slot, options.cpus) : undefined, options.labels);
          } finally {
            slots.release(slot);
          }
        },
      );
      totals.set(`${n}/${mode}`, { rollouts: done.rollouts + count, ms: done.ms + (performance.now() - started) });
    }
  }
  return configs.map(({ n, mode }) => {
    const t = totals.get(`${n}/${mode}`) ?? { rollouts: 0, ms: 0 };
    return { concurrency: n, mode, rollouts: t.rollouts, elapsed_ms: t.ms, per_minute: t.ms === 0 ? 0 : (t.rollouts * 60_000) / t.ms };
  });
}
