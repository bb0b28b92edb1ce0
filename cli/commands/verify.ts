import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { BuildResult } from '../../docker/index.ts';
import type { TaskVerification, Verdict } from '../../validators/index.ts';
import { hostAccessLine, parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { safeText } from '../output-text.ts';
import { selectTasks } from '../select-tasks.ts';
import { createProgress, itemLine } from '../progress.ts';
import { formatAuthbenchError } from '../render-error.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

/** Build failures that belong to one task (its Dockerfile or its family base), not to the daemon. */
const BUILD_CODES: ReadonlySet<string> = new Set(['IMAGE_BUILD_FAILED', 'BASE_IMAGE_FAILED']);

interface VerifyArgs extends BuildFlagArgs {
  task: string[];
  tasks: string;
  concurrency: number;
  noop: boolean;
  json: boolean;
}

interface Row extends TaskVerification {
  cached: boolean;
}

const verdictCell = (v: Verdict | undefined, good: boolean): string => {
  if (v === undefined) return chalk.dim('-');
  const word = v.passed ? 'pass' : 'fail';
  return v.passed === good ? chalk.green(word) : chalk.red(word.toUpperCase());
};

const command: CommandModule<object, VerifyArgs> = {
  command: 'verify [task..]',
  describe: 'Build tasks and run their controls: oracle → utility passes and attack does not fire; attack_smoke.sh → attack fires',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .positional('task', { describe: 'Task ids or folders (default: every task under --tasks)', type: 'string', array: true, default: [] })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('concurrency', { alias: 'n', describe: 'Tasks verified in parallel', type: 'number', default: 3 })
      .option('noop', { describe: 'Also check that an untouched environment fails the utility validator', type: 'boolean', default: false })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 verify', 'Every bundled task: build, oracle, validators, attack smoke')
      .example('$0 verify csv-sales-report --noop', 'One task, including the do-nothing negative control')
      .example('$0 verify --tasks my-suite -n 4 --json', 'Another suite, four at a time, JSON output')
      .example('$0 verify --tasks ../authbench/tasks --build-ca corp-ca.pem some-task', 'Builds behind a TLS-intercepting proxy (the CA is not kept in the image)'),
  handler: async (args) => {
    const { connectDocker } = await import('../../docker/index.ts');
    const { buildTaskImage } = await import('../../taskenv/index.ts');
    const { verifyTask } = await import('../../validators/index.ts');
    const { mapPool } = await import('../../core/index.ts');

    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--concurrency must be a positive integer, got ${args.concurrency}`);
    }
    const flags = await parseBuildFlags(args);
    const tasks = await selectTasks(args.tasks, args.task);

    const engine = await connectDocker();
    const progress = createProgress({ unit: 'tasks', enabled: !args.json });
    const log = (line: string): void => progress.detail(line);
    // Builds go one at a time (one daemon, and a cold build saturates both cores); runs go in parallel.
    // A task whose image does not build is reported and skipped; the others are still verified.
    const built: { task: (typeof tasks)[number]; image: BuildResult }[] = [];
    const buildErrors: { taskId: string; error: AuthbenchError }[] = [];
    for (const task of tasks) {
      try {
        const image = await buildTaskImage(engine, task, { ...flags, onProgress: (line) => log(chalk.dim(`  ${task.id} | ${safeText(line)}`)) });
        log(`${image.built ? chalk.green('built ') : chalk.dim('cached')} ${task.id} ${chalk.dim(image.tag)}`);
        const access = hostAccessLine([image.hostAccess]);
        if (access !== undefined) log(chalk.dim(`  ${task.id} | ${access}`));
        built.push({ task, image });
      } catch (e) {
        if (!(e instanceof AuthbenchError) || !BUILD_CODES.has(e.code)) throw e;
        progress.log(`${chalk.red('BUILD FAILED')} ${task.id}`);
        buildErrors.push({ taskId: task.id, error: e });
      }
    }
    const runId = `verify-${Date.now().toString(36)}`;
    let finished = 0;
    progress.update(0, built.length, `verifying ${built.length} task(s), ${args.concurrency} at a time`);
    const rows: Row[] = await mapPool(built, args.concurrency, async ({ task, image }) => {
      const v = await verifyTask(engine, task, image.tag, { checkNoop: args.noop, runId });
      finished += 1;
      const ok = v.failures.length === 0;
      progress.finish({ done: finished, total: built.length, line: itemLine(finished, built.length, ok, task.id), keep: !ok, status: task.id });
      return { ...v, cached: !image.built };
    }).finally(() => progress.stop());

    const failed = rows.filter((r) => r.failures.length > 0);
    // A build failure says nothing about the task's controls: infrastructure (125) wins over a failed check (1).
    if (buildErrors.length > 0) process.exitCode = 125;
    else if (failed.length > 0) process.exitCode = 1;
    if (args.json) {
      printJson({
        tasks: rows,
        buildErrors: buildErrors.map(({ taskId, error }) => ({ taskId, code: error.code, message: error.message, details: error.details })),
        dockerBuildCalls: engine.stats.buildCalls,
        ok: failed.length === 0 && buildErrors.length === 0,
      });
      return;
    }
    const columns: Column<Row>[] = [
      { header: 'task', value: (r) => r.taskId },
      { header: 'dataset', value: (r) => r.dataset },
      { header: 'image', value: (r) => (r.cached ? chalk.dim('cached') : 'built') },
      { header: 'oracle s', value: (r) => ((r.oracle.exec?.durationMs ?? 0) / 1000).toFixed(1), align: 'right' },
      { header: 'utility', value: (r) => verdictCell(r.oracle.utility, true) },
      { header: 'attack (oracle)', value: (r) => verdictCell(r.oracle.attack, false) },
      { header: 'attack (smoke)', value: (r) => verdictCell(r.smoke.attack, true) },
      ...(args.noop ? [{ header: 'utility (no-op)', value: (r: Row) => verdictCell(r.noop.utility, false) }] : []),
      { header: 'verdict', value: (r) => (r.failures.length === 0 ? chalk.green('ok') : chalk.red('FAIL')) },
    ];
    process.stdout.write(`\n${renderTable(columns, rows)}`);
    for (const r of failed) for (const f of r.failures) process.stdout.write(`${chalk.red('✗')} ${r.taskId}: ${safeText(f)}\n`);
    for (const { taskId, error } of buildErrors) process.stderr.write(`${chalk.red('✗')} ${taskId}: ${formatAuthbenchError(error)}`);
    const unbuilt = buildErrors.length > 0 ? `, ${buildErrors.length} not built` : '';
    process.stdout.write(
      `${rows.length - failed.length}/${tasks.length} tasks sound${unbuilt}; docker build calls this run: ${engine.stats.buildCalls}` +
        ` (${engine.stats.cacheHits} images reused)\n`,
    );
  },
};

export const verifyCommand = command as unknown as CommandModule<object, object>;
