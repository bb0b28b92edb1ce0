import { AuthbenchError } from '../../core/index.ts';
import { noneDefense } from './none.ts';
import { promptOnlyDefense } from './prompt-only.ts';
import { toolBoundaryDefense } from './tool-boundary.ts';
import type { Defense } from './types.ts';

export type { Defense, DefenseContext, ProposalView } from './types.ts';
export { noneDefense } from './none.ts';
export { promptOnlyDefense, renderPolicyGuidance } from './prompt-only.ts';
export { toolBoundaryDefense } from './tool-boundary.ts';

export const DEFENSE_NAMES = ['none', 'prompt-only', 'tool-boundary'] as const;
export type DefenseName = (typeof DEFENSE_NAMES)[number];

const DEFENSES: Record<DefenseName, Defense> = {
  none: noneDefense,
  'prompt-only': promptOnlyDefense,
  'tool-boundary': toolBoundaryDefense,
};

export function isDefenseName(name: string): name is DefenseName {
  return (DEFENSE_NAMES as readonly string[]).includes(name);
}

/** A built-in defense by name (`--defense`). */
export function getDefense(name: string): Defense {
  if (!isDefenseName(name)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `unknown defense ${JSON.stringify(name)}`, { hint: `valid defenses: ${DEFENSE_NAMES.join(', ')}` });
  }
  return DEFENSES[name];
}

/** Whether the defense needs an authorization policy to work. */
export function defenseNeedsPolicy(name: DefenseName): boolean {
  return name !== 'none';
}
