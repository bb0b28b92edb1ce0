import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import type { Comparison } from '../../stats/index.ts';
import { printJson, renderTable } from '../table.ts';

interface CompareArgs {
  jobs: string[];
  a: string;
  b: string;
  metric: string[];
  seed: number;
  resamples: number;
  json: boolean;
}

type Row = string[];

function table(headers: readonly string[], rows: readonly Row[]): string {
  return renderTable(
    headers.map((header, i) => ({ header, value: (r: Row) => r[i] ?? '', align: i < 2 ? ('left' as const) : ('right' as const) })),
    rows,
  );
}

async function printComparison(c: Comparison): Promise<void> {
  const { interval, num, verdictLabel } = await import('../../report/index.ts');
  const out = (s: string): boolean => process.stdout.write(s);
  const pct = (x: number | null): string => (x === null ? 'N/A' : `${(x * 100).toFixed(1)}%`);
  const { defense_a: a, defense_b: b } = c;
  out(chalk.bold(`${a} (A, ${c.n_rows_a} rollouts) vs ${b} (B, ${c.n_rows_b} rollouts)`));
  out(chalk.dim(` — Δ = B − A; ${Math.round(c.bootstrap.level * 100)}% bootstrap, ${c.bootstrap.resamples} resamples, seed ${c.bootstrap.seed}\n\n`));
  out(
    table(
      ['metric', 'stage', 'pairs', 'unpaired', 'mean A', 'mean B', 'Δ', 'pair CI', 'cluster CI', 'verdict', 'B>A / A>B / ='],
      c.metrics.flatMap((m) =>
        m.stages.map((s) => [
          m.metric,
          s.stage,
          String(s.n_pairs),
          String(s.unpaired.only_a + s.unpaired.only_b + s.unpaired.na_a + s.unpaired.na_b),
          num(s.mean_a),
          num(s.mean_b),
          num(s.delta),
          s.pair_ci === null ? '–' : interval(s.pair_ci),
          s.cluster_ci === null ? '–' : interval(s.cluster_ci),
          verdictLabel(s.verdict, a, b),
          `${pct(s.win_rate.share_b_higher)} / ${pct(s.win_rate.share_a_higher)} / ${pct(s.win_rate.share_equal)}`,
        ]),
      ),
    ),
  );

  out(chalk.bold('\nStage contribution to the all-stage gap\n'));
  out(
    table(
      ['metric', 'stage', 'pairs', 'weight', 'gap', 'weighted gap', 'share'],
      c.metrics.flatMap((m) => m.stage_contribution.stages.map((s) => [m.metric, s.stage, String(s.n), num(s.weight), num(s.gap), num(s.weighted_gap), pct(s.share)])),
    ),
  );

  const zero = c.metrics.flatMap((m) => m.zero_event.map((z) => [m.metric, z.stage ?? 'all', z.defense, String(z.n), String(z.bound.n_clusters), num(z.bound.exact), num(z.bound.rule_of_three)]));
  out(chalk.bold('\nZero-event upper bounds') + chalk.dim(' (metric 0 in every applicable rollout; clusters are the units)\n'));
  out(zero.length === 0 ? chalk.dim('none: every stratum had an event\n') : table(['metric', 'stage', 'defense', 'n', 'clusters', 'exact', 'rule of three'], zero));

  out(chalk.bold('\nSeed variance\n'));
  out(
    table(
      ['metric', 'stage', 'defense', 'scenarios', 'multi-seed', 'within', 'between', 'seeds'],
      c.metrics.flatMap((m) =>
        m.seed_variance.map((v) => [
          m.metric,
          v.stage,
          v.defense,
          String(v.n_scenarios),
          String(v.n_scenarios_multi_seed),
          num(v.within_scenario_variance),
          num(v.between_scenario_variance),
          String(v.seed_means.n_seeds),
        ]),
      ),
    ),
  );

  const d = c.trajectory_divergence;
  out(chalk.bold('\nTrajectory divergence') + chalk.dim(' (equal committed_harm, different trace projection)\n'));
  if (d === null) out(chalk.dim('N/A: no rollout carries committed_harm\n'));
  else
    out(
      table(
        ['scope', 'pairs', 'equal outcome', 'diverged', 'rate', 'cluster CI'],
        [d.all, ...d.by_stage].map((t) => [
          'stage' in t ? String(t.stage) : 'all',
          String(t.n_pairs),
          String(t.n_equal_outcome),
          String(t.n_diverged),
          num(t.rate),
          t.ci === null ? '–' : interval(t.ci),
        ]),
      ),
    );

  const den = c.denominator_sensitivity;
  out(chalk.bold('\nDenominator sensitivity') + chalk.dim(' (blast radius: realized vs fixed-maximum denominator, paired Δ)\n'));
  if (den === null) out(chalk.dim('N/A: no rollout carries blast_radius_raw and reachable_nodes\n'));
  else
    out(
      table(
        ['scope', 'pairs', 'Δ realized', 'Δ fixed max'],
        den.scopes.map((s) => [s.stage ?? 'all', String(s.realized.n_pairs), num(s.realized.paired_delta), num(s.fixed_max.paired_delta)]),
      ),
    );
}

const command: CommandModule<object, CompareArgs> = {
  command: 'compare <jobs..>',
  describe: 'Every paired statistic for two defenses over eval jobs: CIs, win rates, stage contribution, zero-event bounds, divergence',
  builder: (y: Argv) =>
    y
      .positional('jobs', { describe: 'Job folders written by `authbench eval`', type: 'string', array: true, demandOption: true })
      .option('a', { describe: 'Defense label A (the reference)', type: 'string', demandOption: true })
      .option('b', { describe: 'Defense label B; deltas are B − A', type: 'string', demandOption: true })
      .option('metric', { describe: 'Metric to compare (repeatable; default: every stage metric and propagation)', type: 'string', array: true, default: [] })
      .option('seed', { describe: 'Bootstrap seed', type: 'number', default: 0 })
      .option('resamples', { describe: 'Bootstrap resamples per interval', type: 'number', default: 2000 })
      .option('json', { describe: 'Print the comparison as JSON', type: 'boolean', default: false })
      .example('$0 compare jobs/run1 -a none -b tool-boundary', 'The positive control against kernel enforcement')
      .example('$0 compare jobs/run1 -a tool-boundary -b intent-ledger --metric committed_harm --resamples 10000', 'One metric, more resamples')
      .example('$0 compare jobs/run1 -a tool-boundary@gold -b tool-boundary@generated --json', 'Two policy sources under one defense, JSON out'),
  handler: async (args) => {
    const { comparePair, loadJobs, toRows } = await import('../../report/index.ts');
    const jobs = await loadJobs(args.jobs);
    const comparison = comparePair(toRows(jobs.results), args.a, args.b, {
      seed: args.seed,
      resamples: args.resamples,
      ...(args.metric.length === 0 ? {} : { metrics: args.metric }),
    });
    if (args.json) {
      printJson(comparison);
      return;
    }
    await printComparison(comparison);
  },
};

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const compareCommand = command as unknown as CommandModule<object, object>;
