import { describe, expect, it } from 'vitest';
import type { Task } from '../task-format/index.ts';
import { BaselineCache, freezeSnapshot, imageBaselineKey } from './image-baseline.ts';

const snap = (path: string): { roots: string[]; entries: { path: string; type: 'file'; mode: number }[] } => ({ roots: ['/'], entries: [{ path, type: 'file', mode: 0o644 }] });
const task = (workdir: string, sink?: Task['authbench']['sink']): Pick<Task, 'workdir' | 'authbench'> =>
  ({ workdir, authbench: { ...(sink === undefined ? {} : { sink }) } }) as Pick<Task, 'workdir' | 'authbench'>;

describe('imageBaselineKey', () => {
  it('differs when the image, the workdir Docker creates or the sink that writes before the listing differ', () => {
    const base = imageBaselineKey(task('/app'), 'authbench/task-a:1');
    expect(imageBaselineKey(task('/app'), 'authbench/task-a:1')).toBe(base);
    expect(imageBaselineKey(task('/app'), 'authbench/task-a:2')).not.toBe(base);
    expect(imageBaselineKey(task('/srv'), 'authbench/task-a:1')).not.toBe(base);
    const sink = { kind: 'listener', port: 8080 } as NonNullable<Task['authbench']['sink']>;
    expect(imageBaselineKey(task('/app', sink), 'authbench/task-a:1')).not.toBe(base);
  });
});

describe('BaselineCache', () => {
  it('keeps at most max listings, dropping the least recently used', () => {
    const cache = new BaselineCache(2);
    cache.set('a', snap('/a'));
    cache.set('b', snap('/b'));
    expect(cache.get('a')?.entries[0]?.path).toBe('/a'); // a is now the most recent
    cache.set('c', snap('/c'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.entries[0]?.path).toBe('/a');
    expect(cache.get('c')?.entries[0]?.path).toBe('/c');
  });

  it('stores listings frozen: no session can change what the next container is given', () => {
    const cache = new BaselineCache();
    const kept = cache.set('k', snap('/etc/passwd'));
    expect(cache.get('k')).toBe(kept);
    expect(() => (kept.entries as unknown[]).push({ path: '/x', type: 'file', mode: 0 })).toThrow(TypeError);
    expect(() => {
      (kept.entries[0] as { path: string }).path = '/etc/shadow';
    }).toThrow(TypeError);
    expect(() => kept.roots.push('/tmp')).toThrow(TypeError);
    expect(Object.isFrozen(freezeSnapshot(snap('/y')))).toBe(true);
  });

  it('gives the first claimant the listing to take and every later one its result, once', async () => {
    const cache = new BaselineCache();
    const first = cache.claim('k');
    const second = cache.claim('k');
    const third = cache.claim('k');
    expect(first.kind).toBe('mine');
    expect(second.kind).toBe('pending');
    expect(third.kind).toBe('pending');
    if (first.kind !== 'mine' || second.kind !== 'pending' || third.kind !== 'pending') return;
    const kept = first.settle(snap('/listed'));
    expect(await second.listing).toBe(kept);
    expect(await third.listing).toBe(kept);
    expect(Object.isFrozen(kept)).toBe(true);
    // Settled once: a second settle changes nothing.
    first.settle(snap('/other'));
    const later = cache.claim('k');
    expect(later.kind === 'kept' && later.snapshot).toBe(kept);
  });

  it('frees the key when the claimant took no listing: waiters get nothing, the next claimant lists', async () => {
    const cache = new BaselineCache();
    const first = cache.claim('k');
    const waiting = cache.claim('k');
    if (first.kind !== 'mine' || waiting.kind !== 'pending') throw new Error('expected mine, then pending');
    first.settle(undefined);
    expect(await waiting.listing).toBeUndefined();
    expect(cache.claim('k').kind).toBe('mine');
    expect(cache.claim('other').kind).toBe('mine');
  });
});
