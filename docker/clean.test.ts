import { describe, expect, it } from 'vitest';
import { isOwnedImage, removalOrder, staleImages } from './clean.ts';

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
