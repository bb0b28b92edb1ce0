import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { Cell, ColumnKey, DatasetRow, Tone } from '../../dataset/index.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { safeText } from '../output-text.ts';
import { createProgress, itemLine } from '../progress.ts';
import { printJson, renderTable, type Column } from '../table.ts';

interface DatasetCheckArgs extends BuildFlagArgs {
  dir: string;
  task: string[];
  concurrency: number;
  stability: boolean;
  gold: boolean;
  'oracle-traces': string | undefined;
  controls: boolean;
  'control-jobs': string | undefined;
  json: boolean;
}

const TONE: Record<Tone, (s: string) => string> = {
  good: chalk.green,
  bad: chalk.red,
  warn: chalk.yellow,
  dim: chalk.dim,
  plain: (s) => s,
};

// Cells and notes quote what the tasks and their containers said (oracle output, errors): made safe first.
export const paint = (c: Cell): string => TONE[c.tone](safeText(c.text));

const check: CommandModule<object, DatasetCheckArgs> = {
  command: 'check <dir> [task..]',
  describe:
    "One table for a dataset: loads, builds (substitutions, translations), oracle passes, gold derived and sufficient (and stable), derived gold vs the task's spec (F1 per axis), attack smoke fires, oracle clean, and with --controls the positive controls' ASR under allow-all and under the derived gold",
  builder: (y: Argv) =>
    withBuildFlags(
      y
        .positional('dir', { describe: 'The dataset (a folder with tasks/, or a folder of task folders)', type: 'string', demandOption: true })
        .positional('task', { describe: 'Only these task ids (default: every task)', type: 'string', array: true, default: [] })
        .option('concurrency', { alias: 'n', describe: 'Tasks checked in parallel (builds go one at a time)', type: 'number', default: 2 })
        .option('stability', { describe: 'Derive each gold a second time and compare', type: 'boolean', default: false })
        .option('gold', { describe: 'Derive gold (--no-gold: builds and controls only, much faster)', type: 'boolean', default: true })
        .option('oracle-traces', { describe: "Keep the derived gold here (default: a temporary folder, removed; never the repository's oracle-traces/)", type: 'string' })
        .option('controls', {
          describe: 'Run the positive controls (scripted/follow-injection; scripted/attack-smoke where the task has solution/attack_smoke.sh) on sensitive tasks, under allow-all and under the derived gold: 2 to 4 rollouts per task',
          type: 'boolean',
          default: false,
        })
        .option('control-jobs', { describe: "Keep the controls' eval job folders here (default: a temporary folder, removed)", type: 'string' })
        .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false }),
    )
      .example('$0 dataset check ../authbench', 'Every task of a dataset')
      .example('$0 dataset check ../authbench --stability -n 3', 'Also re-derive each gold, three tasks at a time')
      .example('$0 dataset check ../authbench --no-gold sanitize-git-repo', 'One task, builds and controls only')
      .example('$0 dataset check ../authbench --oracle-traces /tmp/ab-gold --json', 'Keep the derived gold, JSON output')
      .example('$0 dataset check ../authbench --controls -n 2', 'Also the positive controls: attack under allow-all, contained under the derived gold'),
  handler: async (args) => {
    const { connectDocker } = await import('../../docker/index.ts');
    const { checkDataset, COLUMNS, rowCells, rowNotes, rowVerdict } = await import('../../dataset/index.ts');

    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--concurrency must be a positive integer, got ${args.concurrency}`);
    }
    if (args['control-jobs'] !== undefined && !args.controls) throw new AuthbenchError('INVALID_ARGUMENT', '--control-jobs keeps the jobs of --controls, which is off');
    const build = await parseBuildFlags(args);
    const engine = await connectDocker();
    const progress = createProgress({ unit: 'tasks', enabled: !args.json });
    const report = await checkDataset(engine, args.dir, {
      concurrency: args.concurrency,
      stability: args.stability,
      gold: args.gold,
      only: args.task,
      build,
      runId: `dataset-check-${Date.now().toString(36)}`,
      ...(args['oracle-traces'] === undefined ? {} : { oracleTracesDir: args['oracle-traces'] }),
      controls: args.controls,
      ...(args['control-jobs'] === undefined ? {} : { controlJobsDir: args['control-jobs'] }),
      onEvent: (e) => {
        if (e.kind === 'planned') progress.update(0, e.total, `building and checking ${e.total} task(s)`);
        else if (e.kind === 'detail') progress.detail(chalk.dim(`  ${safeText(e.task)} | ${safeText(e.message)}`));
        else {
          const ok = rowVerdict(e.row) === 'ok';
          progress.finish({ done: e.done, total: e.total, line: itemLine(e.done, e.total, ok, e.row.task), keep: !ok, status: e.row.task });
        }
      },
    }).finally(() => progress.stop());

    if (report.status === 'infra-failed') process.exitCode = 125;
    else if (report.status === 'check-failed') process.exitCode = 1;
    if (args.json) {
      printJson(report);
      return;
    }
    const columns: Column<DatasetRow>[] = COLUMNS.map(([key, header]: readonly [ColumnKey, string]) => ({ header, value: (r: DatasetRow) => paint(rowCells(r)[key]) }));
    process.stdout.write(`\n${renderTable(columns, report.rows)}`);
    for (const r of report.rows) {
      const notes = rowNotes(r);
      if (notes.length > 0) process.stdout.write(`${chalk.bold(safeText(r.task))}\n${notes.map((n) => `  ${safeText(n)}`).join('\n')}\n`);
    }
    const { tasks, ok, failed, infra } = report.summary;
    process.stdout.write(
      `${ok}/${tasks} tasks ok, ${failed} with a failed check, ${infra} with an infrastructure error; ` +
        `F1 is the derived gold (S_gold) scored against tests/permission_eval_spec.json` +
        (report.summary.specs_scored === undefined
          ? '; '
          : ` (${report.summary.specs_reading_outputs ?? 0} of ${report.summary.specs_scored} specs read back a file they write; the gold reads an output only where the oracle did); `) +
        (args.controls
          ? 'control ASR: attacked/rollouts under allow-all → under the derived gold (fi scripted/follow-injection, as scripted/attack-smoke); '
          : 'control ASR: not measured (--controls); ') +
        `docker build calls this run: ${engine.stats.buildCalls}\n`,
    );
  },
};

const SUBCOMMANDS = [check as unknown as CommandModule<object, object>];

/** `authbench dataset <subcommand>`. */
export const datasetCommand: CommandModule<object, object> = {
  command: 'dataset',
  describe: 'Whole-dataset checks',
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out
      .demandCommand(1, 'Name a subcommand: check.')
      .example('$0 dataset check ../authbench -n 2', 'One table for a dataset: build, controls, gold, F1 vs its spec')
      .example('$0 dataset check ../authbench --no-gold sanitize-git-repo', 'One task, builds and controls only');
  },
  handler: () => undefined,
};
