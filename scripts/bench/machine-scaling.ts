/**
 * What the machine itself gives n processes at once, with no authbench in the loop (issue 21 item
 * 4): n containers of the offline base image, each running `python3 -c 'import pytest'` K times in
 * one exec, all n started together; throughput = n·K ÷ the wall time until the last one ends.
 * Importing pytest is most of a scripted rollout's CPU here (the oracle's python, the validator's
 * pytest), and it is memory-bound work: on a 2-CPU VM that runs a CPU-bound loop at 1.05× its
 * alone time two at a time, this work takes 1.2–1.35× its alone CPU time four at a time. So the n ÷ 1
 * throughput of this loop is the most `eval -n n` ÷ `-n 1` can reach on the machine for such
 * rollouts, and the rates section's ratio is read against it. Each of its rounds at n runs just
 * before the rates section's jobs at n (load on the shared machine lands on both alike); medians
 * over rounds. The exec's own round trip (~0.1 s) is in each process's time, alike at every n.
 */
import { z } from 'zod';
import { AuthbenchError } from '../../core/index.ts';
import { BASE_IMAGE_REF, type Container, type Engine } from '../../docker/index.ts';
import { median } from './stats.ts';

/** The work each process does, K times: the import that dominates a scripted rollout's CPU. */
export const MACHINE_WORKLOAD = "python3 -c 'import pytest'";

export const MachineRunSchema = z.object({
  concurrency: z.number().int().positive(),
  round: z.number().int().nonnegative(),
  /** Runs of the workload per process. */
  repeats: z.number().int().positive(),
  /** From starting the n execs to the last one's end. */
  seconds: z.number().positive(),
});
export type MachineRun = z.infer<typeof MachineRunSchema>;

export const MachineRowSchema = z.object({
  concurrency: z.number().int().positive(),
  runs: z.number().int().positive(),
  /** Median over rounds of workload runs per second, all processes together. */
  per_second: z.number(),
  /** per_second ÷ 1 at once's (null without that row). */
  ratio: z.number().nullable(),
});
export type MachineRow = z.infer<typeof MachineRowSchema>;

export const MachineScalingSchema = z.object({
  image: z.string(),
  workload: z.string(),
  repeats: z.number().int().positive(),
  rows: z.array(MachineRowSchema),
});
export type MachineScaling = z.infer<typeof MachineScalingSchema>;

/** One row per n (ascending): the median throughput over rounds and its ratio to n = 1. Pure. */
export function machineRows(runs: readonly MachineRun[]): MachineRow[] {
  const ns = [...new Set(runs.map((r) => r.concurrency))].sort((a, b) => a - b);
  const rows = ns.map((n) => {
    const mine = runs.filter((r) => r.concurrency === n);
    return { concurrency: n, runs: mine.length, per_second: median(mine.map((r) => (n * r.repeats) / r.seconds)) };
  });
  const base = rows.find((r) => r.concurrency === 1)?.per_second;
  return rows.map((r) => ({ ...r, ratio: base === undefined || base <= 0 ? null : r.per_second / base }));
}

/** The machine's n ÷ 1 (null when either was not measured). Pure. */
export function machineRatio(m: MachineScaling, n: number): number | null {
  return m.rows.find((r) => r.concurrency === n)?.ratio ?? null;
}

/**
 * The section's lines; with the rates section's -n n ÷ -n 1 per tracer, each set against the
 * machine's n ÷ 1 for the same n. Pure.
 */
export function renderMachineScaling(m: MachineScaling, authbench: readonly { tracer: string; concurrency: number; ratio: number | null }[] = []): string {
  const lines = [
    `the machine alone (no authbench: n containers of ${m.image}, each running ${m.workload} ${m.repeats} times, started together; median over rounds)`,
    ...m.rows.map((r) => `  ${String(r.concurrency).padStart(2)} at once  ${r.per_second.toFixed(2).padStart(6)} /s  ${r.ratio === null ? '   –' : `${r.ratio.toFixed(2)}×`} 1 at once`),
  ];
  for (const a of authbench) {
    const machine = machineRatio(m, a.concurrency);
    if (a.ratio === null || machine === null || machine <= 0) continue;
    lines.push(`  authbench (${a.tracer}) -n ${a.concurrency} ÷ -n 1 ${a.ratio.toFixed(2)}× = ${((a.ratio / machine) * 100).toFixed(0)}% of the machine's ${machine.toFixed(2)}× for this work`);
  }
  return [...lines, ''].join('\n');
}

/** Runs of the workload K times in one exec; a failed run fails the bench (its time would not be the work's). */
async function runLoop(container: Container, repeats: number): Promise<void> {
  const script = `i=0; while [ $i -lt ${repeats} ]; do ${MACHINE_WORKLOAD} || exit 1; i=$((i+1)); done`;
  const r = await container.exec({ cmd: ['sh', '-c', script], timeoutMs: 600_000 });
  if (r.exitCode !== 0) throw new AuthbenchError('INTERNAL', `bench machine scaling: ${MACHINE_WORKLOAD} failed in ${BASE_IMAGE_REF}`, { details: r.stderr.trim().split('\n').slice(-5) });
}

/**
 * The machine-alone loop, kept ready beside the rates section: `measure(round, n)` runs one round
 * at n right where the rates section runs its jobs at n (measureConcurrency's `beside`), so load on
 * the shared machine lands on both alike.
 */
export class MachineScalingProbe implements AsyncDisposable {
  readonly #containers: Container[];
  readonly #repeats: number;
  readonly #runs: MachineRun[] = [];

  private constructor(containers: Container[], repeats: number) {
    this.#containers = containers;
    this.#repeats = repeats;
  }

  /** Starts `most` containers of the base image and runs the workload once in each (the image's files into the page cache, as for a built task's rollouts). */
  static async start(engine: Engine, options: { most: number; repeats: number; labels: Readonly<Record<string, string>> }): Promise<MachineScalingProbe> {
    const containers: Container[] = [];
    try {
      for (let i = 0; i < options.most; i++) containers.push(await engine.startContainer({ image: BASE_IMAGE_REF, network: 'none', labels: { ...options.labels } }));
      await Promise.all(containers.map((c) => runLoop(c, 1)));
      return new MachineScalingProbe(containers, options.repeats);
    } catch (e) {
      for (const c of containers) await c.remove().catch(() => undefined);
      throw e;
    }
  }

  async measure(round: number, n: number): Promise<void> {
    if (n > this.#containers.length) throw new AuthbenchError('INTERNAL', `bench machine scaling: ${n} at once, but ${this.#containers.length} containers`);
    const t0 = performance.now();
    await Promise.all(this.#containers.slice(0, n).map((c) => runLoop(c, this.#repeats)));
    this.#runs.push({ concurrency: n, round, repeats: this.#repeats, seconds: (performance.now() - t0) / 1000 });
  }

  result(): MachineScaling {
    return { image: BASE_IMAGE_REF, workload: MACHINE_WORKLOAD, repeats: this.#repeats, rows: machineRows(this.#runs) };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const c of this.#containers) await c.remove().catch(() => undefined);
  }
}
