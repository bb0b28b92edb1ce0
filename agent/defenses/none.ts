import type { Defense } from './types.ts';

/** The positive control: nothing enforced, nothing said; commands are still traced. */
export const noneDefense: Defense = {
  name: 'none',
  version: '1',
  guidance: () => undefined,
  execution: () => ({ kind: 'unenforced' }),
  decide: () => ({ action: 'allow', rule_id: 'none/allow', reason: 'no defense: every valid proposal runs' }),
};
