import { describe, expect, it } from 'vitest';
import { arraySizeFor, DEFAULT_ARRAY_SIZE } from './eval-slurm.ts';

describe('arraySizeFor', () => {
  it.each([
    [10, undefined, DEFAULT_ARRAY_SIZE],
    [2, undefined, 2],
    [10, 8, 8],
    [3, 8, 3],
    [0, 8, 1],
  ])('%i pending, --array-size %s → %i shards (never more than rollouts, never none)', (pending, given, shards) => {
    expect(arraySizeFor(pending, given)).toBe(shards);
  });
});
