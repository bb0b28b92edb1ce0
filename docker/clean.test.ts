import { describe, expect, it } from 'vitest';
import { isOwnedImage, removalOrder, splitByOwner, staleImages } from './clean.ts';
import { ownerLabels, type ProcessInfo } from './owner.ts';

const image = (id: string, tags: string[], created: number): { id: string; tags: string[]; created: number } => ({ id, tags, created });

describe('staleImages', () => {
  it('keeps the newest image of each repository and returns the older generations', () => {
    const images = [
      image('a1', ['authbench/task-a:1111'], 100),
      image('a2', ['authbench/task-a:2222'], 300),
      image('a0', ['authbench/task-a:0000'], 50),
      image('b1', ['authbench/task-b:1111'], 10),
      image('f1', ['authbench/family-csv:aaaa'], 200),
      image('f2', ['authbench/family-csv:bbbb'], 100),
    ];
    expect(staleImages(images).map((i) => i.id)).toEqual(['a1', 'a0', 'f2']);
  });

  it('treats untagged images as stale and keeps an image that is newest under any of its tags', () => {
    const images = [
      image('u', [], 999),
      image('x', ['authbench/base:old', 'authbench/base-ubuntu:new'], 100),
      image('y', ['authbench/base:newer'], 200),
    ];
    expect(staleImages(images).map((i) => i.id)).toEqual(['u']);
  });

  it('keeps both of two images created in the same second', () => {
    expect(staleImages([image('p', ['r:1'], 5), image('q', ['r:2'], 5)])).toEqual([]);
  });
});

describe('ownership and order', () => {
  it('owns only images whose tag carries their content hash (or single-layer bases)', () => {
    const labels = { 'authbench.managed': 'true', 'authbench.kind': 'task-image', 'authbench.content-hash': 'abcdef0123456789ffff' };
    expect(isOwnedImage({ labels, repoTags: ['authbench/task-a:abcdef0123456789'], layers: 5 })).toBe(true);
    expect(isOwnedImage({ labels, repoTags: ['someone/derived:latest'], layers: 6 })).toBe(false);
  });

  it('removes task images before family bases before base images', () => {
    const order = removalOrder([{ kind: 'base-image' }, { kind: 'family-image' }, { kind: 'task-image' }]).map((i) => i.kind);
    expect(order).toEqual(['task-image', 'family-image', 'base-image']);
  });
});

describe('splitByOwner', () => {
  const self = { host: 'box', bootId: 'boot' };
  const labelsFor = (pid: number): Record<string, string> => ownerLabels({ runId: 'r', pid, startTime: '100', bootId: 'boot', host: 'box' });
  const container = (id: string, labels: Record<string, string>, imageId: string, volumes: string[] = []) => ({ id, labels, imageId, volumes });
  const running = (pid: number): ProcessInfo | undefined => (pid === 10 ? { state: 'S', startTime: '100' } : undefined);

  it("removes only containers whose owner is gone, keeping a live run's containers and the images and volumes they use", () => {
    const split = splitByOwner(
      [
        container('live', labelsFor(10), 'img-a', ['harness']),
        container('dead', labelsFor(11), 'img-b', ['harness']),
        container('legacy', { 'authbench.managed': 'true' }, 'img-c'),
        container('dead-too', labelsFor(12), 'img-a'),
      ],
      self,
      running,
    );
    expect(split.orphans.map((c) => c.id)).toEqual(['dead', 'dead-too']);
    expect(split.kept.map((c) => [c.id, c.why])).toEqual([['live', 'alive'], ['legacy', 'unowned']]);
    expect([...split.imagesInUse].sort()).toEqual(['img-a', 'img-c']);
    expect([...split.volumesInUse]).toEqual(['harness']);
  });
});
