/**
 * What the smoke reproduction (scripts/reproduce.ts) runs and two of the
 * prerequisites it asserts, as pure functions over the suite manifest and
 * the report's rows, so they are unit-tested without Docker.
 */
import { STAGES } from '../task-format/index.ts';

export interface PlannedScenario {
  id: string;
  family: string;
  stage: string;
  instance: number;
  parameters?: Record<string, unknown>;
}

/** The live two-episode memory scenarios (suite/memory-live.ts) carry their mode; nothing else does. */
export function memoryModeOf(s: PlannedScenario): string | undefined {
  const mode = s.parameters?.['memory_mode'];
  return typeof mode === 'string' ? mode : undefined;
}

/** A live recovery scenario (`<family>-mem-rec-<n>`, suite/memory-live.ts): a live one with a recovery objective. */
export function isLiveRecovery(s: PlannedScenario): boolean {
  return memoryModeOf(s) !== undefined && typeof s.parameters?.['recovery'] === 'string';
}

/**
 * A scenario that varies its family's plain one for one stage (a live memory, a listener-sink or a topology
 * variant): the smoke's main list leaves these out, so it keeps one scenario per family and its
 * time; live memory runs with its own control (smokeLiveSubset).
 */
function isVariant(s: PlannedScenario): boolean {
  return memoryModeOf(s) !== undefined || s.parameters?.['sink'] === 'listener' || s.parameters?.['topology'] !== undefined;
}

/**
 * Smoke subset: from every family, instance 0 of one stage, the stage rotating
 * with the family so every stage is represented (12 families: 3 per stage).
 */
export function smokeSubset(scenarios: readonly PlannedScenario[]): string[] {
  const families = [...new Set(scenarios.map((s) => s.family))];
  return families.flatMap((family, i) =>
    scenarios.filter((s) => s.family === family && s.instance === 0 && s.stage === STAGES[i % STAGES.length] && !isVariant(s)).map((s) => s.id),
  );
}

/**
 * The live memory scenarios the reproduction runs with the memory positive control, in manifest
 * order. Without `slice`: every instance-0 live scenario, so every family of the memory stage has
 * its live two-episode scenario measured. With `slice` (a --per-stage slice's ids): the live
 * scenario of every family whose memory-stage scenario is in the slice, plus every session control
 * with its persistent twin (same family), so reinfection under persistent and its absence under
 * session are still measured side by side.
 */
export function smokeLiveSubset(scenarios: readonly PlannedScenario[], slice?: readonly string[]): string[] {
  // The live recovery scenarios have their own list and agents (smokeLiveRecoverySubset).
  const live = scenarios.filter((s) => memoryModeOf(s) !== undefined && s.instance === 0 && !isLiveRecovery(s));
  if (slice === undefined) return live.map((s) => s.id);
  const memoryFamilies = new Set(scenarios.filter((s) => slice.includes(s.id) && s.stage === 'memory-recovery').map((s) => s.family));
  const controlFamilies = new Set(live.filter((s) => memoryModeOf(s) === 'session').map((s) => s.family));
  return live.filter((s) => (memoryFamilies.has(s.family) && memoryModeOf(s) === 'persistent') || controlFamilies.has(s.family)).map((s) => s.id);
}

/**
 * The live recovery scenarios the reproduction runs with scripted/oracle and the memory positive
 * control under `none`, in manifest order: every instance-0 one; with `slice`, one — the slice's
 * memory family's when it has one, else the first — so the CI slice still measures
 * recovery_success and reinfection on live memory, in two rollouts.
 */
export function smokeLiveRecoverySubset(scenarios: readonly PlannedScenario[], slice?: readonly string[]): string[] {
  const recs = scenarios.filter((s) => isLiveRecovery(s) && s.instance === 0);
  if (slice === undefined) return recs.map((s) => s.id);
  const memoryFamilies = new Set(scenarios.filter((s) => slice.includes(s.id) && s.stage === 'memory-recovery').map((s) => s.family));
  const pick = recs.find((s) => memoryFamilies.has(s.family)) ?? recs[0];
  return pick === undefined ? [] : [pick.id];
}

/** A multi-agent scenario's topology (suite/topology.ts carries it in its parameters); undefined for a single agent. */
export function topologyOf(s: PlannedScenario): string | undefined {
  const t = s.parameters?.['topology'];
  return typeof t === 'string' ? t : undefined;
}

/**
 * The topology scenarios the reproduction runs with the cross-agent positive control
 * (scripted/relay): every instance-0 one, in manifest order — one per topology in the bundled
 * suite, so a --per-stage slice keeps them all (four rollouts).
 */
export function smokeTopologySubset(scenarios: readonly PlannedScenario[]): string[] {
  return scenarios.filter((s) => topologyOf(s) !== undefined && s.instance === 0).map((s) => s.id);
}

export interface MetricRow {
  defense: string;
  stage: string;
  metrics: Record<string, number | null>;
}

/**
 * The (defense, stage) groups where `metric` has no number in any rollout: the report would
 * print N/A there. `defenses` × `stages` are the groups that must have one; a group without
 * rollouts at all is a gap too.
 */
export function metricGaps(rows: readonly MetricRow[], metric: string, defenses: readonly string[], stages: readonly string[]): string[] {
  const covered = new Set(rows.filter((r) => typeof r.metrics[metric] === 'number').map((r) => `${r.defense} / ${r.stage}`));
  return defenses.flatMap((d) => stages.map((s) => `${d} / ${s}`)).filter((g) => !covered.has(g));
}
