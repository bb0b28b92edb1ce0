import { describe, expect, it } from 'vitest';
import { DaemonGate, waitForDaemon, type DaemonWaitOptions } from './wait.ts';

/** A daemon that fails `down` pings, then answers; and a clock that sleeping advances. */
function setup(down: number): { engine: { ping: () => Promise<void>; pings: number }; clock: Required<Pick<DaemonWaitOptions, 'now' | 'sleep'>>; slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  const engine = {
    pings: 0,
    ping(): Promise<void> {
      engine.pings += 1;
      return engine.pings <= down ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve();
    },
  };
  return {
    engine,
    slept,
    clock: {
      now: () => t,
      sleep: (ms) => {
        slept.push(ms);
        t += ms;
        return Promise.resolve();
      },
    },
  };
}

describe('waitForDaemon', () => {
  it('returns once the daemon answers, pinging every interval', async () => {
    const { engine, clock, slept } = setup(3);
    expect(await waitForDaemon(engine, { timeoutMs: 10_000, intervalMs: 1_000, ...clock })).toBe(true);
    expect(engine.pings).toBe(4);
    expect(slept).toEqual([1_000, 1_000, 1_000]);
  });

  it('says once that it is waiting, and only when a ping went unanswered', async () => {
    const down = setup(3);
    let told = 0;
    expect(await waitForDaemon(down.engine, { timeoutMs: 10_000, onUnanswered: () => told++, ...down.clock })).toBe(true);
    expect(told).toBe(1);
    const up = setup(0);
    expect(await waitForDaemon(up.engine, { timeoutMs: 10_000, onUnanswered: () => told++, ...up.clock })).toBe(true);
    expect(told).toBe(1);
  });

  it('gives up at the deadline, never sleeping past it', async () => {
    const { engine, clock, slept } = setup(Infinity);
    expect(await waitForDaemon(engine, { timeoutMs: 2_500, intervalMs: 1_000, ...clock })).toBe(false);
    expect(slept).toEqual([1_000, 1_000, 500]);
    expect(engine.pings).toBe(4);
  });

  it('pings once with timeout 0, and not at all once aborted', async () => {
    const once = setup(Infinity);
    expect(await waitForDaemon(once.engine, { timeoutMs: 0, ...once.clock })).toBe(false);
    expect(once.engine.pings).toBe(1);
    const aborted = setup(0);
    expect(await waitForDaemon(aborted.engine, { timeoutMs: 10_000, signal: AbortSignal.abort(), ...aborted.clock })).toBe(false);
    expect(aborted.engine.pings).toBe(0);
  });
});

describe('DaemonGate', () => {
  it('asks nothing until a fault is suspected, then shares one wait among callers', async () => {
    const { engine, clock } = setup(2);
    const gate = new DaemonGate(engine, { timeoutMs: 10_000, intervalMs: 1_000, ...clock });
    expect(await gate.ready()).toBe(true);
    expect(engine.pings).toBe(0);
    gate.markSuspect();
    expect(await Promise.all([gate.ready(), gate.ready(), gate.ready()])).toEqual([true, true, true]);
    expect(engine.pings).toBe(3);
    // Back: no more pings until the next fault.
    expect(await gate.ready()).toBe(true);
    expect(engine.pings).toBe(3);
  });

  it('once a wait failed, gives up on the daemon for good', async () => {
    const { engine, clock } = setup(Infinity);
    const gate = new DaemonGate(engine, { timeoutMs: 1_000, intervalMs: 1_000, ...clock });
    gate.markSuspect();
    expect(await gate.ready()).toBe(false);
    const pings = engine.pings;
    expect(await gate.ready()).toBe(false);
    expect(engine.pings).toBe(pings);
    expect(gate.gaveUp).toBe(true);
  });
});
