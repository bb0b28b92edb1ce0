/**
 * Checks for numeric flags, run by yargs while it parses (`coerce`), so a bad
 * value stops the command before any work with exit 1 naming the flag, and a
 * flag repeated where one value is meant is refused rather than silently merged.
 */
import { AuthbenchError } from '../core/index.ts';

function single(flag: string, value: unknown): unknown {
  if (Array.isArray(value)) throw new AuthbenchError('INVALID_ARGUMENT', `--${flag} given more than once`);
  return value;
}

/** An integer ≥ `min` (`--seed abc` is NaN once yargs reads it as a number). */
export function intFlag(flag: string, min: number): (value: unknown) => number {
  return (value) => {
    const v = Number(single(flag, value));
    if (!Number.isInteger(v) || v < min) throw new AuthbenchError('INVALID_ARGUMENT', `--${flag} ${Number.isNaN(v) ? 'is not a number' : String(value)}: expected an integer ≥ ${min}`);
    return v;
  };
}

/** A number > 0 (seconds). */
export function positiveFlag(flag: string): (value: unknown) => number {
  return (value) => {
    const v = Number(single(flag, value));
    if (!Number.isFinite(v) || v <= 0) throw new AuthbenchError('INVALID_ARGUMENT', `--${flag} ${Number.isNaN(v) ? 'is not a number' : String(value)}: expected a number > 0`);
    return v;
  };
}

/** A repeatable string option (a string, several, or none) as a list. Such options are not `array: true`, which would swallow the positionals after them. */
export function listFlag(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** `--shard I/N`: shard I (1-based) of N, I ≤ N. */
export function shardFlag(value: unknown): { index: number; count: number } {
  const text = String(single('shard', value));
  const m = /^([1-9]\d*)\/([1-9]\d*)$/.exec(text);
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (m === null || index > count) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--shard ${text}: expected I/N with 1 ≤ I ≤ N (shard I of N, e.g. 1/4)`);
  }
  return { index, count };
}
