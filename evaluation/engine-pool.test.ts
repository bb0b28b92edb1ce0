import { describe, expect, it } from 'vitest';
import { lanePool, type LaneSlot } from './engine-pool.ts';

const tick = (ms = 1): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('lanePool', () => {
  it('runs every item once across lanes, never more at once on a lane than its slots', async () => {
    const items = Array.from({ length: 12 }, (_, i) => i);
    const running = [0, 0];
    const peak = [0, 0];
    const ran: { item: number; where: LaneSlot }[] = [];
    await lanePool(items, [1, 3], async (item, where) => {
      running[where.lane] = (running[where.lane] ?? 0) + 1;
      peak[where.lane] = Math.max(peak[where.lane] ?? 0, running[where.lane] ?? 0);
      await tick(2);
      running[where.lane] = (running[where.lane] ?? 0) - 1;
      ran.push({ item, where });
      return 'done';
    });
    expect(ran.map((r) => r.item).sort((a, b) => a - b)).toEqual(items);
    expect(peak).toEqual([1, 3]);
    // Slots are numbered over all lanes: lane 0 has slot 0, lane 1 slots 1-3.
    expect(new Set(ran.filter((r) => r.where.lane === 1).map((r) => r.where.slot))).toEqual(new Set([1, 2, 3]));
    expect(ran.every((r) => r.where.lane === 1 || r.where.slot === 0)).toBe(true);
  });

  it('a drained lane gives its item back and takes nothing more; the other lane runs everything exactly once', async () => {
    const items = Array.from({ length: 8 }, (_, i) => i);
    const done: number[] = [];
    const seenByDead: number[] = [];
    const outcome = await lanePool(items, [2, 1], async (item, where) => {
      if (where.lane === 0) {
        seenByDead.push(item);
        await tick(1);
        return 'drained';
      }
      await tick(3);
      done.push(item);
      return 'done';
    });
    expect(done.sort((a, b) => a - b)).toEqual(items);
    expect(outcome).toEqual({ drained: [0], left: 0 });
    // The dead lane saw at most one item per slot before it was drained.
    expect(seenByDead.length).toBeLessThanOrEqual(2);
  });

  it('an item given back after the live lane found the queue empty still runs (the idle slot waits for it)', async () => {
    const done: number[] = [];
    // Lane 1 takes item 0 and finishes at once; lane 0 holds item 1 a while, then drains.
    await lanePool([0, 1], [1, 1], async (item, where) => {
      if (where.lane === 0) {
        await tick(20);
        return 'drained';
      }
      done.push(item);
      return 'done';
    });
    expect(done.sort()).toEqual([0, 1]);
  });

  it('when every lane drains, the items not taken are left (and counted), none run', async () => {
    const outcome = await lanePool([1, 2, 3], [1, 1], () => Promise.resolve('drained' as const));
    expect(outcome.left).toBe(3);
    expect(outcome.drained.sort()).toEqual([0, 1]);
  });

  it('the first error stops the pool and is rethrown after the items in flight end', async () => {
    const started: number[] = [];
    let inFlightAtEnd = 0;
    let running = 0;
    await expect(
      lanePool([0, 1, 2, 3, 4, 5], [1, 1], async (item) => {
        started.push(item);
        running += 1;
        await tick(item === 1 ? 1 : 5);
        running -= 1;
        if (item === 1) throw new Error('boom');
        inFlightAtEnd = running;
        return 'done';
      }),
    ).rejects.toThrow('boom');
    expect(started.length).toBeLessThan(6);
    expect(inFlightAtEnd).toBe(0);
  });
});
