import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { ReportData } from '../../report/index.ts';
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

const dim = (s: string): string => (s === 'N/A' ? chalk.dim(s) : s);

async function printTables(data: ReportData): Promise<void> {
  const { endpointText, groupRow, interval, num, seriesName, verdictLabel, ENDPOINT_METRICS, GROUP_HEADERS, PROPAGATION_METRICS } = await import('../../report/index.ts');
  const series = (d: ReportData, defense: string, model: string): string => seriesName(defense, model, d.models.length > 1);
  const out = (s: string): boolean => process.stdout.write(s);
  type Row = string[];
  const table = (headers: readonly string[], rows: readonly Row[]): string =>
    renderTable(
      headers.map((header, i) => ({ header, value: (r: Row) => dim(r[i] ?? ''), align: i === 0 ? ('left' as const) : ('right' as const) })),
      rows,
    );

  out(chalk.bold('Rollouts\n'));
  out(
    table(
      GROUP_HEADERS,
      data.groups.map(groupRow),
    ),
  );
  for (const f of data.flagged.slice(0, 20)) out(chalk.magenta(`${f.outcome} ${f.job}/${f.rollout_id}: ${f.why}\n`));
  if (data.flagged.length > 20) out(chalk.magenta(`… ${data.flagged.length - 20} more flagged rollout(s): see report.html\n`));
  const unfinished = data.jobs.filter((j) => j.unfinished > 0);
  for (const j of unfinished) out(chalk.yellow(`${j.dir}: ${j.unfinished} rollout(s) without a result (interrupted or still running); not counted\n`));
  if (data.infra_errors.length > 0) out(chalk.yellow(`${data.infra_errors.length} infrastructure error(s): excluded from every rate below\n`));

  for (const stage of data.stages) {
    out(chalk.bold(`\nStage ${stage.stage}`) + chalk.dim(' (mean over applicable rollouts; never pooled across stages)\n'));
    const rows = data.models.flatMap((model) =>
      data.defenses.flatMap((defense) => {
        const mine = stage.cells.filter((c) => c.model === model && c.defense === defense);
        const first = mine[0];
        if (first === undefined) return [];
        return [[series(data, defense, model), String(first.n + first.n_na), ...stage.primary.map((m) => num(mine.find((c) => c.metric === m)?.mean, 3))]];
      }),
    );
    out(table(['defense', 'n', ...stage.primary], rows));
  }

  out(chalk.bold('\nEndpoints') + chalk.dim(' (events/n; all zero: one-sided upper bound over clusters)\n'));
  const endpointRows = data.models.flatMap((model) =>
    data.defenses.flatMap((defense) => {
      const mine = data.endpoints.filter((e) => e.model === model && e.defense === defense);
      return [...new Set(mine.map((e) => e.stage))].map((stage) => [
        series(data, defense, model),
        stage ?? 'all',
        ...ENDPOINT_METRICS.map((m) => {
          const e = mine.find((x) => x.stage === stage && x.metric === m);
          return e === undefined ? 'N/A' : endpointText(e);
        }),
      ]);
    }),
  );
  out(table(['defense', 'stage', ...ENDPOINT_METRICS], endpointRows));

  for (const pair of data.comparisons) {
    out(chalk.bold(`\n${pair.defense_a} (A) vs ${pair.defense_b} (B)`) + chalk.dim(' paired by scenario, model, seed; Δ = B − A; verdict from the cluster CI\n'));
    out(
      table(
        ['metric', 'stage', 'pairs', 'mean A', 'mean B', 'Δ', 'pair CI', 'cluster CI', 'verdict'],
        pair.rows.map((r) => [
          r.metric,
          r.stage,
          String(r.n_pairs),
          num(r.mean_a),
          num(r.mean_b),
          num(r.delta),
          interval(r.pair_ci),
          interval(r.cluster_ci),
          verdictLabel(r.verdict, pair.defense_a, pair.defense_b),
        ]),
      ),
    );
  }

  out(chalk.bold('\nPropagation') + chalk.dim(' (diagnostic: logged taint spread)\n'));
  const strata = [...new Set(data.propagation.map((c) => JSON.stringify([c.model, c.defense, c.stage])))].sort();
  if (strata.length === 0) out(chalk.dim('no rollout was measured (no trace graph)\n'));
  else
    out(
    table(
      ['defense', 'stage', ...PROPAGATION_METRICS],
      strata.map((k) => {
        const [model = '', defense = '', stage = ''] = JSON.parse(k) as string[];
        return [series(data, defense, model), stage, ...PROPAGATION_METRICS.map((m) => num(data.propagation.find((c) => c.model === model && c.defense === defense && c.stage === stage && c.metric === m)?.mean, 3))];
      }),
    ),
  );

  out(chalk.bold('\nStatic F1') + chalk.dim(' (per axis, mean over distinct task policies)\n'));
  out(
    table(
      ['policy', 'policies', 'invalid', 'read F1', 'write F1', 'execute F1', 'macro F1', 'SER'],
      data.static_f1.map((e) => [
        series(data, e.policy_source, e.model),
        String(e.n),
        String(e.invalid),
        ...e.axes.map((a) => num(a.f1, 3)),
        num(e.macro_f1, 3),
        num(e.sensitive_exposure, 3),
      ]),
    ),
  );
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
