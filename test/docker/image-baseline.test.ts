/**
 * The per-image baseline listing (taskenv/image-baseline.ts) on the starter task log-triage: a
 * second rollout container of the image gets the first one's listing without listing itself; that
 * listing equals what listing the second container gives; what a command did in the first
 * container (a symlink, which could widen a grant if it were in a baseline) never reaches it; and
 * a session's own changes never reach the cache.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, type DockerEngine } from '../../docker/index.ts';
import { SandboxSession } from '../../sandbox/run/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, imageBaselineKey, imageBaselines, openTaskSandbox, type TaskSandbox } from '../../taskenv/index.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN_ID = `image-baseline-test-${process.pid}`;

let engine: DockerEngine;
let task: Task;
let image: string;
const boxes: TaskSandbox[] = [];

beforeAll(async () => {
  engine = await connectDocker();
  task = await loadTask(join(ROOT, 'tasks', 'log-triage'));
  image = (await buildTaskImage(engine, task)).tag;
}, 300_000);

afterAll(async () => {
  for (const box of boxes) await box[Symbol.asyncDispose]().catch(() => undefined);
});

const open = async (share: boolean): Promise<TaskSandbox> => {
  const box = await openTaskSandbox(engine, task, image, { runId: RUN_ID, shareImageBaseline: share });
  boxes.push(box);
  return box;
};
const has = (entries: readonly { path: string }[], path: string): boolean => entries.some((e) => e.path === path);
const run = async (box: TaskSandbox, script: string): Promise<void> => {
  const r = await box.session.run({ cmd: ['sh', '-c', script], mode: { kind: 'unenforced' } });
  expect(r.exec.exitCode).toBe(0);
};

describe('the per-image baseline listing', () => {
  it('is listed once per image, only in a container nothing ran in, and is the listing every fresh container gives', async () => {
    const key = imageBaselineKey(task, image);
    const first = await open(true);
    const cached = imageBaselines(engine).get(key);
    expect(cached).toBeDefined();
    expect(await first.session.baselineSnapshot()).toBe(cached);

    // A command in the first container makes a link out of the workdir: never part of a later baseline.
    const link = `${task.workdir}/to-root`;
    await run(first, `ln -s / ${link}`);
    expect(has((await first.session.fsSnapshot()).entries, link)).toBe(true);

    const second = await open(true);
    const given = await second.session.baselineSnapshot();
    expect(given).toBe(cached);
    expect(has(given.entries, link)).toBe(false);
    // What listing the second container itself gives, through a session of its own.
    const listed = await new SandboxSession(second.container, task.workdir).baselineSnapshot();
    expect(listed.entries.length).toBeGreaterThan(1000);
    expect(given).toEqual(listed);

    // The second session patches its own snapshot; the cached listing stays as it was.
    await run(second, `touch ${task.workdir}/made-here`);
    expect(has((await second.session.fsSnapshot()).entries, `${task.workdir}/made-here`)).toBe(true);
    expect(has(imageBaselines(engine).get(key)?.entries ?? [], `${task.workdir}/made-here`)).toBe(false);

    // Not asked for: the session lists its own container, as before.
    const third = await open(false);
    expect(await third.session.baselineSnapshot()).not.toBe(cached);
  }, 180_000);
});
