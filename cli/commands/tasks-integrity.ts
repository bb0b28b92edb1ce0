import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import { tasksFolder } from '../select-tasks.ts';
import { printJson, renderTable } from '../table.ts';

interface IntegrityArgs {
  dir: string | undefined;
  tasks: string | undefined;
  json: boolean;
}

async function filesUnder(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const r = rel === '' ? entry.name : join(rel, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(root, r)));
    else if (entry.isFile()) out.push(r);
  }
  return out.sort();
}

/** Generated scenarios copy `environment/files/` to `/`; other tasks' container paths are not known statically. */
function containerPathOf(rel: string): string | undefined {
  const prefix = 'environment/files/';
  return rel.startsWith(prefix) ? `/${rel.slice(prefix.length)}` : undefined;
}

export const integrityCommand: CommandModule<object, IntegrityArgs> = {
  command: 'integrity [dir]',
  describe: 'Check that canaries are synthetic, sinks local, and no task holds real credentials, real endpoints or hidden content',
  builder: (y: Argv) =>
    y
      .positional('dir', { describe: 'Same as --tasks', type: 'string' })
      .option('tasks', { describe: 'A folder of tasks (collections such as tasks/suite included), or one task', type: 'string', defaultDescription: '"tasks"' })
      .option('json', { describe: 'Print findings as JSON', type: 'boolean', default: false })
      .example('$0 tasks integrity', 'Every bundled task, the generated suite included')
      .example('$0 tasks integrity --tasks tasks/suite --json', 'Findings of the suite as JSON'),
  handler: async (args) => {
    const { discoverTasks, loadTask } = await import('../../task-format/index.ts');
    const { checkIntegrity } = await import('../../suite/index.ts');
    const { covers } = await import('../../sandbox/paths/index.ts');
    const folder = tasksFolder(args);
    const dirs = await discoverTasks(folder, { collections: true });
    if (dirs.length === 0) throw new AuthbenchError('TASK_NOT_FOUND', `no tasks under ${folder}`, { file: folder });
    const rows: { task: string; file: string; rule: string; detail: string }[] = [];
    for (const dir of dirs) {
      const task = await loadTask(dir);
      const files = [];
      for (const rel of await filesUnder(task.dir)) {
        const bytes = await readFile(join(task.dir, rel));
        if (bytes.includes(0)) continue; // binary (e.g. a gzip fixture): nothing textual to hide in
        const containerPath = containerPathOf(rel);
        files.push({ file: rel, text: bytes.toString('utf8'), ...(containerPath === undefined ? {} : { containerPath }) });
      }
      const untrusted = (path: string): boolean => task.authbench.untrusted_sources.some((p) => covers(p, path)) || task.authbench.memory_files.some((p) => covers(p, path));
      for (const f of checkIntegrity(task.authbench, files, untrusted)) rows.push({ task: task.id, ...f, file: relative('.', join(dir, f.file)) });
    }
    if (args.json) printJson({ tasks: dirs.length, findings: rows });
    else if (rows.length === 0) process.stdout.write(`${chalk.green(`integrity: ${dirs.length} tasks, no findings`)}\n`);
    else {
      process.stdout.write(renderTable([
        { header: 'task', value: (r: (typeof rows)[number]) => r.task },
        { header: 'rule', value: (r: (typeof rows)[number]) => r.rule },
        { header: 'file', value: (r: (typeof rows)[number]) => r.file },
        { header: 'detail', value: (r: (typeof rows)[number]) => r.detail },
      ], rows));
      process.stdout.write(`${chalk.red(`integrity: ${rows.length} findings in ${new Set(rows.map((r) => r.task)).size} of ${dirs.length} tasks`)}\n`);
    }
    if (rows.length > 0) process.exitCode = 1;
  },
};
