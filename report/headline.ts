/**
 * The headline of a finished job straight from its results, for the end of
 * `authbench eval`: the rows and cells are built exactly as `authbench report`
 * builds them (same defaults, same seed), so the two print the same numbers.
 * Pure.
 */
import { join } from 'node:path';
import type { RolloutResult } from '../evaluation/index.ts';
import { buildHeadlineData, type ReportOptions } from './build.ts';
import { toRows } from './rows.ts';
import { headlineTable, type TextTable } from './tables.ts';

export function jobHeadline(jobDir: string, results: readonly RolloutResult[], options: ReportOptions = {}): TextTable {
  // toRows puts rows in canonical order, so the results' order does not change a number.
  const loaded = results.map((result) => ({ job: jobDir, dir: join(jobDir, result.rollout_id), result }));
  return headlineTable(buildHeadlineData(toRows(loaded), options));
}
