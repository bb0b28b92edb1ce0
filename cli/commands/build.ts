import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { BaseBuildRecord, BuildHostRecord, SubstitutionRecord, Translation } from '../../docker/index.ts';
import { hostAccessLine, parseBuildFlags, substitutionCell, translationsCell, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { formatAuthbenchError } from '../render-error.ts';
import { safeText } from '../output-text.ts';
import { selectTasks } from '../select-tasks.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface BuildArgs extends BuildFlagArgs {
  task: string[];
  tasks: string;
  json: boolean;
}

interface Row {
  task: string;
  tag: string;
  built: boolean;
  seconds: number;
  /** The task's own FROM substitutions. */
  substitutions: SubstitutionRecord[];
  /** Those its base images were built with (a dataset recipe's ubuntu → Debian). */
  inherited: SubstitutionRecord[];
  translations: Translation[];
  /** Dataset recipes and offline bases the build needed. */
  bases: BaseBuildRecord[];
  /** What `docker build` got from the host (names only), when it was called with some. */
  hostAccess?: BuildHostRecord;
  error?: string;
}

/** Build failures that belong to one task (its Dockerfile, its base), not to the daemon. */
const BUILD_CODES: ReadonlySet<string> = new Set(['IMAGE_BUILD_FAILED', 'IMAGE_NOT_FOUND', 'BASE_IMAGE_FAILED']);

const command: CommandModule<object, BuildArgs> = {
  command: 'build [task..]',
  describe:
    'Build task images (cached by content hash; FROM substituted by dataset base recipes and the base-image map; heredocs and offline package installs translated)',
  builder: (y: Argv) =>
    withBuildFlags(
      y
        .positional('task', { describe: 'Task ids or folders (default: every task under --tasks)', type: 'string', array: true, default: [] })
        .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
        .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false }),
    )
      .example('$0 build', 'Build every task image under tasks/')
      .example('$0 build --tasks ../authbench/tasks', "A dataset's tasks: its base recipes are built on demand")
      .example('$0 build --base-map "node:*=authbench/base:bookworm" hello-world', 'Map node images too, build one task')
      .example('$0 build --tasks my-tasks --build-arg PY=3.11 --json', 'Another suite, a build arg, JSON output')
      .example('$0 build --build-ca corp-ca.pem --build-proxy-from-env', 'Behind a TLS-intercepting proxy: RUN steps trust the CA and use the proxy, the image keeps neither'),
  handler: async (args) => {
    const { connectDocker } = await import('../../docker/index.ts');
    const { buildTaskImage } = await import('../../taskenv/index.ts');

    const flags = await parseBuildFlags(args);
    const tasks = await selectTasks(args.tasks, args.task);

    const engine = await connectDocker();
    const rows: Row[] = [];
    // A task whose image fails to build is reported and the others still build.
    for (const task of tasks) {
      const started = performance.now();
      try {
        const result = await buildTaskImage(engine, task, {
          ...flags,
          ...(args.json ? {} : { onProgress: (line: string) => process.stderr.write(`${chalk.dim(`  ${task.id} | ${safeText(line)}`)}\n`) }),
        });
        rows.push({
          task: task.id,
          tag: result.tag,
          built: result.built,
          seconds: (performance.now() - started) / 1000,
          substitutions: [...result.substitutions],
          inherited: [...(result.inherited ?? [])],
          translations: [...(result.translations ?? [])],
          bases: [...(result.bases ?? [])],
          ...(result.hostAccess === undefined ? {} : { hostAccess: result.hostAccess }),
        });
      } catch (e) {
        if (!(e instanceof AuthbenchError) || !BUILD_CODES.has(e.code)) throw e;
        process.exitCode = 125;
        process.stderr.write(formatAuthbenchError(e));
        rows.push({
          task: task.id,
          tag: '',
          built: false,
          seconds: (performance.now() - started) / 1000,
          substitutions: [],
          inherited: [],
          translations: [],
          bases: [],
          error: e.message,
        });
      }
    }

    if (args.json) {
      printJson({ images: rows, dockerBuildCalls: engine.stats.buildCalls, cacheHits: engine.stats.cacheHits });
      return;
    }
    const columns: Column<Row>[] = [
      { header: 'task', value: (r) => r.task },
      { header: 'image', value: (r) => r.tag },
      { header: 'status', value: (r) => (r.error !== undefined ? chalk.red('FAILED') : r.built ? chalk.green('built') : chalk.dim('cached')) },
      { header: 'seconds', value: (r) => r.seconds.toFixed(1), align: 'right' },
      {
        header: 'substitutions (base ← its own)',
        value: (r) => [...r.substitutions, ...r.inherited].map(substitutionCell).join(' ← ') || chalk.dim('-'),
      },
      { header: 'translated', value: (r) => translationsCell(r.translations) },
    ];
    process.stdout.write(renderTable(columns, rows));
    // Each base build once, with what it needed; then every flagged translation.
    const bases = new Map<string, BaseBuildRecord>();
    for (const r of rows) for (const b of r.bases) if (!bases.has(b.image) || b.built) bases.set(b.image, b);
    for (const b of bases.values()) {
      process.stdout.write(`${chalk.dim('base')} ${b.image} ${chalk.dim(`(${b.recipe})`)} ${b.built ? chalk.green('built') : chalk.dim('cached')}\n`);
      for (const t of b.translations) process.stdout.write(`  ${b.recipe}:${t.line} ${t.flagged ? chalk.yellow(safeText(t.detail)) : chalk.dim(safeText(t.detail))}\n`);
    }
    for (const r of rows) for (const t of r.translations) process.stdout.write(`  ${r.task}:${t.line} ${t.flagged ? chalk.yellow(safeText(t.detail)) : chalk.dim(safeText(t.detail))}\n`);
    const access = hostAccessLine(rows.map((r) => r.hostAccess));
    if (access !== undefined) process.stdout.write(`${chalk.dim(access)}\n`);
    process.stdout.write(`docker build calls: ${engine.stats.buildCalls}\n`);
  },
};

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const buildCommand = command as unknown as CommandModule<object, object>;
