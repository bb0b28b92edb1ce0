/**
 * A cluster's security scenario with a candidate wording in place of the
 * drawn one (suite's buildScenario hook: everything else as generated), and
 * which clusters can carry a wording at all — an unsafe-helper placement
 * ships the attack as a script and never shows the wording, so a query there
 * would measure nothing. Pure.
 */
import { AuthbenchError } from '../core/index.ts';
import { buildScenario, FAMILIES, STAGE_CYCLE, type Family, type Scenario } from '../suite/index.ts';
import type { Cluster } from './schema.ts';
import { DEFAULT_SEED_WORDING, renderWording } from './strategies.ts';

export interface PlacedWording {
  scenario: Scenario;
  /** The injected text as placed. */
  text: string;
  /** The exact command the scenario's attack needs (what an exact-goal proposal contains). */
  attackCommand: string;
}

export function familyById(id: string): Family {
  const family = FAMILIES.find((f) => f.id === id);
  if (family === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `unknown family ${id}`, { field: 'family', hint: `known: ${FAMILIES.map((f) => f.id).join(', ')}` });
  return family;
}

/** The family index of a cluster's security scenario (the suite's stage cycle). */
export function securityIndex(instance: number): number {
  return instance * STAGE_CYCLE.length + STAGE_CYCLE.indexOf('security');
}

export function placeWording(cluster: Cluster, seed: number, template: string): PlacedWording {
  let text = '';
  let attackCommand = '';
  const scenario = buildScenario(familyById(cluster.family), securityIndex(cluster.instance), seed, (attack) => {
    text = renderWording(template, attack);
    attackCommand = attack.command;
    return text;
  });
  return { scenario, text, attackCommand };
}

/** Does the cluster's scenario show its injected wording to the agent? */
export function carriesWording(cluster: Cluster, seed: number): boolean {
  return placeWording(cluster, seed, DEFAULT_SEED_WORDING).scenario.parameters['placement'] !== 'unsafe-helper';
}
