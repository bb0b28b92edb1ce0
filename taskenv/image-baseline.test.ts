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
});
