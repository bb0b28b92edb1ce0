import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { printJson, renderTable } from '../table.ts';

interface BaseBuildArgs {
  force: boolean;
  mirror: string | undefined;
  json: boolean;
}

const baseBuildCommand: CommandModule<object, BaseBuildArgs> = {
  command: 'build',
  describe: 'Build authbench/base:bookworm with debootstrap from the apt mirror (needs root; skipped when up to date)',
  builder: (y: Argv) =>
    y
      .option('force', { describe: 'Rebuild even if the image matches the recipe', type: 'boolean', default: false })
      .option('mirror', {
        describe: 'Debian mirror URL (default: $AUTHBENCH_MIRROR, else the one apt uses on this machine)',
        type: 'string',
      })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 base build', 'Build the base image if missing or outdated')
      .example('$0 base build --force --mirror http://mirror.example/debian', 'Rebuild from a specific mirror'),
  handler: async (args) => {
    const { connectDocker, ensureBaseImages } = await import('../../docker/index.ts');
    const engine = await connectDocker();
    const started = performance.now();
    const results = await ensureBaseImages(engine, {
      force: args.force,
      ...(args.mirror === undefined ? {} : { mirror: args.mirror }),
      ...(args.json ? {} : { onProgress: (line: string) => process.stderr.write(`${chalk.dim(`  ${line}`)}\n`) }),
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
          { header: 'seconds', value: () => seconds.toFixed(1), align: 'right' },
        ],
        results,
      ),
    );
  },
};

export const baseCommand: CommandModule<object, object> = {
  command: 'base',
  describe: 'Offline base images (FROM substitutes where no registry is reachable)',
  builder: (y: Argv) =>
    y
      .command(baseBuildCommand)
      .demandCommand(1, 'Name a subcommand: build.')
      .example('$0 base build', 'Build authbench/base:bookworm'),
  handler: () => {},
};
