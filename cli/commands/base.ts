import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import { parseBuildFlags, substitutionCell, translationsCell, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable } from '../table.ts';

interface BaseBuildArgs extends BuildFlagArgs {
  force: boolean;
  mirror: string | undefined;
  recipe: string[];
  all: boolean;
  dataset: string | undefined;
  json: boolean;
}

const command: CommandModule<object, BaseBuildArgs> = {
  command: 'build',
  describe:
    'Build the offline base images (debootstrap from the apt mirror; needs root; skipped when up to date), or with --dataset the base images a dataset defines',
  builder: (y: Argv) =>
    withBuildFlags(
      y
        .option('force', { describe: 'Rebuild offline bases even if the image matches the recipe', type: 'boolean', default: false })
        .option('mirror', {
          describe: 'Debian mirror URL (default: $AUTHBENCH_MIRROR, else the one apt uses on this machine)',
          type: 'string',
        })
        .option('recipe', {
          describe: 'Offline base recipe to build (repeatable; default bookworm): bookworm, python3.11-bookworm, python3.13-trixie',
          type: 'string',
          array: true,
          default: [],
        })
        .option('all', { describe: 'Every offline base recipe', type: 'boolean', default: false })
        .option('dataset', {
          describe: "A dataset folder (or any folder inside it): build every docker/bases/<family>/<variant>.Dockerfile it has, substituting FROM like task builds",
          type: 'string',
        })
        .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false }),
    )
      .example('$0 base build', 'Build authbench/base:bookworm if missing or outdated')
      .example('$0 base build --all', 'Every offline base, the python ones included')
      .example('$0 base build --dataset ../authbench', "A dataset's own base images (AuthBench's plain bases)")
      .example('$0 base build --force --mirror http://mirror.example/debian', 'Rebuild from a specific mirror'),
  handler: async (args) => {
    const docker = await import('../../docker/index.ts');
    const engine = await docker.connectDocker();
    const progress = args.json ? undefined : (line: string): void => void process.stderr.write(`${chalk.dim(`  ${safeText(line)}`)}\n`);
    const started = performance.now();

    if (args.dataset !== undefined) {
      if (args.dataset === '') throw new AuthbenchError('INVALID_ARGUMENT', '--dataset expects a folder');
      if (args.recipe.length > 0 || args.all) throw new AuthbenchError('INVALID_ARGUMENT', '--dataset builds the dataset recipes; drop --recipe/--all');
      const flags = await parseBuildFlags(args);
      const rows = await docker.buildDatasetBases(engine, args.dataset, { ...flags, ...(progress === undefined ? {} : { onProgress: progress }) });
      const seconds = (performance.now() - started) / 1000;
      if (rows.some((r) => r.status === 'failed')) process.exitCode = 125;
      if (args.json) {
        printJson({ recipes: rows, seconds, dockerBuildCalls: engine.stats.buildCalls });
        return;
      }
      const status = (s: (typeof rows)[number]['status']): string =>
        s === 'built' ? chalk.green('built') : s === 'cached' ? chalk.dim('cached') : s === 'unsupported' ? chalk.yellow('unsupported offline') : chalk.red('FAILED');
      process.stdout.write(
        renderTable(
          [
            { header: 'recipe', value: (r) => r.recipe },
            { header: 'image', value: (r) => r.image ?? chalk.dim(r.product) },
            { header: 'status', value: (r) => status(r.status) },
            { header: 'seconds', value: (r) => r.seconds.toFixed(1), align: 'right' },
            { header: 'substitutions', value: (r) => r.substitutions.map(substitutionCell).join('; ') || chalk.dim('-') },
            { header: 'translated', value: (r) => translationsCell(r.translations) },
          ],
          rows,
        ),
      );
      for (const r of rows) {
        if (r.reason !== undefined) process.stdout.write(`${r.status === 'failed' ? chalk.red('✗') : chalk.yellow('!')} ${r.recipe}: ${safeText(r.reason)}\n`);
        for (const t of r.translations) process.stdout.write(`  ${r.recipe}:${t.line} ${t.flagged ? chalk.yellow(safeText(t.detail)) : chalk.dim(safeText(t.detail))}\n`);
      }
      const made = rows.flatMap((r) => r.bases).filter((b) => !b.image.includes('dataset-base'));
      for (const b of made) if (b.built) process.stdout.write(`${chalk.dim('offline base')} ${b.image} built\n`);
      process.stdout.write(`${rows.length} recipes in ${seconds.toFixed(1)} s; docker build calls: ${engine.stats.buildCalls}\n`);
      return;
    }

    const recipes = args.all ? docker.OFFLINE_BASES.map((r) => r.name) : args.recipe.length > 0 ? args.recipe : undefined;
    const results = await docker.ensureBaseImages(engine, {
      force: args.force,
      ...(recipes === undefined ? {} : { recipes }),
      ...(args.mirror === undefined ? {} : { mirror: args.mirror }),
      ...(progress === undefined ? {} : { onProgress: progress }),
    });
    const seconds = (performance.now() - started) / 1000;
    if (args.json) {
      printJson({ images: results, seconds });
      return;
    }
    process.stdout.write(
      renderTable(
        [
          { header: 'image', value: (r) => r.image },
          { header: 'id', value: (r) => r.imageId.replace(/^sha256:/, '').slice(0, 12) },
          { header: 'status', value: (r) => (r.built ? chalk.green('built') : chalk.dim('up to date')) },
          { header: 'recipe', value: (r) => r.recipeHash.slice(0, 16) },
          { header: 'seconds', value: (r) => r.seconds.toFixed(1), align: 'right' },
        ],
        results,
      ),
    );
  },
};

export const baseCommand: CommandModule<object, object> = {
  command: 'base',
  describe: 'Base images: offline FROM substitutes (debootstrap) and the base images a dataset defines',
  builder: (y: Argv) =>
    y
      .command(command as unknown as CommandModule<object, object>)
      .demandCommand(1, 'Name a subcommand: build.')
      .example('$0 base build', 'Build authbench/base:bookworm')
      .example('$0 base build --dataset ../authbench', "Build a dataset's base images"),
  handler: () => {},
};
