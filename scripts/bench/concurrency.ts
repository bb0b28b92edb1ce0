/**
 * Real rollouts per minute at -n 1, 2 and 4 (issue 21 items 4 and 5): scripted/oracle rollouts of
 * a few starter tasks under their gold, through runJob and the real runRollout (container,
 * session, episode, validators, measurement, teardown) — what `make reproduce` runs, where the
 * synthetic rollouts of section (e) leave out the validators and the measurement. Each round runs
 * one job per -n in a rotated order (load on the shared machine lands on all alike). A cell has two
 * rates: overall, its rollouts over the time from its first rollout's start to its last one's end
 * (the job's image check and folder are not rollouts), and steady, the rollouts started while every
 * slot was busy — from the n-th start to the last start, N − n of them — over that time: a job of a
 * dozen rollouts at -n 4 spends a good part of its time filling and draining its slots, which a
 * `make reproduce` of 3,416 does not. The section's figures are medians over rounds; each -n ÷ -n 1
 * and the projected `make reproduce` at its -n are taken from the steady rates.
 *
 * With several tracers (eval --tracer strace and ebpf), every round runs one job per -n per tracer,
 * the tracers' order alternating from round to round, so both see the same stretch of load; each
 * tracer gets its own rows, and renderTracerComparison sets their steady rates side by side.
 *
 * Beside each steady rate: how many of the host's CPUs were busy over that stretch, and the CPU
 * time one rollout took (busy CPUs × seconds ÷ rollouts). When every CPU is busy at -n 4, nothing
 * serializes the rollouts: the rate is bound by the CPU a rollout costs, and -n 4 ÷ -n 1 can reach
 * at most CPUs ÷ CPUs busy at -n 1 (the `cpu ceiling`) unless a rollout's CPU cost falls with -n.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AuthbenchError } from '../../core/index.ts';
import type { Engine } from '../../docker/index.ts';
import { configFromFlags, runJob, type EvalTracer } from '../../evaluation/index.ts';
import { busyCores, sampleCpu, type CpuSample } from './host-cpu.ts';
import { median } from './stats.ts';

/** `make reproduce` (issue 21): 3,360 rollouts, then the determinism re-run of 56, at scripts/reproduce.ts's default -n. */
export const REPRODUCE = { rollouts: 3360, rerun: 56, concurrency: 4 } as const;
/** The issue's target for -n 4 ÷ -n 1 on two cores, and for the projected reproduce (minutes). */
export const SCALING_TARGET = 1.8;
export const REPRODUCE_TARGET_MIN = 30;

export const ConcurrencyRunSchema = z.object({
  concurrency: z.number().int().positive(),
  round: z.number().int().nonnegative(),
  rollouts: z.number().int().positive(),
  /** First rollout start to last rollout end. */
  seconds: z.number().positive(),
  /** From the n-th start (every slot busy) to the last start, and the starts after the n-th in it; absent when rollouts ≤ n. */
  steady: z
    .object({
      seconds: z.number().positive(),
      rollouts: z.number().int().positive(),
      /** The host's CPUs busy on average over the stretch (absent without /proc/stat). */
      cores: z.number().nonnegative().optional(),
    })
    .optional(),
});
export type ConcurrencyRun = z.infer<typeof ConcurrencyRunSchema>;

export const ConcurrencyRowSchema = z.object({
  concurrency: z.number().int().positive(),
  runs: z.number().int().positive(),
  rollouts: z.number().int().positive(),
  /** Median over rounds of rollouts per minute, first start to last end. */
  per_minute: z.number(),
  /** Median over rounds of the steady rate (every slot busy); null when no round had one. */
  steady_per_minute: z.number().nullable(),
  /** steady_per_minute ÷ -n 1's (null without a -n 1 row or a steady rate). */
  ratio: z.number().nullable(),
  /** Median over rounds of the CPUs busy in the steady stretch (null without samples). */
  busy_cores: z.number().nullable(),
  /** Median over rounds of the CPU seconds per rollout in the steady stretch (busy CPUs × seconds ÷ rollouts). */
  cpu_s_per_rollout: z.number().nullable(),
});
export type ConcurrencyRow = z.infer<typeof ConcurrencyRowSchema>;

export const ConcurrencyResultSchema = z.object({
  tasks: z.array(z.string()),
  /** What traced the rollouts' commands (eval --tracer); absent: strace (results written before). */
  tracer: z.enum(['strace', 'ebpf']).optional(),
  rows: z.array(ConcurrencyRowSchema),
  /** Minutes for REPRODUCE at its -n, at this run's rate there (null when that -n was not measured). */
  projected_reproduce_min: z.number().nullable(),
  load: z.array(z.number()),
  /** The host's CPUs. */
  cpus: z.number().int().positive(),
  /** The most -n k ÷ -n 1 can be while a rollout costs what it does at -n 1: cpus ÷ -n 1's busy CPUs (null without them). */
  cpu_ceiling: z.number().nullable(),
});
export type ConcurrencyResult = z.infer<typeof ConcurrencyResultSchema>;

/**
 * The steady stretch of one job from its rollouts' start times: from the n-th start (every slot
 * busy) to the last, with the N − n starts after the n-th. Undefined when there are no more
 * rollouts than slots. Pure.
 */
export function steadyStretch(startsMs: readonly number[], n: number): { seconds: number; rollouts: number } | undefined {
  const sorted = [...startsMs].sort((a, b) => a - b);
  const from = sorted[n - 1];
  const to = sorted.at(-1);
  if (from === undefined || to === undefined || sorted.length <= n || to <= from) return undefined;
  return { seconds: (to - from) / 1000, rollouts: sorted.length - n };
}

/** One row per -n (ascending): median rates over rounds, the steady one's ratio to -n 1. Pure. */
export function concurrencyRows(runs: readonly ConcurrencyRun[]): ConcurrencyRow[] {
  const ns = [...new Set(runs.map((r) => r.concurrency))].sort((a, b) => a - b);
  const rows = ns.map((n) => {
    const mine = runs.filter((r) => r.concurrency === n);
    const steady = mine.flatMap((r) => (r.steady === undefined ? [] : [(r.steady.rollouts * 60) / r.steady.seconds]));
    const sampled = mine.flatMap((r) => (r.steady?.cores === undefined ? [] : [{ ...r.steady, cores: r.steady.cores }]));
    return {
      concurrency: n,
      runs: mine.length,
      rollouts: mine.reduce((s, r) => s + r.rollouts, 0),
      per_minute: median(mine.map((r) => (r.rollouts * 60) / r.seconds)),
      steady_per_minute: steady.length === 0 ? null : median(steady),
      busy_cores: sampled.length === 0 ? null : median(sampled.map((s) => s.cores)),
      cpu_s_per_rollout: sampled.length === 0 ? null : median(sampled.map((s) => (s.cores * s.seconds) / s.rollouts)),
    };
  });
  const base = rows.find((r) => r.concurrency === 1)?.steady_per_minute ?? null;
  return rows.map((r) => ({ ...r, ratio: base === null || base === 0 || r.steady_per_minute === null ? null : r.steady_per_minute / base }));
}

/** cpus ÷ the CPUs busy at -n 1: the ratio's bound while a rollout's CPU cost does not fall with -n. Pure. */
export function cpuCeiling(rows: readonly ConcurrencyRow[], cpus: number): number | null {
  const busy = rows.find((r) => r.concurrency === 1)?.busy_cores ?? null;
  return busy === null || busy <= 0 ? null : cpus / busy;
}

/** Minutes `make reproduce` takes at the steady rate at its -n (its rollouts and the re-run; job start-up left out). Pure. */
export function projectReproduce(rows: readonly ConcurrencyRow[]): number | null {
  const rate = rows.find((r) => r.concurrency === REPRODUCE.concurrency)?.steady_per_minute ?? null;
  return rate === null || rate === 0 ? null : (REPRODUCE.rollouts + REPRODUCE.rerun) / rate;
}

/** -n values in round k's order: rotated by k. Pure. */
export function concurrencyOrder<T>(ns: readonly T[], round: number): T[] {
  const k = ns.length === 0 ? 0 : round % ns.length;
  return [...ns.slice(k), ...ns.slice(0, k)];
}

export function renderConcurrency(r: ConcurrencyResult): string {
  const last = r.rows.at(-1);
  const one = r.rows.find((row) => row.concurrency === 1)?.cpu_s_per_rollout ?? null;
  const growth = last === undefined || last.concurrency === 1 || one === null || one <= 0 || last.cpu_s_per_rollout === null ? undefined : last.cpu_s_per_rollout / one;
  const lines = [
    `real rollouts per minute (scripted/oracle on ${r.tasks.join(', ')}, gold, tool-boundary, traced by ${r.tracer ?? 'strace'}; median over rounds; load at start ${r.load.map((l) => l.toFixed(1)).join(' ')})`,
    `  steady: every slot busy (n-th start to last start); overall: first start to last end, filling and draining the slots included`,
    ...r.rows.map(
      (row) =>
        `  -n ${String(row.concurrency).padEnd(3)} steady ${row.steady_per_minute === null ? '     –' : row.steady_per_minute.toFixed(1).padStart(6)} /min  ${row.ratio === null ? '   –' : `${row.ratio.toFixed(2)}×`} -n 1   overall ${row.per_minute.toFixed(1).padStart(6)} /min  (${row.runs} run(s), ${row.rollouts} rollouts)` +
        (row.busy_cores === null || row.cpu_s_per_rollout === null ? '' : `   CPUs busy ${row.busy_cores.toFixed(2)} of ${r.cpus}, ${row.cpu_s_per_rollout.toFixed(2)} CPU-s/rollout`),
    ),
    ...(last?.ratio === null || last === undefined || last.concurrency === 1
      ? []
      : [`  -n ${last.concurrency} ÷ -n 1: ${last.ratio.toFixed(2)}×   target ≥ ${SCALING_TARGET}× ${last.ratio >= SCALING_TARGET ? 'ok' : 'under'}`]),
    ...(r.cpu_ceiling === null
      ? []
      : [
          `  cpu ceiling: ${r.cpus} CPUs ÷ ${(r.cpus / r.cpu_ceiling).toFixed(2)} busy at -n 1 = ${r.cpu_ceiling.toFixed(2)}× (no -n does better while a rollout costs the CPU it does at -n 1)`,
        ]),
    ...(growth === undefined || last === undefined ? [] : [`  CPU per rollout, -n ${last.concurrency} ÷ -n 1: ${growth.toFixed(2)}× (what running ${last.concurrency} at once adds to each)`]),
    r.projected_reproduce_min === null
      ? `  projected make reproduce: – (-n ${REPRODUCE.concurrency} not measured)`
      : `  projected make reproduce (${REPRODUCE.rollouts} + ${REPRODUCE.rerun} re-run rollouts at -n ${REPRODUCE.concurrency}): ${r.projected_reproduce_min.toFixed(0)} min   target ≤ ${REPRODUCE_TARGET_MIN} ${r.projected_reproduce_min <= REPRODUCE_TARGET_MIN ? 'ok' : 'over'}`,
    '',
  ];
  return lines.join('\n');
}

/**
 * The tracers side by side: each one's steady rate at every -n ÷ the first tracer's (strace) in
 * the same run, and the projected make reproduce of each. Empty with fewer than two. Pure.
 */
export function renderTracerComparison(results: readonly ConcurrencyResult[]): string {
  const [base, ...others] = results;
  if (base === undefined || others.length === 0) return '';
  const baseName = base.tracer ?? 'strace';
  const lines = [`rollouts per minute by tracer, same run (steady rates; ÷ ${baseName})`];
  for (const other of others) {
    const cells = other.rows.map((row) => {
      const b = base.rows.find((r) => r.concurrency === row.concurrency)?.steady_per_minute ?? null;
      const o = row.steady_per_minute;
      return `-n ${row.concurrency} ${o === null || b === null || b === 0 ? '–' : `${(o / b).toFixed(2)}×`}`;
    });
    const proj = (r: ConcurrencyResult): string => (r.projected_reproduce_min === null ? '–' : `${r.projected_reproduce_min.toFixed(0)} min`);
    lines.push(`  ${other.tracer ?? 'strace'} ÷ ${baseName}: ${cells.join('   ')}   projected make reproduce ${proj(other)} vs ${proj(base)}`);
  }
  return [...lines, ''].join('\n');
}

/**
 * `rounds` rounds; in each, one job of `perJob` rollouts (attempts spread over `tasks`) at every
 * -n in `concurrencies`, per tracer. After one untimed warm-up job per tracer (images, harness, caches). A rollout that
 * did not complete fails the bench: its time would not be a rollout's.
 */
export async function measureConcurrency(
  engine: Engine,
  options: {
    tasks: readonly string[];
    concurrencies: readonly number[];
    perJob: number;
    rounds: number;
    load: readonly number[];
    cpus: number;
    /** What traces the rollouts' commands (eval --tracer), each measured in every round; default strace alone. */
    tracers?: readonly EvalTracer[];
    /** Run just before each round's jobs at n (the machine-alone loop, machine-scaling.ts), so both see the same load. */
    beside?: (round: number, n: number) => Promise<void>;
    onProgress?: (line: string) => void;
  },
): Promise<ConcurrencyResult[]> {
  const tracers: readonly EvalTracer[] = options.tracers === undefined || options.tracers.length === 0 ? ['strace'] : options.tracers;
  const jobsDir = await mkdtemp(join(tmpdir(), 'authbench-bench-concurrency-'));
  const tag = `bench-concurrency-${process.pid}`;
  const attempts = Math.max(1, Math.ceil(options.perJob / options.tasks.length));
  try {
    const job = async (name: string, n: number, k: number, tracer: EvalTracer): Promise<Omit<ConcurrencyRun, 'concurrency' | 'round'>> => {
      const config = configFromFlags({ model: 'scripted/oracle', include: [...options.tasks], policies: ['gold'], cache: 'off', attempts: k, tracer });
      let first: number | undefined;
      let last = 0;
      const starts: number[] = [];
      const cpuAtStart: (CpuSample | undefined)[] = [];
      const outcome = await runJob(engine, {
        config,
        jobsDir,
        name,
        resume: false,
        concurrency: n,
        onEvent: (e) => {
          if (e.kind === 'rollout-start') {
            first ??= performance.now();
            starts.push(performance.now());
            cpuAtStart.push(sampleCpu());
          }
          if (e.kind === 'rollout-done') last = performance.now();
        },
      });
      const bad = outcome.results.filter((r) => r.status !== 'completed');
      if (bad.length > 0 || first === undefined) {
        throw new AuthbenchError('INTERNAL', `bench concurrency: ${bad.length} of ${outcome.results.length} rollouts did not complete`, {
          details: bad.map((r) => `${r.rollout_id}: ${r.status} ${r.infra_error?.message ?? ''}`),
        });
      }
      const steady = steadyStretch(starts, n);
      // Starts arrive in time order: the stretch's ends are the n-th sample and the last.
      const [from, to] = [cpuAtStart[n - 1], cpuAtStart.at(-1)];
      const cores = from === undefined || to === undefined ? undefined : busyCores(from, to, options.cpus);
      return {
        rollouts: outcome.results.length,
        seconds: (last - first) / 1000,
        ...(steady === undefined ? {} : { steady: { ...steady, ...(cores === undefined ? {} : { cores }) } }),
      };
    };
    for (const tracer of tracers) {
      options.onProgress?.(`concurrency: warm-up job of ${options.tasks.join(', ')} (${tracer})`);
      await job(`${tag}-warmup-${tracer}`, Math.max(...options.concurrencies), 1, tracer);
    }
    const runs = new Map<EvalTracer, ConcurrencyRun[]>(tracers.map((t) => [t, []]));
    for (let round = 0; round < options.rounds; round++) {
      for (const n of concurrencyOrder(options.concurrencies, round)) {
        await options.beside?.(round, n);
        for (const tracer of concurrencyOrder(tracers, round)) {
          options.onProgress?.(`concurrency: round ${round + 1}/${options.rounds}, -n ${n}, ${tracer}, ${attempts * options.tasks.length} rollouts`);
          runs.get(tracer)?.push({ concurrency: n, round, ...(await job(`${tag}-r${round}-n${n}-${tracer}`, n, attempts, tracer)) });
        }
      }
    }
    return tracers.map((tracer) => {
      const rows = concurrencyRows(runs.get(tracer) ?? []);
      return {
        tasks: [...options.tasks],
        tracer,
        rows,
        projected_reproduce_min: projectReproduce(rows),
        load: [...options.load],
        cpus: options.cpus,
        cpu_ceiling: cpuCeiling(rows, options.cpus),
      };
    });
  } finally {
    await rm(jobsDir, { recursive: true, force: true });
  }
}
