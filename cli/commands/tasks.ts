import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError, compareStrings, formatProblem, type Problem } from '../../core/index.ts';
import { tasksFolder } from '../select-tasks.ts';
import { mark, printJson, renderTable, type Column } from '../table.ts';
import { generateCommand } from './tasks-generate.ts';
import { integrityCommand } from './tasks-integrity.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface ListArgs {
  dir: string | undefined;
  tasks: string | undefined;
  'oracle-traces': string;
  summary: boolean;
  json: boolean;
}

interface ValidateArgs {
  dir: string | undefined;
  tasks: string | undefined;
  json: boolean;
}

interface ListRow {
  id: string;
  dir: string;
  valid: boolean;
  stage: string | null;
  family: string | null;
  dataset: string | null;
  oracle: boolean;
  gold: boolean;
  attackValidator: boolean;
  errors: number;
  warnings: number;
}

const dirPositional = {
  describe: 'Same as --tasks',
  type: 'string',
} as const;

const tasksOption = {
  describe: 'A folder of tasks, or one task folder',
  type: 'string',
  defaultDescription: '"tasks"',
} as const;

const jsonOption = { describe: 'Print JSON instead of text', type: 'boolean', default: false } as const;

const listCommand: CommandModule<object, ListArgs> = {
  command: 'list [dir]',
  describe: 'List tasks: stage, dataset, oracle, gold set, attack validator',
  builder: (y: Argv) =>
    y
      .positional('dir', dirPositional)
      .option('tasks', tasksOption)
      .option('oracle-traces', {
        describe: 'Folder holding <task-id>/gold.json',
        type: 'string',
        default: defaultDir('oracle-traces'),
        defaultDescription: DEFAULT_DIR_HELP['oracle-traces'],
      })
      .option('summary', { describe: 'Counts per stage, family and dataset instead of one row per task', type: 'boolean', default: false })
      .option('json', jsonOption)
      .example('$0 tasks list', 'List the bundled tasks under tasks/ (the generated suite in tasks/suite included)')
      .example('$0 tasks list --summary', 'How many scenarios per evidence stage and per family')
      .example('$0 tasks list --tasks my-tasks --json', 'Machine-readable listing of another folder (`tasks list my-tasks` also works)'),
  handler: async (args) => {
    const { checkTask, discoverTasks, STAGES, TASK_PATHS } = await import('../../task-format/index.ts');
    const { goldPaths } = await import('../../goldstore/index.ts');
    const folder = tasksFolder(args);
    const dirs = await tasksUnder(folder, (root) => discoverTasks(root, { collections: true }));
    const rows: ListRow[] = [];
    for (const dir of dirs) {
      const { task, problems } = await checkTask(dir);
      const id = task?.id ?? basename(resolve(dir));
      rows.push({
        id,
        dir,
        valid: task !== undefined,
        stage: task?.authbench.stage ?? null,
        family: task?.authbench.family ?? null,
        dataset: task?.dataset ?? null,
        oracle: isFile(join(dir, TASK_PATHS.solveSh)),
        gold: isFile(goldPaths(args['oracle-traces'], id).gold),
        attackValidator: isFile(join(dir, TASK_PATHS.attackValidator)),
        ...tally(problems),
      });
    }
    const invalid = rows.filter((r) => !r.valid);
    if (args.summary) {
      const summary = summarizeTasks(rows);
      if (args.json) printJson(summary);
      else process.stdout.write(renderSummary(summary, STAGES));
    } else if (args.json) printJson(rows);
    else {
      process.stdout.write(renderTable(listColumns, rows));
      if (invalid.length > 0)
        process.stdout.write(
          `${chalk.red(`${invalid.length} of ${rows.length} tasks failed to load`)}; see: authbench tasks validate --tasks ${folder}\n`,
        );
    }
    if (invalid.length > 0) process.exitCode = 1;
  },
};

const yesNo = (b: boolean): string => (b ? mark.yes() : mark.no());

const listColumns: Column<ListRow>[] = [
  { header: 'id', value: (r) => (r.valid ? r.id : `${r.id} ${chalk.red('(invalid)')}`) },
  { header: 'stage', value: (r) => r.stage ?? '-' },
  { header: 'family', value: (r) => r.family ?? '-' },
  { header: 'dataset', value: (r) => r.dataset ?? '-' },
  { header: 'oracle', value: (r) => yesNo(r.oracle) },
  { header: 'gold', value: (r) => yesNo(r.gold) },
  { header: 'attack validator', value: (r) => yesNo(r.attackValidator) },
];

const validateCommand: CommandModule<object, ValidateArgs> = {
  command: 'validate [dir]',
  describe: 'Check every task against the task format; print each problem',
  builder: (y: Argv) =>
    y
      .positional('dir', dirPositional)
      .option('tasks', tasksOption)
      .option('json', jsonOption)
      .example('$0 tasks validate', 'Check every task under tasks/')
      .example('$0 tasks validate --tasks tasks/log-triage', 'Check one task')
      .example('$0 tasks validate --json', 'Problems as JSON, e.g. for CI annotations'),
  handler: async (args) => {
    const { checkTask, discoverTasks } = await import('../../task-format/index.ts');
    const dirs = await tasksUnder(tasksFolder(args), (root) => discoverTasks(root, { collections: true }));
    const results: { id: string; dir: string; valid: boolean; problems: Problem[] }[] = [];
    for (const dir of dirs) {
      const { task, problems } = await checkTask(dir);
      results.push({ id: task?.id ?? basename(resolve(dir)), dir, valid: task !== undefined, problems });
      if (!args.json) for (const p of problems) process.stdout.write(`${formatProblem(p)}\n`);
    }
    const all = results.flatMap((r) => r.problems);
    const { errors, warnings } = tally(all);
    const valid = results.filter((r) => r.valid).length;
    const summary = { tasks: results.length, valid, invalid: results.length - valid, errors, warnings };
    if (args.json) printJson({ summary, tasks: results });
    else {
      const line = `checked ${plural(summary.tasks, 'task')}: ${valid} valid, ${summary.invalid} invalid; ${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
      process.stdout.write(`${errors > 0 ? chalk.red(line) : chalk.green(line)}\n`);
    }
    if (errors > 0) process.exitCode = 1;
  },
};

export const tasksCommand: CommandModule<object, object> = {
  command: 'tasks',
  describe: 'List, validate, generate and integrity-check tasks',
  builder: (y: Argv) =>
    y
      .command(listCommand)
      .command(validateCommand)
      .command(generateCommand)
      .command(integrityCommand)
      .demandCommand(1, 'Name a subcommand: list, validate, generate or integrity.')
      .example('$0 tasks list', 'What is in tasks/')
      .example('$0 tasks validate', 'Is every task well-formed?'),
  handler: () => {},
};

async function tasksUnder(dir: string, discover: (root: string) => Promise<string[]>): Promise<string[]> {
  const dirs = await discover(dir);
  if (dirs.length === 0)
    throw new AuthbenchError('TASK_NOT_FOUND', `no tasks under ${dir}`, {
      file: dir,
      hint: 'a task folder holds a task.toml; give a folder of task folders or one task folder',
    });
  return dirs;
}

function tally(problems: readonly Problem[]): { errors: number; warnings: number } {
  const errors = problems.filter((p) => p.severity === 'error').length;
  return { errors, warnings: problems.length - errors };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export interface TaskSummary {
  tasks: number;
  invalid: number;
  by_stage: Record<string, number>;
  by_family: Record<string, Record<string, number>>;
  by_dataset: Record<string, number>;
  families: number;
}

/** Counts per stage, per family × stage and per dataset (pure, for --summary). */
export function summarizeTasks(rows: readonly Pick<ListRow, 'valid' | 'stage' | 'family' | 'dataset'>[]): TaskSummary {
  const bump = (o: Record<string, number>, k: string): void => {
    o[k] = (o[k] ?? 0) + 1;
  };
  const byStage: Record<string, number> = {};
  const byFamily: Record<string, Record<string, number>> = {};
  const byDataset: Record<string, number> = {};
  for (const r of rows.filter((x) => x.valid)) {
    bump(byStage, r.stage ?? '-');
    bump((byFamily[r.family ?? '(none)'] ??= {}), r.stage ?? '-');
    bump(byDataset, r.dataset ?? '-');
  }
  return {
    tasks: rows.length,
    invalid: rows.filter((r) => !r.valid).length,
    by_stage: byStage,
    by_family: byFamily,
    by_dataset: byDataset,
    families: Object.keys(byFamily).filter((f) => f !== '(none)').length,
  };
}


/** `order`: the evidence stages in their canonical order (task-format's STAGES); unknown stages follow, sorted. */
function renderSummary(s: TaskSummary, order: readonly string[]): string {
  const stages = [...order.filter((x) => x in s.by_stage), ...Object.keys(s.by_stage).filter((x) => !order.includes(x)).sort()];
  const rows = Object.entries(s.by_family)
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([family, counts]) => ({ family, counts }));
  const total = { family: chalk.bold('all'), counts: s.by_stage };
  const columns: Column<{ family: string; counts: Record<string, number> }>[] = [
    { header: 'family', value: (r) => r.family },
    ...stages.map((st) => ({ header: st, value: (r: { counts: Record<string, number> }) => String(r.counts[st] ?? 0), align: 'right' as const })),
    { header: 'total', value: (r) => String(Object.values(r.counts).reduce((a, b) => a + b, 0)), align: 'right' },
  ];
  const datasets = Object.entries(s.by_dataset).map(([d, n]) => `${n} ${d}`).join(', ');
  return `${renderTable(columns, [...rows, total])}${s.tasks} tasks (${datasets}) from ${s.families} families${s.invalid > 0 ? chalk.red(`; ${s.invalid} invalid`) : ''}\n`;
}
