import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireClaim, claimPath, claimState, ClaimSchema, createExclusive, judgeClaim, processAlive, readClaim, readClaims, refreshClaim, releaseClaim, startHeartbeat, type ClaimOptions } from './claims.ts';

let root = '';
let n = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ab-claims-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const jobDir = (): string => join(root, `job${++n}`);

/** A clock the test moves; claims are stamped with it (mtime), so no test waits. */
function fakeClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('claimState', () => {
  it('is live up to the stale limit and stale after it', () => {
    expect(claimState(1000, 1000, 60_000)).toBe('live');
    expect(claimState(1000, 61_000, 60_000)).toBe('live');
    expect(claimState(1000, 61_001, 60_000)).toBe('stale');
  });
});

describe('judgeClaim', () => {
  const claim = (host: string, pid: number) => ClaimSchema.parse({ schema_version: 1, rollout_id: 'r', shard: null, host, pid, started: new Date(0).toISOString(), token: 't' });
  const here = { host: 'node-a', isAlive: (pid: number) => pid === 7 };
  it('calls a claim stale at once when its owner ran on this machine and is gone; otherwise the heartbeat decides', () => {
    expect(judgeClaim({ claim: claim('node-a', 8), heartbeatMs: 1000 }, 1000, 60_000, here)).toBe('stale');
    expect(judgeClaim({ claim: claim('node-a', 7), heartbeatMs: 1000 }, 1000, 60_000, here)).toBe('live');
    // Another machine's process cannot be looked up: only its heartbeat counts.
    expect(judgeClaim({ claim: claim('node-b', 8), heartbeatMs: 1000 }, 1000, 60_000, here)).toBe('live');
    expect(judgeClaim({ claim: claim('node-b', 8), heartbeatMs: 1000 }, 61_001, 60_000, here)).toBe('stale');
    expect(judgeClaim({ claim: undefined, heartbeatMs: 1000 }, 1000, 60_000, here)).toBe('live');
  });
  it('knows this process is alive and a pid past the kernel limit is not', () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 22 + 1)).toBe(false);
  });
});

describe('createExclusive', () => {
  it('creates a file once, complete, and refuses the second creation', async () => {
    const path = join(jobDir(), 'x.json');
    expect(await createExclusive(path, 'first')).toBe(true);
    expect(await createExclusive(path, 'second')).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('first');
    // No temp file is left beside it.
    expect(await readdir(join(path, '..'))).toEqual(['x.json']);
  });
});

describe('acquireClaim', () => {
  it('claims a free rollout with who and when, and a second process finds it busy while its heartbeat is fresh', async () => {
    const dir = jobDir();
    const clock = fakeClock();
    const a: ClaimOptions = { now: clock.now, shard: '1/2', host: 'node-a', pid: 11, staleMs: 60_000 };
    const first = await acquireClaim(dir, 'r1', a);
    expect(first.kind).toBe('claimed');
    const written = ClaimSchema.parse(JSON.parse(await readFile(claimPath(dir, 'r1'), 'utf8')));
    if (first.kind !== 'claimed') return;
    expect(written).toEqual({ schema_version: 1, rollout_id: 'r1', shard: '1/2', host: 'node-a', pid: 11, started: new Date(clock.now()).toISOString(), token: first.held.token });

    clock.advance(59_000);
    const second = await acquireClaim(dir, 'r1', { now: clock.now, shard: '2/2', host: 'node-b', pid: 22, staleMs: 60_000 });
    expect(second.kind).toBe('busy');
    if (second.kind === 'busy') expect(second.by?.claim?.host).toBe('node-a');
  });

  it('a refreshed claim stays live; one not refreshed goes stale and is taken over, and the old holder then neither refreshes nor removes it', async () => {
    const dir = jobDir();
    const clock = fakeClock();
    const opts = (host: string): ClaimOptions => ({ now: clock.now, host, pid: 1, staleMs: 60_000 });
    const a = await acquireClaim(dir, 'r1', opts('a'));
    if (a.kind !== 'claimed') throw new Error('not claimed');
    clock.advance(45_000);
    expect(await refreshClaim(a.held, clock.now())).toBe(true);
    clock.advance(45_000);
    // 90 s after the claim but 45 s after its heartbeat: live.
    expect((await acquireClaim(dir, 'r1', opts('b'))).kind).toBe('busy');

    clock.advance(61_000);
    const b = await acquireClaim(dir, 'r1', opts('b'));
    expect(b.kind).toBe('claimed');
    if (b.kind !== 'claimed') return;
    expect(b.held.tookOver?.claim?.host).toBe('a');
    expect(await refreshClaim(a.held, clock.now())).toBe(false);
    await releaseClaim(a.held);
    expect((await readClaims(dir)).get('r1')?.claim?.host).toBe('b');
    await releaseClaim(b.held);
    expect((await readClaims(dir)).size).toBe(0);
    // Nothing is left beside the claims: no renamed stale claim, no temp file.
    expect(await readdir(join(dir, 'claims'))).toEqual([]);
  });

  it('of two (or three) processes racing for one stale claim, exactly one takes it over', async () => {
    for (let round = 0; round < 25; round++) {
      const dir = jobDir();
      const clock = fakeClock();
      const dead = await acquireClaim(dir, 'r1', { now: clock.now, host: 'dead', pid: 1 });
      expect(dead.kind).toBe('claimed');
      clock.advance(10 * 60_000);
      const contenders = round % 2 === 0 ? ['b', 'c'] : ['b', 'c', 'd'];
      const attempts = await Promise.all(contenders.map((host) => acquireClaim(dir, 'r1', { now: clock.now, host, pid: 2, staleMs: 60_000 })));
      const winners = attempts.filter((x) => x.kind === 'claimed');
      expect(winners, `round ${round}`).toHaveLength(1);
      const onDisk = (await readClaims(dir)).get('r1')?.claim?.host;
      const winner = contenders[attempts.findIndex((x) => x.kind === 'claimed')];
      expect(onDisk).toBe(winner);
      expect((await readdir(join(dir, 'claims'))).sort()).toEqual(['r1.json']);
    }
  });

  it('a running heartbeat keeps touching the claim until stopped', async () => {
    const dir = jobDir();
    const clock = fakeClock();
    const got = await acquireClaim(dir, 'r1', { now: clock.now });
    if (got.kind !== 'claimed') throw new Error('not claimed');
    clock.advance(30_000);
    const stop = startHeartbeat(got.held, { heartbeatMs: 10, now: clock.now });
    const beat = async (): Promise<number | undefined> => (await readClaim(claimPath(dir, 'r1')))?.heartbeatMs;
    for (let i = 0; i < 100 && (await beat()) !== clock.now(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await beat()).toBe(clock.now());
    stop();
    const stoppedAt = clock.now();
    clock.advance(30_000);
    await new Promise((r) => setTimeout(r, 60));
    expect(await beat()).toBe(stoppedAt);
  });

  it('takes over a claim file that does not parse once its mtime is stale', async () => {
    const dir = jobDir();
    const clock = fakeClock();
    await createExclusive(claimPath(dir, 'r1'), '{ torn');
    const old = (clock.now() - 120_000) / 1000;
    await utimes(claimPath(dir, 'r1'), old, old);
    const got = await acquireClaim(dir, 'r1', { now: clock.now, staleMs: 60_000 });
    expect(got.kind).toBe('claimed');
    if (got.kind === 'claimed') expect(got.held.tookOver?.claim).toBeUndefined();
  });
});

describe('a run killed and resumed at once', () => {
  it('takes over the claim of its dead predecessor on this machine without waiting for the stale limit', async () => {
    const dir = jobDir();
    const clock = fakeClock();
    const first = await acquireClaim(dir, 'r1', { now: clock.now, host: 'node-a', pid: 101, isAlive: () => true });
    expect(first.kind).toBe('claimed');
    // Still alive: busy. Gone (SIGKILL): taken over right away, though its heartbeat is fresh.
    expect((await acquireClaim(dir, 'r1', { now: clock.now, host: 'node-a', pid: 102, isAlive: (pid) => pid !== 999 })).kind).toBe('busy');
    const resumed = await acquireClaim(dir, 'r1', { now: clock.now, host: 'node-a', pid: 102, isAlive: (pid) => pid === 102 });
    expect(resumed.kind).toBe('claimed');
    if (resumed.kind === 'claimed') expect(resumed.held.tookOver?.claim?.pid).toBe(101);
  });
});
