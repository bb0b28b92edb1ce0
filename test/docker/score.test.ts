import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, LABELS } from '../../docker/index.ts';
import type { DockerEngine } from '../../docker/index.ts';
import { candidatesFromImage, scorePolicy } from '../../score/index.ts';
import type { CandidateSnapshot, ScoringReference } from '../../score/index.ts';

// Containers are labelled with the task id we pass; a unique one lets us check cleanup.
const TASK_ID = `score-test-${process.pid}-${Date.now()}`;
const ROOTS = { read: ['/root', '/srv/does-not-exist'], write: ['/root'], execute: ['/usr/bin', '/usr/local/bin'] };

let engine: DockerEngine;
let candidates: CandidateSnapshot;

beforeAll(async () => {
  engine = await connectDocker();
  candidates = await candidatesFromImage(engine, { image: BASE_IMAGE_REF, scoredRoots: ROOTS, taskId: TASK_ID });
});

afterAll(async () => {
  if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.task]: TASK_ID } });
});

describe('candidatesFromImage on the merged-/usr base image', () => {
  it('lists executables by realpath, links resolved', () => {
    expect(candidates.image).toBe(BASE_IMAGE_REF);
    expect(candidates.files.execute).toContain('/usr/bin/dash');
    expect(candidates.files.execute).toContain('/usr/bin/python3.11');
    expect(candidates.files.execute).not.toContain('/usr/bin/sh');
    expect(candidates.files.execute).not.toContain('/usr/bin/python3');
    expect(candidates.symlinks['/bin']).toBe('/usr/bin');
    expect(candidates.symlinks['/usr/bin/sh']).toBe('/usr/bin/dash');
  });

  it('tolerates a scored root the image does not have, and knows the directories above the roots', () => {
    expect(candidates.files.read).toContain('/root/.bashrc');
    expect(candidates.dirs).toEqual(expect.arrayContaining(['/', '/usr', '/usr/bin', '/usr/local/bin', '/etc', '/bin']));
  });

  it('scores /bin/sh as /usr/bin/dash', () => {
    const reference: ScoringReference = {
      required: { read: [], write: [], execute: ['/usr/bin/dash', '/usr/bin/python3.11'] },
      scored_roots: ROOTS,
      implicit: { read: [], write: [], execute: [] },
      sensitive: { read: [], write: [], execute: [] },
    };
    const s = scorePolicy({ read: [], write: [], execute: ['/bin/sh', '/usr/bin/python3', '/bin'] }, reference, candidates);
    expect(s.execute).toEqual({ precision: 1, recall: 1, f1: 1, tp: 2, predicted: 2, gold: 2 });
  });

  it('follows a scored root that is a symlink (merged-/usr /bin) to its target', async () => {
    const linked = await candidatesFromImage(engine, {
      image: BASE_IMAGE_REF,
      scoredRoots: { read: ['/bin'], write: [], execute: ['/bin'] },
      taskId: TASK_ID,
    });
    expect(linked.files.execute).toContain('/usr/bin/dash');
    expect(linked.files.read).toContain('/bin/dash');
    expect(linked.files.execute.every((p) => p.startsWith('/usr/'))).toBe(true);
  });

  it('removed its containers', async () => {
    const leftovers = await cleanManaged(engine, { labels: { [LABELS.task]: TASK_ID }, dryRun: true });
    expect(leftovers.containers).toEqual([]);
  });
});
