import { AuthbenchError } from '../core/index.ts';
import type { Task } from '../task-format/index.ts';

/**
 * The tasks a command acts on: the named ones (ids or folders, resolved inside
 * `root`), or every task under `root` when none are named. Loading is strict:
 * a task with errors stops the command, naming its file and field.
 */
export async function selectTasks(root: string, refs: readonly string[]): Promise<Task[]> {
  const { discoverTasks, loadTask, resolveTaskRef } = await import('../task-format/index.ts');
  const dirs = refs.length > 0 ? await Promise.all(refs.map((ref) => resolveTaskRef(root, ref))) : await discoverTasks(root);
  if (dirs.length === 0) throw new AuthbenchError('TASK_NOT_FOUND', `no tasks under ${root}`, { file: root });
  const tasks: Task[] = [];
  for (const dir of dirs) tasks.push(await loadTask(dir));
  return tasks;
}
