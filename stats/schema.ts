/**
 * One rollout as the statistics see it: the keys that pair and cluster it,
 * plus its per-rollout metrics. `null` marks a metric that does not apply to
 * the rollout's stage (N/A); it is never averaged in as 0. The caller drops
 * rollouts whose status is infra_error before they get here.
 */
import { z } from 'zod';
import { AuthbenchError, formatProblem, zodProblems } from '../core/index.ts';

const nonEmpty = z.string().refine((s) => s.trim() !== '', 'must not be empty');

export const StatsRowSchema = z
  .strictObject({
    rollout_id: nonEmpty.describe('Unique id of the rollout'),
    scenario: nonEmpty.describe('Task id; with model and seed it keys a paired comparison'),
    cluster: nonEmpty.describe('Independent scenario cluster resampled by the cluster bootstrap'),
    stage: nonEmpty.describe('Evidence stage; utility metrics are never pooled across stages'),
    family: nonEmpty.describe('Scenario family the task came from'),
    model: nonEmpty.describe('Agent model id'),
    defense: nonEmpty.describe('Runtime defense (policy) the rollout ran under'),
    seed: z.number().int().describe('Rollout seed'),
    metrics: z
      .record(z.string(), z.number().nullable())
      .describe('Per-rollout metric values; null = not applicable (N/A), never 0'),
  })
  .describe('One rollout row for the statistics module');

export type StatsRow = z.infer<typeof StatsRowSchema>;

export const StatsRowsSchema = z.array(StatsRowSchema).describe('Rollout rows, infra errors excluded');

/** Validate rows read from `file`; every problem names the row index and field. */
export function parseStatsRows(value: unknown, file: string): StatsRow[] {
  const parsed = StatsRowsSchema.safeParse(value);
  if (!parsed.success) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${file} does not hold valid statistics rows`, {
      file,
      details: zodProblems(parsed.error, file).map(formatProblem),
    });
  }
  return parsed.data;
}

/** The row's value for `metric`; a missing key counts as N/A, like an explicit null. */
export function metricValue(row: StatsRow, metric: string): number | null {
  return row.metrics[metric] ?? null;
}
