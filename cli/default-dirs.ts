/**
 * Where a command looks for tasks and gold when not told: `tasks/` and `oracle-traces/` in the
 * working directory when it has them (a checkout, a user's own project), else the ones shipped
 * with authbench — so an installed package, or a checkout used from another folder, runs its
 * bundled starter tasks as `make demo` does. Gold is only ever *read* from the shipped folder:
 * commands that write gold (gen-gold, gold) keep `oracle-traces` in the working directory.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../core/index.ts';

export type DefaultDir = 'tasks' | 'oracle-traces';

/** `name` itself when `cwd` has that folder (or nothing is shipped), else the shipped folder. Pure but for the file system. */
export function defaultDir(name: DefaultDir, cwd: string = process.cwd(), packageRoot: string = PACKAGE_ROOT): string {
  if (isDir(join(cwd, name))) return name;
  const shipped = join(packageRoot, name);
  return resolve(shipped) !== resolve(cwd, name) && isDir(shipped) ? shipped : name;
}

/** The `defaultDescription` help shows for these options (the resolved path may be long). */
export const DEFAULT_DIR_HELP: Readonly<Record<DefaultDir, string>> = {
  tasks: '"tasks" here, else the bundled starter tasks',
  'oracle-traces': '"oracle-traces" here, else the bundled gold',
};

function isDir(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
