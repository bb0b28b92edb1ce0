import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import { formatAuthbenchError } from '../render-error.ts';
import { selectTasks } from '../select-tasks.ts';
import { printJson, renderTable, type Column } from '../table.ts';

interface BuildArgs {
  task: string[];
  tasks: string;
  'base-map': string[];
  'build-arg': string[];
  json: boolean;
}

interface Row {
  task: string;
  tag: string;
  built: boolean;
  seconds: number;
  substitutions: { from: string; to: string }[];
  error?: string;
}

/** `K=V` flags; the value may itself contain `=`. */
function keyValues(values: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new AuthbenchError('INVALID_ARGUMENT', `--${flag} expects KEY=VALUE, got ${JSON.stringify(v)}`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

const command: CommandModule<object, BuildArgs> = {
  command: 'build [task..]',
  describe: 'Build task images (cached by content hash; FROM substituted by the base-image map)',
  builder: (y: Argv) =>
    y
      .positional('task', { describe: 'Task ids or folders (default: every task under --tasks)', type: 'string', array: true, default: [] })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: 'tasks' })
      .option('base-map', {
        describe: 'Extra FROM substitution PATTERN=IMAGE, checked before the map file (repeatable)',
        type: 'string',
        array: true,
        default: [],
      })
      .option('build-arg', { describe: 'Docker build argument KEY=VALUE (repeatable)', type: 'string', array: true, default: [] })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 build', 'Build every task image under tasks/')
      .example('$0 build hello-world --base-map "node:*=authbench/base:bookworm"', 'Build one task, mapping node images too')
      .example('$0 build --tasks my-tasks --build-arg PY=3.11 --json', 'Another suite, a build arg, JSON output'),
  handler: async (args) => {
    const { connectDocker, parseBaseMapFlag } = await import('../../docker/index.ts');
    const { buildTaskImage } = await import('../../taskenv/index.ts');

    const extraEntries = args['base-map'].map((flag) => {
      const entry = parseBaseMapFlag(flag);
      if (entry === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--base-map expects PATTERN=IMAGE, got ${JSON.stringify(flag)}`);
      return entry;
    });
    const buildArgs = keyValues(args['build-arg'], 'build-arg');
    const tasks = await selectTasks(args.tasks, args.task);

    const engine = await connectDocker();
    const rows: Row[] = [];
    // A task whose image fails to build is reported and the others still build.
    for (const task of tasks) {
      const started = performance.now();
      try {
        const result = await buildTaskImage(engine, task, {
          baseMapEntries: extraEntries,
          buildArgs,
          ...(args.json ? {} : { onProgress: (line: string) => process.stderr.write(`${chalk.dim(`  ${task.id} | ${line}`)}\n`) }),
        });
        rows.push({ task: task.id, tag: result.tag, built: result.built, seconds: (performance.now() - started) / 1000, substitutions: [...result.substitutions] });
      } catch (e) {
        if (!(e instanceof AuthbenchError) || e.code !== 'IMAGE_BUILD_FAILED') throw e;
        process.exitCode = 125;
        process.stderr.write(formatAuthbenchError(e));
        rows.push({ task: task.id, tag: '', built: false, seconds: (performance.now() - started) / 1000, substitutions: [], error: e.message });
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
      { header: 'substitutions', value: (r) => r.substitutions.map((s) => `${s.from} → ${s.to}`).join(', ') || chalk.dim('-') },
    ];
    process.stdout.write(renderTable(columns, rows));
    process.stdout.write(`docker build calls: ${engine.stats.buildCalls}\n`);
  },
};

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const buildCommand = command as unknown as CommandModule<object, object>;
