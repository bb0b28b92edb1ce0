import { describe, expect, it } from 'vitest';
import { mapPool } from './pool.ts';

describe('mapPool', () => {
  it('keeps input order and bounds concurrency', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapPool([5, 1, 3, 2, 4], 2, async (x) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, x));
      running--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 30, 20, 40]);
    expect(peak).toBe(2);
  });
  it('rethrows the first failure after running work settles and starts nothing new', async () => {
    const started: number[] = [];
    await expect(
      mapPool([1, 2, 3, 4], 1, (x) => {
        started.push(x);
        return x === 2 ? Promise.reject(new Error('boom')) : Promise.resolve(x);
      }),
    ).rejects.toThrow('boom');
    expect(started).toEqual([1, 2]);
  });
});
