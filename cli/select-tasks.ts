import { AuthbenchError } from '../core/index.ts';
import { defaultDir } from './default-dirs.ts';
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

/**
 * The task folder of `tasks list|validate|integrity`: `--tasks DIR` as on every other command,
 * or the positional `[dir]` these commands took first (kept so scripts still work). Both given
 * and different is refused rather than one silently winning. Pure.
 */
export function tasksFolder(args: { dir?: string | undefined; tasks?: string | string[] | undefined }): string {
  if (Array.isArray(args.tasks)) throw new AuthbenchError('INVALID_ARGUMENT', '--tasks given more than once');
  if (args.dir !== undefined && args.tasks !== undefined && args.dir !== args.tasks) {
    throw new AuthbenchError('INVALID_ARGUMENT', `two task folders: --tasks ${args.tasks} and ${args.dir}`, { hint: 'give one; the positional folder is the same as --tasks' });
  }
  return args.tasks ?? args.dir ?? defaultDir('tasks');
}
