import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { printJson, renderTable } from '../table.ts';

interface CleanArgs {
  'dry-run': boolean;
  'keep-base': boolean;
  stale: boolean;
  json: boolean;
}

interface Row {
  kind: string;
  id: string;
  name: string;
}

const command: CommandModule<object, CleanArgs> = {
  command: 'clean',
  describe: 'Remove containers, images and volumes authbench created (label authbench.managed=true), nothing else',
  builder: (y: Argv) =>
    y
      .option('dry-run', { describe: 'List what would be removed', type: 'boolean', default: false })
      .option('keep-base', { describe: 'Keep base images (rebuilding them takes minutes)', type: 'boolean', default: false })
      .option('stale', {
        describe: 'Only images superseded by a newer build of the same repository (older task, family and base generations); no containers',
        type: 'boolean',
        default: false,
      })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 clean --dry-run', 'What would go')
      .example('$0 clean --stale', 'Reclaim disk from earlier generations of task images, keep the current ones')
      .example('$0 clean --keep-base', 'Remove task images and leftover containers, keep authbench/base'),
  handler: async (args) => {
    const { connectDocker, cleanManaged, assertCleanSucceeded } = await import('../../docker/index.ts');
    const engine = await connectDocker();
    const report = await cleanManaged(engine, { dryRun: args['dry-run'], keepBase: args['keep-base'], staleOnly: args.stale });
    if (args.json) {
      printJson(report);
    } else {
      const rows: Row[] = [
        ...report.containers.map((c) => ({ kind: 'container', id: c.id.slice(0, 12), name: `${c.name} (${c.image})` })),
        ...report.images.map((i) => ({
          kind: i.kind,
          id: i.id.replace(/^sha256:/, '').slice(0, 12),
          name: i.tags.join(', ') || chalk.dim('<untagged>'),
        })),
        ...report.volumes.map((v) => ({ kind: 'volume', id: v.replace(/^authbench-harness-/, '').slice(0, 12), name: v })),
        ...report.networks.map((n) => ({ kind: 'network', id: n.replace(/^authbench-net-/, '').slice(0, 12), name: n })),
      ];
      if (rows.length > 0) {
        process.stdout.write(
          renderTable(
            [
              { header: 'kind', value: (r) => r.kind },
              { header: 'id', value: (r) => r.id },
              { header: 'name', value: (r) => r.name },
            ],
            rows,
          ),
        );
      }
      const verb = report.dryRun ? 'would remove' : 'removed';
      process.stdout.write(`${verb} ${report.containers.length} container(s), ${report.images.length} image(s), ${report.volumes.length} volume(s), ${report.networks.length} network(s)\n`);
      if (report.skipped > 0) {
        process.stdout.write(chalk.dim(`left ${report.skipped} resource(s) that only inherited authbench labels from an authbench image\n`));
      }
    }
    assertCleanSucceeded(report);
  },
};

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const cleanCommand = command as unknown as CommandModule<object, object>;
