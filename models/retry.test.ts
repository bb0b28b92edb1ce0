import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, backoffDelayMs, parseRetryAfter, retryDelayMs, seededRandom, sleep } from './retry.ts';

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  it.each([
    [undefined, undefined],
    ['1', 1000],
    ['0', 0],
    [' 30 ', 30_000],
    ['1.5', 1500],
    ['Wed, 01 Jan 2025 12:00:07 GMT', 7000],
    ['Wed, 01 Jan 2025 11:59:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['', undefined],
  ])('%j → %j', (value, want) => {
    expect(parseRetryAfter(value, NOW)).toBe(want);
  });
});

describe('backoff', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1000, factor: 2, maxDelayMs: 8000 };

  it('grows exponentially up to the cap, between half and all of it', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, policy, () => 0))).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, policy, () => 0.999999))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('is reproducible with a seeded random and varies between seeds', () => {
    const schedule = (seed: number) => {
      const r = seededRandom(seed);
      return [0, 1, 2, 3].map((n) => backoffDelayMs(n, policy, r));
    };
    expect(schedule(1)).toEqual(schedule(1));
    expect(schedule(1)).not.toEqual(schedule(2));
    for (const [n, d] of schedule(3).entries()) {
      const ceiling = Math.min(8000, 1000 * 2 ** n);
      expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      expect(d).toBeLessThanOrEqual(ceiling);
    }
  });

  it('prefers Retry-After, capped', () => {
    expect(retryDelayMs(3, policy, () => 0, 1000)).toBe(1000);
    expect(retryDelayMs(0, { ...policy, maxRetryAfterMs: 60_000 }, () => 0, 3_600_000)).toBe(60_000);
    expect(retryDelayMs(1, policy, () => 0, undefined)).toBe(1000);
  });

  it('seededRandom stays in [0, 1)', () => {
    const r = seededRandom(42);
    for (let i = 0; i < 1000; i++) {
      const x = r();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});

describe('sleep', () => {
  it('rejects with the abort reason when aborted', async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});
