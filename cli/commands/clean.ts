import { createInterface } from 'node:readline/promises';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { CleanReport } from '../../docker/index.ts';
import { printJson, renderTable } from '../table.ts';

interface CleanArgs {
  'dry-run': boolean;
  'keep-base': boolean;
  stale: boolean;
  containers: boolean;
  all: boolean;
  yes: boolean;
  json: boolean;
}

interface Row {
  kind: string;
  id: string;
  name: string;
}

const command: CommandModule<object, CleanArgs> = {
  command: 'clean',
  describe: 'Remove what authbench created in Docker (label authbench.managed=true), nothing else; containers only when the run that started them is gone',
  builder: (y: Argv) =>
    y
      .option('dry-run', { describe: 'List what would be removed', type: 'boolean', default: false })
      .option('keep-base', { describe: 'Keep base images (rebuilding them takes minutes)', type: 'boolean', default: false })
      .option('stale', {
        describe: 'Only images superseded by a newer build of the same repository (older task, family and base generations); no containers',
        type: 'boolean',
        default: false,
      })
      .option('containers', {
        describe: 'Only containers and networks (of runs that are gone, unless --all); no image or volume is touched',
        type: 'boolean',
        default: false,
      })
      .option('all', {
        describe: 'Also the containers and networks of runs still going (or whose owner cannot be checked here); asks first on a terminal',
        type: 'boolean',
        default: false,
      })
      .option('yes', { describe: 'With --all: do not ask', type: 'boolean', default: false })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 clean --dry-run', 'What would go')
      .example('$0 clean', "Leftovers of killed runs and images, keeping running runs' containers and what they use")
      .example('$0 clean --all --yes', 'Everything authbench created, running jobs included')
      .example('$0 clean --containers', 'Only what killed runs left running or stopped; every image stays')
      .example('$0 clean --stale', 'Reclaim disk from earlier generations of task images, keep the current ones')
      .example('$0 clean --keep-base', 'Remove task images and leftover containers, keep authbench/base'),
  handler: async (args) => {
    // Not yargs' `conflicts`: it counts a default as given.
    if (args.containers && args.stale) throw new AuthbenchError('INVALID_ARGUMENT', '--containers and --stale select different things (containers, older images): give one', { field: 'containers' });
    const { connectDocker, cleanManaged, assertCleanSucceeded } = await import('../../docker/index.ts');
    const engine = await connectDocker();
    const options = { keepBase: args['keep-base'], staleOnly: args.stale, orphansOnly: !args.all, containersOnly: args.containers };
    if (args.all && !args['dry-run'] && !args.yes && process.stdin.isTTY) {
      const planned = await cleanManaged(engine, { ...options, dryRun: true });
      if (!(await confirm(`remove ${counts(planned)}, running jobs' containers included?`))) {
        process.stdout.write('nothing removed\n');
        return;
      }
    }
    const report = await cleanManaged(engine, { ...options, dryRun: args['dry-run'] });
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
      process.stdout.write(`${report.dryRun ? 'would remove' : 'removed'} ${counts(report)}\n`);
      if (report.kept.length > 0) {
        const n = (kind: string): number => report.kept.filter((k) => k.kind === kind).length;
        process.stdout.write(
          chalk.dim(`left ${n('container')} container(s) and ${n('network')} network(s) of runs still going or whose owner cannot be checked (another host, or started before authbench recorded owners), and ${n('image')} image(s) and ${n('volume')} volume(s) they use (--all removes them)\n`),
        );
      }
      if (report.skipped > 0) {
        process.stdout.write(chalk.dim(`left ${report.skipped} resource(s) that only inherited authbench labels from an authbench image\n`));
      }
    }
    assertCleanSucceeded(report);
  },
};

function counts(report: Pick<CleanReport, 'containers' | 'images' | 'volumes' | 'networks'>): string {
  return `${report.containers.length} container(s), ${report.images.length} image(s), ${report.volumes.length} volume(s), ${report.networks.length} network(s)`;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const cleanCommand = command as unknown as CommandModule<object, object>;
