/**
 * The implicit set a task runs with: what every command may touch that is never
 * a need of the task (gold/implicit.ts's documented default), the task's own
 * `implicit_permissions`, and what the harness itself puts in the container.
 * Gold derivation excludes it; every enforced policy is granted it.
 */
import { defaultImplicit, mergeImplicit, type AxisLists } from '../gold/index.ts';
import type { Task } from '../task-format/index.ts';
import { CONTAINER_PATHS } from '../validators/index.ts';

/** What the harness itself puts in the container: never a need of the task. */
export const HARNESS_IMPLICIT: AxisLists = { read: [`${CONTAINER_PATHS.solution}/**`], write: [], execute: [] };

/** The implicit set used for a task: the documented default, the task's own, and the harness paths. */
export function taskImplicit(task: Task): AxisLists {
  const fromSpec = task.spec?.implicit_permissions ?? { read: [], write: [], execute: [] };
  return mergeImplicit(defaultImplicit(), fromSpec, HARNESS_IMPLICIT);
}
