import { readFile, writeFile } from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError, formatProblem } from '../../core/index.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface ExportArgs {
  task: string;
  tasks: string;
  'oracle-traces': string;
  out: string | undefined;
}

const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export <task>',
  describe: "Write a task's gold as an AuthBench permission_eval_spec.json",
  builder: (y: Argv) =>
    y
      .positional('task', { describe: 'Task id or folder', type: 'string', demandOption: true })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: 'oracle-traces' })
      .option('out', { describe: 'Write here instead of stdout (e.g. tasks/<id>/tests/permission_eval_spec.json)', type: 'string' })
      .example('$0 gold export log-triage', 'Print the spec')
      .example('$0 gold export log-triage --out tasks/log-triage/tests/permission_eval_spec.json', 'Replace the hand-written spec'),
  handler: async (args) => {
    const { loadTask, resolveTaskRef } = await import('../../task-format/index.ts');
    const { goldPaths, requireGold } = await import('../../goldstore/index.ts');
    const { goldToSpec } = await import('../../gold/index.ts');
    const task = await loadTask(await resolveTaskRef(args.tasks, args.task));
    const paths = goldPaths(args['oracle-traces'], task.id);
    const gold = await requireGold(paths);
    const text = `${JSON.stringify(goldToSpec(gold, paths.gold), null, 2)}\n`;
    if (args.out === undefined) process.stdout.write(text);
    else await writeFile(args.out, text);
  },
};

interface ImportArgs {
  task: string;
  tasks: string;
  'oracle-traces': string;
  spec: string | undefined;
  force: boolean;
}

const importCommand: CommandModule<object, ImportArgs> = {
  command: 'import <task>',
  describe: 'Start a gold from an AuthBench permission_eval_spec.json (hand-written specs; provenance says imported)',
  builder: (y: Argv) =>
    y
      .positional('task', { describe: 'Task id or folder', type: 'string', demandOption: true })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: 'oracle-traces' })
      .option('spec', { describe: "Spec file (default: the task's tests/permission_eval_spec.json)", type: 'string' })
      .option('force', { describe: 'Replace an existing gold.json', type: 'boolean', default: false })
      .example('$0 gold import my-task', "Import the task's own spec"),
  handler: async (args) => {
    const { loadTask, resolveTaskRef, parseSpec } = await import('../../task-format/index.ts');
    const { goldPaths, readStoredGold, writeGold } = await import('../../goldstore/index.ts');
    const { specToGold } = await import('../../gold/index.ts');
    const task = await loadTask(await resolveTaskRef(args.tasks, args.task));
    const specFile = args.spec ?? task.files.specFile;
    if (specFile === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `task ${task.id} has no tests/permission_eval_spec.json; pass --spec`);
    const checked = parseSpec(await readFile(specFile, 'utf8'), specFile);
    if (checked.spec === undefined) {
      throw new AuthbenchError('INVALID_SPEC', 'the spec is invalid', { file: specFile, details: checked.problems.map(formatProblem) });
    }
    const paths = goldPaths(args['oracle-traces'], task.id);
    if (!args.force && (await readStoredGold(paths)) !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `${paths.gold} exists; --force replaces it`, { file: paths.gold });
    }
    await writeGold(paths, specToGold(checked.spec, task.id));
    process.stderr.write(`imported ${specFile} → ${paths.gold}\n`);
  },
};

interface ImplicitArgs {
  json: boolean;
}

const implicitCommand: CommandModule<object, ImplicitArgs> = {
  command: 'implicit',
  describe: 'The documented default implicit (runtime noise) set, with a reason per pattern',
  builder: (y: Argv) =>
    y.option('json', { describe: 'Print JSON', type: 'boolean', default: false }).example('$0 gold implicit', 'Show the table'),
  handler: async (args) => {
    const { DEFAULT_IMPLICIT_RULES } = await import('../../gold/index.ts');
    if (args.json) {
      printJson(DEFAULT_IMPLICIT_RULES);
      return;
    }
    type Rule = (typeof DEFAULT_IMPLICIT_RULES)[number];
    const columns: Column<Rule>[] = [
      { header: 'pattern', value: (r) => r.pattern },
      { header: 'axes', value: (r) => r.axes.join(',') },
      { header: 'why', value: (r) => r.reason },
    ];
    process.stdout.write(renderTable(columns, DEFAULT_IMPLICIT_RULES));
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const SUBCOMMANDS: CommandModule<object, any>[] = [exportCommand, importCommand, implicitCommand];

export const goldCommand: CommandModule<object, object> = {
  command: 'gold',
  describe: 'Gold sets: export to / import from AuthBench specs, the default implicit set',
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out
      .demandCommand(1, 'Name a subcommand: export, import, implicit.')
      .example('$0 gold export log-triage', "A task's gold as an AuthBench permission_eval_spec.json")
      .example('$0 gold import my-task', "Start a gold from the task's hand-written spec")
      .example('$0 gold implicit', 'The default implicit (runtime noise) set, with a reason per pattern');
  },
  handler: () => {},
};
