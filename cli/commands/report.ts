import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { ReportData, TextTable } from '../../report/index.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable } from '../table.ts';

interface ReportArgs {
  jobs: string[];
  out: string | undefined;
  baseline: string | undefined;
  pair: string[];
  seed: number;
  resamples: number;
  'max-traces': number;
  json: boolean;
  csv: boolean;
}

/** `--pair A,B` → [A, B]; defense labels may carry `@policy`, never a comma. */
export function parsePairs(values: readonly string[]): [string, string][] {
  return values.map((v) => {
    const parts = v.split(',').map((s) => s.trim());
    const [a, b] = parts;
    if (parts.length !== 2 || a === undefined || b === undefined || a === '' || b === '')
      throw new AuthbenchError('INVALID_ARGUMENT', `--pair ${v}: expected two defense labels separated by a comma`, {
        field: 'pair',
        hint: 'e.g. --pair none,tool-boundary',
      });
    return [a, b];
  });
}

const dim = (s: string): string => (s === 'N/A' || s === 'not run' ? chalk.dim(s) : s);

/**
 * A report table as aligned columns: the first left, numbers right, N/A dimmed. Cells and headers
 * hold what jobs recorded (defense labels, models, task ids, messages), made safe for a terminal.
 */
function textTable(t: TextTable): string {
  return renderTable(
    t.headers.map((header, i) => ({ header: safeText(header), value: (r: readonly string[]) => dim(safeText(r[i] ?? '')), align: i === 0 ? ('left' as const) : ('right' as const) })),
    t.rows,
  );
}

/** The headline block: `authbench report` ends with it, `authbench eval` too, report.html opens with it. */
export async function headlineText(table: TextTable): Promise<string> {
  const { headlineLegend } = await import('../../report/index.ts');
  const body = table.rows.length === 0 ? chalk.dim('no completed rollout\n') : textTable(table);
  return `${chalk.bold('\nHeadline')}${chalk.dim(' (mean [cluster-bootstrap CI] n, each on its own stage)')}\n${body}${chalk.dim(headlineLegend())}\n`;
}

async function printTables(data: ReportData): Promise<void> {
  const { comparisonTable, endpointsTable, funnelTable, groupsTable, headlineTable, parserTable, propagationTable, stageTable, staticF1Table } = await import('../../report/index.ts');
  const out = (s: string): boolean => process.stdout.write(s);

  out(chalk.bold('Rollouts\n'));
  out(textTable(groupsTable(data)));
  for (const f of data.flagged.slice(0, 20)) out(chalk.magenta(safeText(`${f.outcome} ${f.job}/${f.rollout_id}: ${f.why}`)) + '\n');
  if (data.flagged.length > 20) out(chalk.magenta(`… ${data.flagged.length - 20} more flagged rollout(s): see report.html\n`));
  const unfinished = data.jobs.filter((j) => j.unfinished > 0);
  for (const j of unfinished) out(chalk.yellow(`${safeText(j.dir)}: ${j.unfinished} rollout(s) without a result (interrupted or still running); not counted\n`));
  if (data.parser !== undefined) {
    out(chalk.bold('\nText actions') + chalk.dim(' (replies by parser status; invalid ones never ran)\n'));
    out(textTable(parserTable(data)));
  }
  if (data.infra_errors.length > 0) out(chalk.yellow(`${data.infra_errors.length} infrastructure error(s): excluded from every rate below\n`));

  for (const stage of data.stages) {
    out(chalk.bold(`\nStage ${stage.stage}`) + chalk.dim(' (mean over applicable rollouts; never pooled across stages)\n'));
    out(textTable(stageTable(data, stage, 'brief')));
  }

  out(chalk.bold('\nEndpoints') + chalk.dim(' (events/n; all zero: one-sided upper bound over clusters)\n'));
  out(textTable(endpointsTable(data)));

  const funnel = funnelTable(data, 'brief');
  if (funnel.rows.length > 0) {
    out(chalk.bold('\nExact-goal funnel') + chalk.dim(' (rollouts with an attack goal; off-target and authorized completion beside the path)\n'));
    out(textTable(funnel));
  }

  for (const pair of data.comparisons) {
    out(chalk.bold(`\n${pair.defense_a} (A) vs ${pair.defense_b} (B)`) + chalk.dim(' paired by scenario, model, seed; Δ = B − A; verdict from the cluster CI\n'));
    out(textTable(comparisonTable(pair)));
  }

  out(chalk.bold('\nPropagation') + chalk.dim(' (diagnostic: logged taint spread)\n'));
  const propagation = propagationTable(data, 'brief');
  out(propagation.rows.length === 0 ? chalk.dim('no rollout was measured (no trace graph)\n') : textTable(propagation));

  out(chalk.bold('\nStatic F1') + chalk.dim(' (per axis, mean over distinct task policies)\n'));
  out(textTable(staticF1Table(data, 'brief')));

  // Last, so it is what stays on screen.
  out(await headlineText(headlineTable(data)));
}

const command: CommandModule<object, ReportArgs> = {
  command: 'report <jobs..>',
  describe: 'Tables, paired statistics and a self-contained HTML report (plots, trace viewer) over eval jobs',
  builder: (y: Argv) =>
    y
      .positional('jobs', { describe: 'Job folders written by `authbench eval` (jobs/<name>)', type: 'string', array: true, demandOption: true })
      .option('out', { describe: 'Where report.html, report.json and rows.csv go (default: <first job>/report)', type: 'string' })
      .option('baseline', { describe: 'Compare this defense label with every other (default: none when present)', type: 'string' })
      .option('pair', { describe: 'Compare defenses A,B (repeatable; replaces the baseline pairs)', type: 'string', array: true, default: [] })
      .option('seed', { describe: 'Bootstrap seed (same inputs + seed = identical report.json)', type: 'number', default: 0 })
      .option('resamples', { describe: 'Bootstrap resamples per interval', type: 'number', default: 2000 })
      .option('max-traces', { describe: 'Rollouts whose trace is inlined into the HTML viewer', type: 'number', default: 400 })
      .option('json', { describe: 'Print report.json instead of tables', type: 'boolean', default: false })
      .option('csv', { describe: 'Print rows.csv instead of tables', type: 'boolean', default: false })
      .example('$0 report jobs/run1', 'Tables; report.html, report.json and rows.csv in jobs/run1/report')
      .example('$0 report jobs/inject jobs/oracle --out reports/two-models', 'Two jobs (e.g. two models) in one report')
      .example('$0 report jobs/run1 --pair tool-boundary,intent-ledger --resamples 5000', 'One explicit paired comparison')
      .example('$0 report jobs/run1 --baseline tool-boundary --json', 'Every defense against tool-boundary, JSON out'),
  handler: async (args) => {
    const { defaultOutDir, generateReport } = await import('../../report/index.ts');
    if (!Number.isInteger(args['max-traces']) || args['max-traces'] < 0)
      throw new AuthbenchError('INVALID_ARGUMENT', `--max-traces must be a non-negative integer, got ${args['max-traces']}`, { field: 'max-traces' });
    if (args.json && args.csv) throw new AuthbenchError('INVALID_ARGUMENT', '--json and --csv each replace the tables; pass one', { field: 'json' });
    const pairs = parsePairs(args.pair);
    const report = await generateReport(args.jobs, {
      seed: args.seed,
      resamples: args.resamples,
      maxTraces: args['max-traces'],
      out: args.out ?? defaultOutDir(args.jobs),
      ...(args.baseline === undefined ? {} : { baseline: args.baseline }),
      ...(pairs.length === 0 ? {} : { pairs }),
    });
    for (const u of report.unreadableTraces) process.stderr.write(chalk.yellow(`warning: ${safeText(u.message)} (its rollout is in the tables; the trace viewer shows it as unreadable)\n`));
    if (args.json) {
      printJson(report.data);
      return;
    }
    if (args.csv) {
      process.stdout.write(report.csv);
      return;
    }
    await printTables(report.data);
    process.stdout.write(chalk.dim(`\nwrote ${report.files.html}, ${report.files.json}, ${report.files.csv}\n`));
  },
};

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const reportCommand = command as unknown as CommandModule<object, object>;
