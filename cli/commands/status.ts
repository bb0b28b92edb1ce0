import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import type { StatusCounts } from '../../evaluation/index.ts';
import { intFlag, positiveFlag } from '../flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable, type Column } from '../table.ts';

interface StatusArgs {
  job: string;
  shards: number | undefined;
  'claim-stale': number;
  json: boolean;
}

const ageText = (ms: number): string => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

const command: CommandModule<object, StatusArgs> = {
  command: 'status <job>',
  describe: 'Where an eval job stands: planned, done, failed (infrastructure), claimed (running), stale claims and pending rollouts, per shard and in total',
  builder: (y: Argv) =>
    y
      .positional('job', { describe: 'The job folder (jobs/<name>)', type: 'string', demandOption: true })
      .option('shards', { describe: 'Count per shard of N (default: the N its results and claims name)', type: 'number', coerce: intFlag('shards', 1) })
      .option('claim-stale', { describe: 'Seconds without a heartbeat after which a claim counts as stale (as eval --claim-stale)', type: 'number', default: 60, coerce: positiveFlag('claim-stale') })
      .option('json', { describe: 'Print the status as JSON', type: 'boolean', default: false })
      .example('$0 status jobs/big', 'Progress of a job run by several shards'),
  handler: async (args) => {
    const { readJobStatus } = await import('../../evaluation/index.ts');
    const status = await readJobStatus(args.job, { staleMs: args['claim-stale'] * 1000, ...(args.shards === undefined ? {} : { shards: args.shards }) });
    if (args.json) {
      printJson({ job: args.job, shards: status.shards ?? null, rows: status.rows, total: status.total, claims: status.claims });
      return;
    }
    const n = (key: keyof Omit<StatusCounts, 'shard'>, paint: (s: string) => string = (s) => s): Column<StatusCounts> => ({
      header: key,
      value: (r) => (r[key] === 0 ? chalk.dim('0') : paint(String(r[key]))),
      align: 'right',
    });
    const columns: Column<StatusCounts>[] = [{ header: 'shard', value: (r) => r.shard }, n('planned'), n('done', chalk.green), n('claimed'), n('stale', chalk.yellow), n('failed', chalk.yellow), n('pending')];
    process.stdout.write(renderTable(columns, [...status.rows, status.total]));
    for (const c of status.claims) {
      const who = `${safeText(c.host ?? '?')} pid ${c.pid ?? '?'}${c.shard === null ? '' : ` shard ${safeText(c.shard)}`}`;
      const line = `${c.stale ? chalk.yellow('stale  ') : 'claimed'} ${safeText(c.rollout)} by ${who}, heartbeat ${ageText(c.heartbeatAgeMs)} ago`;
      process.stdout.write(`${line}\n`);
    }
    if (status.total.stale > 0) process.stdout.write(chalk.yellow(`${status.total.stale} stale claim(s): a crashed process's rollouts; any shard or --resume of the job takes them over\n`));
  },
};

export const statusCommand = command as unknown as CommandModule<object, object>;
