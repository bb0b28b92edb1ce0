import { relative } from 'node:path';
import type { BaseMapEntry, BuildHostAccess, BuildResult, Engine } from '../docker/index.ts';
import { taskImageRepository } from '../docker/index.ts';
import { familyImageRepository, type Task } from '../task-format/index.ts';
import { buildSidecarImages } from './sidecars.ts';

/**
 * How every command that builds builds (`--base-map`, `--build-arg`,
 * `--build-ca`, `--build-proxy-from-env`): one object the library passes
 * through to each image build, family bases and dataset recipes included.
 */
export interface BuildOptions {
  /** `--base-map PATTERN=IMAGE` entries, checked before the map file's. */
  baseMapEntries?: readonly BaseMapEntry[];
  buildArgs?: Readonly<Record<string, string>>;
  /** CA certificates and proxies for RUN steps only: not in the content hash, not in the image, never given to a rollout. */
  hostAccess?: BuildHostAccess;
}

export interface TaskBuildOptions extends BuildOptions {
  onProgress?: (line: string) => void;
}

/** Scenarios of one family built in parallel share one base build instead of racing to build it twice. */
const familyBuilds = new WeakMap<Engine, Map<string, Promise<BuildResult>>>();

/**
 * A task with a family base: build the base first (content-hash cached, so a
 * suite of one family installs its packages once), then point the task's
 * `FROM authbench/family-<family>` at it.
 */
async function familyBaseEntry(engine: Engine, task: Task, options: TaskBuildOptions): Promise<BaseMapEntry[]> {
  if (task.familyBaseDir === undefined) return [];
  const family = task.authbench.family ?? task.id;
  const repository = familyImageRepository(family);
  const key = `${task.familyBaseDir}\0${JSON.stringify(options.baseMapEntries ?? [])}`;
  let pending = familyBuilds.get(engine)?.get(key);
  if (pending === undefined) {
    pending = engine.buildImage({
      repository,
      kind: 'family-image',
      contextDir: task.familyBaseDir,
      baseMap: { extraEntries: options.baseMapEntries ?? [] },
      ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
    const perEngine = familyBuilds.get(engine) ?? new Map<string, Promise<BuildResult>>();
    perEngine.set(key, pending);
    familyBuilds.set(engine, perEngine);
    // A failed build is not remembered: the next task retries it.
    pending.catch(() => perEngine.delete(key));
  }
  const base = await pending;
  return [{ pattern: `${repository}*`, image: base.tag }];
}

/** Build (or find cached) the image of one task, and those of its compose sidecars. */
export async function buildTaskImage(engine: Engine, task: Task, options: TaskBuildOptions = {}): Promise<BuildResult> {
  const family = await familyBaseEntry(engine, task, options);
  const result = await engine.buildImage({
    repository: taskImageRepository(task.id),
    kind: 'task-image',
    contextDir: task.files.contextDir,
    dockerfile: relative(task.files.contextDir, task.files.dockerfile),
    buildArgs: options.buildArgs ?? {},
    taskId: task.id,
    baseMap: { extraEntries: [...family, ...(options.baseMapEntries ?? [])], ...(family.length > 0 ? { mode: 'always' as const } : {}) },
    ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  await buildSidecarImages(engine, task, options);
  return result;
}
