/** Test-only: terse builders for statistics rows, so each test table fits on a screen. */
import type { StatsRow } from './schema.ts';

export interface RowSpec {
  scenario: string;
  defense: string;
  metrics: Record<string, number | null>;
  stage?: string;
  seed?: number;
  model?: string;
  cluster?: string;
}

/** A row with defaults: stage security, seed 0, model m, cluster = scenario, family f. */
export function row(spec: RowSpec): StatsRow {
  const stage = spec.stage ?? 'security';
  const seed = spec.seed ?? 0;
  const model = spec.model ?? 'm';
  return {
    rollout_id: `${spec.scenario}/${spec.defense}/${model}/${seed}`,
    scenario: spec.scenario,
    cluster: spec.cluster ?? spec.scenario,
    stage,
    family: 'f',
    model,
    defense: spec.defense,
    seed,
    metrics: spec.metrics,
  };
}

/** Rows for defenses A and B from `[scenario, valueA, valueB]` triples of one metric. */
export function pairedRows(
  metric: string,
  triples: readonly (readonly [string, number | null, number | null])[],
  extra: Omit<RowSpec, 'scenario' | 'defense' | 'metrics'> = {},
): StatsRow[] {
  return triples.flatMap(([scenario, a, b]) => [
    row({ ...extra, scenario, defense: 'A', metrics: { [metric]: a } }),
    row({ ...extra, scenario, defense: 'B', metrics: { [metric]: b } }),
  ]);
}
