/**
 * The rollout pool across engines (`eval --engine`, repeatable): every engine is a lane with its
 * own slots, all lanes take from one queue in plan order, so a free slot anywhere takes the next
 * rollout. A lane whose engine fails is drained: the item it was about to start goes back to the
 * head of the queue for the other lanes, and its slots take nothing more. No item is taken twice,
 * and none is dropped while a live lane remains — a slot that finds the queue empty waits for the
 * items in flight to settle (one may come back from a lane that just drained) before it leaves.
 */

/** A slot: its lane (engine) and its index over all lanes (the CPU it pins to: cpu-pinning.ts). */
export interface LaneSlot {
  lane: number;
  slot: number;
}

/** What became of an item: handled (run, skipped, or left undone on purpose), or given back because its lane is drained. */
export type LaneVerdict = 'done' | 'drained';

export interface LaneOutcome {
  /** Lanes drained, in the order they were. */
  drained: number[];
  /** Items no lane took (every lane drained first), in plan order. */
  left: number;
}

/**
 * Runs `fn` over `items` with `slotsPerLane[l]` concurrent calls on lane l. The first error thrown
 * stops every slot from taking more (as mapPool) and is rethrown once the calls in flight end.
 */
export async function lanePool<T>(items: readonly T[], slotsPerLane: readonly number[], fn: (item: T, where: LaneSlot) => Promise<LaneVerdict>): Promise<LaneOutcome> {
  const queue = [...items];
  const drained: number[] = [];
  let inFlight = 0;
  let failure: { error: unknown } | undefined;
  // Resolved (and replaced) whenever an item settles: how an idle slot learns the queue may have grown again.
  let settled: { promise: Promise<void>; resolve: () => void } = Promise.withResolvers<void>();
  const notify = (): void => {
    const s = settled;
    settled = Promise.withResolvers<void>();
    s.resolve();
  };
  const slot = async (where: LaneSlot): Promise<void> => {
    for (;;) {
      if (failure !== undefined || drained.includes(where.lane)) return;
      const item = queue.shift();
      if (item === undefined) {
        if (inFlight === 0) return;
        await settled.promise;
        continue;
      }
      inFlight += 1;
      try {
        if ((await fn(item, where)) === 'drained') {
          queue.unshift(item);
          if (!drained.includes(where.lane)) drained.push(where.lane);
        }
      } catch (error) {
        failure ??= { error };
      } finally {
        inFlight -= 1;
        notify();
      }
    }
  };
  const slots: Promise<void>[] = [];
  let index = 0;
  slotsPerLane.forEach((n, lane) => {
    for (let k = 0; k < Math.max(1, n); k++) slots.push(slot({ lane, slot: index++ }));
  });
  await Promise.all(slots);
  if (failure !== undefined) throw failure.error;
  return { drained, left: queue.length };
}
