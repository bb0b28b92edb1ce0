import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError, formatProblem } from '../../core/index.ts';
import type { GoldAction, OracleTracerName, TaskGoldReport } from '../../oracle/index.ts';
import { createProgress, itemLine } from '../progress.ts';
import { formatAuthbenchError } from '../render-error.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { safeText } from '../output-text.ts';
import { selectTasks } from '../select-tasks.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface GenGoldArgs extends BuildFlagArgs {
  task: string[];
  all: boolean;
  tasks: string;
  'oracle-traces': string;
  runs: number;
  concurrency: number;
  minimize: boolean;
  budget: number;
  check: boolean;
  write: boolean;
  sufficiency: boolean;
  tracer: OracleTracerName | undefined;
  'tracer-fallback': boolean;
  'ebpf-backend': (typeof EBPF_BACKEND_CHOICES)[number] | undefined;
  verbose: boolean;
  json: boolean;
}

type Row = TaskGoldReport;

// Spelled here: the oracle module is imported lazily, in the handler.
const TRACERS = ['strace', 'ebpf'] as const satisfies readonly OracleTracerName[];
const EBPF_BACKEND_CHOICES = ['native', 'bpftrace'] as const;

const command: CommandModule<object, GenGoldArgs> = {
  command: 'gen-gold [task..]',
  describe: 'Derive S_gold from an oracle run under strace (or eBPF), verify sufficiency, write oracle-traces/<id>/',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .positional('task', { describe: 'Task ids or folders', type: 'string', array: true, default: [] })
      .option('all', { describe: 'Every task under --tasks', type: 'boolean', default: false })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: 'oracle-traces' })
      .option('concurrency', { alias: 'n', describe: 'Tasks in parallel (each runs its oracle in its own container)', type: 'number', default: 1 })
      .option('runs', { describe: 'Oracle runs; entries seen in only some runs are reported as flaky', type: 'number', default: 1 })
      .option('minimize', { describe: 'Ablate gold entries (delta debugging, validator as the oracle)', type: 'boolean', default: false })
      .option('budget', { describe: 'Minimization time budget per task, seconds', type: 'number', default: 300 })
      .option('check', { describe: 'Recompute and diff against the stored gold; exit 1 on drift; write nothing', type: 'boolean', default: false })
      .option('write', { describe: 'Accept drift: overwrite the stored gold', type: 'boolean', default: false })
      .option('sufficiency', { describe: 'Replay the oracle under its gold policy (use --no-sufficiency to skip)', type: 'boolean', default: true })
      .option('tracer', { describe: 'What traces the oracle: strace in the container, or eBPF from the host (root; ab-ebpf, built in Docker)', choices: TRACERS, defaultDescription: 'strace' })
      .option('ebpf-backend', {
        describe: "With --tracer ebpf: ab-ebpf (libbpf, built in Docker) or Debian's bpftrace — the same records, to cross-check one with the other",
        choices: EBPF_BACKEND_CHOICES,
        defaultDescription: 'native',
      })
      .option('tracer-fallback', { describe: 'Trace with strace where eBPF is unavailable (recorded in the gold\'s provenance)', type: 'boolean', default: false })
      .option('verbose', { alias: 'v', describe: 'Print every warning', type: 'boolean', default: false })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 gen-gold csv-sales-report', 'Derive and store the gold of one task')
      .example('$0 gen-gold --all --check', 'Show which tasks drifted from their reviewed gold (CI)')
      .example('$0 gen-gold log-triage --runs 3 --minimize --write', 'Three runs, flaky entries, minimal set; accept drift')
      .example('$0 gen-gold --all --check --tracer ebpf', 'Re-derive every gold with the eBPF tracer and compare'),
  handler: async (args) => {
    const { connectDocker } = await import('../../docker/index.ts');
    const { genGold, goldActionOk } = await import('../../oracle/index.ts');

    if (args.check && args.write) throw new AuthbenchError('INVALID_ARGUMENT', '--check and --write contradict each other: --check never writes');
    if (args.task.length === 0 && !args.all) throw new AuthbenchError('INVALID_ARGUMENT', 'name tasks or pass --all');
    if (!Number.isInteger(args.runs) || args.runs < 1) throw new AuthbenchError('INVALID_ARGUMENT', `--runs must be a positive integer, got ${args.runs}`);
    if (args['tracer-fallback'] && args.tracer !== 'ebpf') throw new AuthbenchError('INVALID_ARGUMENT', '--tracer-fallback only applies to --tracer ebpf');
    if (args['ebpf-backend'] !== undefined && args.tracer !== 'ebpf') throw new AuthbenchError('INVALID_ARGUMENT', '--ebpf-backend only applies to --tracer ebpf');
    const build = await parseBuildFlags(args);
    const tasks = await selectTasks(args.tasks, args.all ? [] : args.task);
    const engine = await connectDocker();
    const progress = createProgress({ unit: 'tasks', enabled: !args.json });
    let finished = 0;
    progress.update(0, tasks.length, `deriving ${tasks.length} task(s), ${args.concurrency} at a time`);
    const run = await genGold(engine, tasks, {
      oracleTracesDir: args['oracle-traces'],
      mode: args.check ? 'check' : args.write ? 'accept-drift' : 'keep',
      runs: args.runs,
      sufficiency: args.sufficiency,
      minimize: args.minimize,
      minimizeBudgetMs: args.budget * 1000,
      concurrency: args.concurrency,
      build,
      ...(args.tracer === undefined ? {} : { tracer: args.tracer }),
      tracerFallback: args['tracer-fallback'],
      ...(args['ebpf-backend'] === undefined ? {} : { ebpfBackend: args['ebpf-backend'] }),
      onProgress: (task, m) => progress.detail(chalk.dim(`  ${task}: ${m}`)),
      onTaskDone: (row) => {
        finished += 1;
        const ok = goldActionOk(row.action);
        progress.finish({ done: finished, total: tasks.length, line: itemLine(finished, tasks.length, ok, `${row.task}: ${row.action}`), keep: !ok, status: row.task });
      },
    }).finally(() => progress.stop());
    const { tasks: rows, failures } = run;
    if (run.status !== 'ok') process.exitCode = run.status === 'infra-failed' ? 125 : 1;
    if (run.tracer.kind === 'strace' && run.tracer.fallback !== undefined) {
      process.stderr.write(chalk.yellow(`traced with strace: ${run.tracer.fallback}; recorded in each gold's provenance (tracer_fallback)\n`));
    }

    if (args.json) {
      printJson({ tasks: rows, tracer: run.tracer });
      return;
    }
    const actionCell: Record<GoldAction, string> = {
      written: chalk.green('written'),
      unchanged: chalk.dim('unchanged'),
      checked: chalk.green('no drift'),
      refused: chalk.red('DRIFT (not written; --write accepts)'),
      drift: chalk.red('DRIFT'),
      untrusted: chalk.red('UNTRUSTED (not written)'),
      failed: chalk.yellow('FAILED (infrastructure; see below)'),
    };
    const columns: Column<Row>[] = [
      { header: 'task', value: (r) => r.task },
      { header: 'read', value: (r) => String(r.counts.read), align: 'right' },
      { header: 'write', value: (r) => String(r.counts.write), align: 'right' },
      { header: 'exec', value: (r) => String(r.counts.execute), align: 'right' },
      { header: 'support', value: (r) => String(r.support), align: 'right' },
      { header: 'flaky', value: (r) => String(r.flaky), align: 'right' },
      ...(args.minimize
        ? [{ header: 'minimal', value: (r: Row) => (r.minimal === undefined ? '-' : `${r.minimal.necessary} needed, ${r.minimal.notNeeded} not${r.minimal.budgetExhausted ? ' (budget)' : ''}`) }]
        : []),
      { header: 'sufficient', value: (r) => (r.sufficient === undefined ? chalk.dim('skipped') : r.sufficient ? chalk.green('yes') : chalk.red('NO')) },
      { header: 'warnings', value: (r) => String(r.problems.filter((p) => p.severity === 'warning').length), align: 'right' },
      { header: 'result', value: (r) => actionCell[r.action] },
    ];
    process.stdout.write(renderTable(columns, rows));
    for (const r of rows) {
      // Paths in a diff come from the oracle's trace: whatever the container created.
      if (r.diff !== undefined) process.stdout.write(`\n${safeText(r.diff)}\n`);
      const shown = args.verbose ? r.problems : r.problems.filter((p) => p.severity === 'error');
      for (const p of shown) process.stdout.write(`${safeText(formatProblem(p))}\n`);
    }
    for (const { task, error } of failures) process.stderr.write(`${chalk.red('✗')} ${task}: ${formatAuthbenchError(error)}`);
    if (!args.verbose && rows.some((r) => r.problems.some((p) => p.severity === 'warning'))) {
      process.stdout.write(chalk.dim('(warnings hidden: --verbose shows them)\n'));
    }
  },
};

export const genGoldCommand = command as unknown as CommandModule<object, object>;
