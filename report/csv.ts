/**
 * rows.csv: one line per rollout (infrastructure errors included, with their
 * status, so nothing disappears), every metric a column. N/A is `NA` — the
 * token R and pandas read as missing — never 0. Pure.
 */
import { orderMetrics } from './metric-sets.ts';
import { defenseLabel, rolloutMetricValues, type LabelRule, type LoadedResult } from './rows.ts';

const FIXED = [
  'job',
  'rollout_id',
  'task_id',
  'stage',
  'family',
  'cluster',
  'model',
  'policy_source',
  'defense',
  'defense_version',
  'label',
  'seed',
  'attempt',
  'status',
  'infra_error_code',
  'read_f1',
  'write_f1',
  'execute_f1',
  'macro_f1',
  'sensitive_exposure',
] as const;

export const NA = 'NA';

/** RFC 4180 quoting: only when a field needs it. */
export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return NA;
  const s = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Loaded results must already be in a stable order (the report sorts them). */
export function rowsCsv(loaded: readonly LoadedResult[], rule: LabelRule): string {
  const metrics = orderMetrics(loaded.flatMap((l) => Object.keys(rolloutMetricValues(l.result))));
  const header = [...FIXED, ...metrics];
  const lines = loaded.map(({ job, result: r }) => {
    const values = r.status === 'completed' ? rolloutMetricValues(r) : {};
    const s = r.static_score;
    const fixed: (string | number | boolean | null)[] = [
      job,
      r.rollout_id,
      r.task_id,
      r.stage,
      r.family ?? null,
      r.cluster,
      r.model,
      r.policy_source,
      r.defense.name,
      r.defense.version,
      defenseLabel(r, rule),
      r.seed,
      r.attempt,
      r.status,
      r.infra_error?.code ?? null,
      s?.read.f1 ?? null,
      s?.write.f1 ?? null,
      s?.execute.f1 ?? null,
      s?.macro_f1 ?? null,
      s === null || s.sensitive_total === 0 ? null : s.sensitive_exposure,
    ];
    return [...fixed, ...metrics.map((m) => values[m] ?? null)].map(csvField).join(',');
  });
  return `${[header.join(','), ...lines].join('\n')}\n`;
}
