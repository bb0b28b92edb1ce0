/**
 * Scale-out section of `make bench` (scripts/bench-scale.ts): the same job — the same tasks and
 * rollouts, the same number of rollout slots — run three ways in one run, rollouts per minute
 * each, and their ratios to one process on one engine:
 *   one-shard   one `eval` process, -n SLOTS, the main engine;
 *   two-shards  two `eval --shard I/2` processes at once, SLOTS/2 each, the main engine;
 *   two-engines one `eval` process, `--engine main=SLOTS/2 --engine second=SLOTS/2`, the second a
 *               dockerd of the bench's own on the same machine.
 * On one machine the engines share its cores, so the ratios say what the distribution costs, not
 * what more machines would add. Pure: the runner feeds it wall times.
 */
import { z } from 'zod';

export const SCALE_MODES = ['one-shard', 'two-shards', 'two-engines'] as const;
export type ScaleMode = (typeof SCALE_MODES)[number];

export const ScaleRunSchema = z.object({
  mode: z.enum(SCALE_MODES),
  round: z.number().int().nonnegative(),
  rollouts: z.number().int().positive(),
  seconds: z.number().positive(),
  /** Every rollout of the job ended completed (not infra, not failed). */
  ok: z.boolean(),
});
export type ScaleRun = z.infer<typeof ScaleRunSchema>;

export const ScaleRowSchema = z.object({
  mode: z.enum(SCALE_MODES),
  runs: z.number().int(),
  /** Median over rounds of rollouts per minute. */
  per_minute: z.number(),
  /** per_minute ÷ one-shard's (null when one-shard has none). */
  ratio: z.number().nullable(),
  failed_runs: z.number().int(),
});
export type ScaleRow = z.infer<typeof ScaleRowSchema>;

export const perMinute = (run: Pick<ScaleRun, 'rollouts' | 'seconds'>): number => (run.rollouts * 60) / run.seconds;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** One row per mode that ran, in SCALE_MODES order. */
export function scaleRows(runs: readonly ScaleRun[]): ScaleRow[] {
  const rates = new Map<ScaleMode, number>();
  const rows: ScaleRow[] = [];
  for (const mode of SCALE_MODES) {
    const mine = runs.filter((r) => r.mode === mode);
    if (mine.length === 0) continue;
    rates.set(mode, median(mine.map(perMinute)));
    rows.push({ mode, runs: mine.length, per_minute: rates.get(mode) ?? 0, ratio: null, failed_runs: mine.filter((r) => !r.ok).length });
  }
  const base = rates.get('one-shard');
  return rows.map((r) => ({ ...r, ratio: base === undefined || base === 0 ? null : r.per_minute / base }));
}

/**
 * Rounds run the modes in a rotated order (round k starts at mode k mod 3), so a machine that
 * gets busier during the run does not always penalise the same mode.
 */
export function roundOrder(round: number): ScaleMode[] {
  const k = round % SCALE_MODES.length;
  return [...SCALE_MODES.slice(k), ...SCALE_MODES.slice(0, k)];
}

export function renderScale(rows: readonly ScaleRow[], context: { rollouts: number; slots: number; load: readonly number[] }): string {
  const lines = [
    `\n(f) scale-out: ${context.rollouts} rollouts, ${context.slots} slots in all, rollouts/min (median over rounds) and ÷ one-shard (load at start ${context.load.map((l) => l.toFixed(1)).join(' ')})`,
    ...rows.map((r) => `  ${r.mode.padEnd(12)} ${r.per_minute.toFixed(1).padStart(6)} /min  ${r.ratio === null ? '   –' : `${r.ratio.toFixed(2)}×`}  (${r.runs} run(s)${r.failed_runs > 0 ? `, ${r.failed_runs} with a rollout not completed` : ''})`),
  ];
  return `${lines.join('\n')}\n`;
}
