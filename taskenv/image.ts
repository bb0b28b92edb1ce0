import { relative } from 'node:path';
import type { BaseMapEntry, BuildResult, Engine } from '../docker/index.ts';
import { taskImageRepository } from '../docker/index.ts';
import type { Task } from '../task-format/index.ts';

export interface TaskBuildOptions {
  /** `--base-map PATTERN=IMAGE` entries, checked before the map file's. */
  baseMapEntries?: readonly BaseMapEntry[];
  buildArgs?: Readonly<Record<string, string>>;
  onProgress?: (line: string) => void;
}

/** Build (or find cached) the image of one task. */
export async function buildTaskImage(engine: Engine, task: Task, options: TaskBuildOptions = {}): Promise<BuildResult> {
  return engine.buildImage({
    repository: taskImageRepository(task.id),
    kind: 'task-image',
    contextDir: task.files.contextDir,
    dockerfile: relative(task.files.contextDir, task.files.dockerfile),
    buildArgs: options.buildArgs ?? {},
    taskId: task.id,
    baseMap: { extraEntries: options.baseMapEntries ?? [] },
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
}
