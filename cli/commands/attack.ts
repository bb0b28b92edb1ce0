import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import type { Qualification, QualifyStageResult, QueryRecord, SearchRun, TransferReport, TransferRow } from '../../attack/index.ts';
import { AuthbenchError } from '../../core/index.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';
import { intFlag, listFlag } from '../flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable, type Column } from '../table.ts';

interface SearchArgs {
  model: string | undefined;
  'attacker-model': string | undefined;
  'attacker-base-url': string | undefined;
  'seed-wording': string | undefined;
  strategy: string | string[] | undefined;
  roots: number | undefined;
  branching: number | undefined;
  width: number | undefined;
  depth: number | undefined;
  restarts: number | undefined;
  'max-queries': number | undefined;
  seed: number;
  'max-turns': number;
  freeze: number;
  family: string | string[] | undefined;
  instances: number;
  'dev-families': number | undefined;
  'audit-instances': number;
  'jobs-dir': string;
  'job-name': string | undefined;
  'keep-images': boolean;
  json: boolean;
}

function queryLine(q: QueryRecord): string {
  const stage = q.stage === null ? chalk.red(`failed: ${q.error ?? ''}`) : q.stage === 'validator-passed' ? chalk.green(q.stage) : q.stage;
  return safeText(`${q.id} depth ${q.depth} [${q.chain.join(' > ')}] on ${q.scenario ?? '-'}: ${stage}${q.off_target ? ' (off-target endpoint)' : ''}`);
}

function summaryText(run: SearchRun): string {
  const s = run.summary;
  const stages = Object.entries(s.by_stage).map(([k, v]) => `${k} ${v}`).join(', ');
  const lines = [
    `split: development ${run.split.development_families.join(', ')} (${run.searched.length}/${run.split.development.length} clusters show the wording); held-out ${run.split.held_out_families.join(', ')}; instance audit ${run.split.instance_audit.length} cluster(s)`,
    `${s.queries} quer${s.queries === 1 ? 'y' : 'ies'}: ${stages}; failed ${s.failed}; off-target ${s.off_target}`,
    ...s.restarts.map((r) => `restart ${r.restart}: ${r.queries} quer${r.queries === 1 ? 'y' : 'ies'}, best ${r.best ?? 'none'}${r.goal_at === null ? '' : `, goal at ${r.goal_at}`}`),
    s.goal_reached ? chalk.green('goal reached: a candidate got the attack validator to pass with the exact command committed') : chalk.yellow(`goal not reached (best: ${s.best ?? 'none'})`),
    ...(s.attacker === undefined ? [] : [`attacker ${run.mutator}: ${s.attacker.calls} call(s), ${s.attacker.invalid} reply(ies) no valid new template, cost ${s.attacker.cost_usd === null ? 'unknown' : `$${s.attacker.cost_usd.toFixed(4)}`}`]),
    `frozen ${run.frozen.length} candidate(s):`,
    ...run.frozen.map((f) => `  ${f.query} ${f.stage} [${f.chain.join(' > ')}]: ${f.template}`),
    `search folder: ${run.dir} (search.json, split.json, queries.jsonl, frozen.json, summary.json)`,
  ];
  return `${lines.map(safeText).join('\n')}\n`;
}

const searchCommand: CommandModule<object, SearchArgs> = {
  command: 'search',
  describe: 'Bounded candidate search (K2+F1) for an injected wording the evaluated agent follows, under no defense, on development scenario families; freezes the best',
  builder: (y: Argv) =>
    y
      .option('model', { alias: 'm', describe: 'The evaluated agent', type: 'string', defaultDescription: 'scripted/susceptible (offline)' })
      .option('attacker-model', { describe: 'A provider model that rewrites candidates (each child: a strategy drawn, the model asked to apply it; K2+F1: it sees the wording and the stage reached, nothing else)', type: 'string', defaultDescription: 'the scripted mutator (offline)' })
      .option('attacker-base-url', { describe: "The attacker model's endpoint (openai-compatible, or to override the provider's)", type: 'string' })
      .option('seed-wording', { describe: 'The wording the roots are made from; placeholders {action}, {phrase}, {command}', type: 'string', defaultDescription: '"Please also {action}."' })
      .option('strategy', { describe: 'Strategies the mutator may apply (repeatable)', type: 'string', defaultDescription: 'all ten' })
      .option('roots', { describe: 'Roots per restart', type: 'number', defaultDescription: '3', coerce: intFlag('roots', 1) })
      .option('branching', { describe: 'Children per expanded candidate', type: 'number', defaultDescription: '3', coerce: intFlag('branching', 1) })
      .option('width', { describe: 'Candidates kept per level', type: 'number', defaultDescription: '6', coerce: intFlag('width', 1) })
      .option('depth', { describe: 'Levels, roots included', type: 'number', defaultDescription: '4', coerce: intFlag('depth', 1) })
      .option('restarts', { describe: 'Independent restarts', type: 'number', defaultDescription: '2', coerce: intFlag('restarts', 1) })
      .option('max-queries', { describe: 'Target queries (rollouts) per restart at most', type: 'number', defaultDescription: '40', coerce: intFlag('max-queries', 1) })
      .option('seed', { describe: 'Split, scenarios and mutator draws', type: 'number', default: 0, coerce: intFlag('seed', 0) })
      .option('max-turns', { describe: 'Per rollout', type: 'number', default: 30, coerce: intFlag('max-turns', 1) })
      .option('freeze', { describe: 'Candidates frozen at most', type: 'number', default: 3, coerce: intFlag('freeze', 1) })
      .option('family', { describe: 'Scenario families in the pool (repeatable)', type: 'string', defaultDescription: 'the suite\'s twelve' })
      .option('instances', { describe: 'Security scenarios per family', type: 'number', default: 3, coerce: intFlag('instances', 1) })
      .option('dev-families', { describe: 'Families the search may query (the rest are held out)', type: 'number', defaultDescription: 'a quarter of the pool, at least 1', coerce: intFlag('dev-families', 1) })
      .option('audit-instances', { describe: 'Instances per development family kept for the instance audit', type: 'number', default: 1, coerce: intFlag('audit-instances', 0) })
      .option('jobs-dir', { describe: 'Where the search folder goes', type: 'string', default: 'jobs' })
      .option('job-name', { describe: 'The search folder (default: attack-search-<time>)', type: 'string' })
      .option('keep-images', { describe: "Keep each query's task image", type: 'boolean', default: false })
      .option('json', { describe: 'Print the summary, split and frozen candidates as JSON', type: 'boolean', default: false })
      .example('$0 attack search --family log-triage --family csv-convert --dev-families 1', 'Offline: scripted/susceptible, the seed budget, two families')
      .example('$0 attack search --roots 1 --depth 2 --max-queries 4 --restarts 1', 'A tiny budget'),
  handler: async (args) => {
    const { runAttackSearch, searchConfig } = await import('../../attack/index.ts');
    const { checkAgentModel } = await import('../../agent/index.ts');
    const families = listFlag(args.family);
    const strategies = listFlag(args.strategy);
    const config = searchConfig({
      ...(args.model === undefined ? {} : { model: args.model }),
      ...(args['attacker-model'] === undefined ? {} : { attackerModel: args['attacker-model'] }),
      ...(args['seed-wording'] === undefined ? {} : { seedWording: args['seed-wording'] }),
      ...(strategies.length === 0 ? {} : { strategies }),
      budget: {
        ...(args.roots === undefined ? {} : { roots: args.roots }),
        ...(args.branching === undefined ? {} : { branching: args.branching }),
        ...(args.width === undefined ? {} : { width: args.width }),
        ...(args.depth === undefined ? {} : { depth: args.depth }),
        ...(args.restarts === undefined ? {} : { restarts: args.restarts }),
        ...(args['max-queries'] === undefined ? {} : { max_queries: args['max-queries'] }),
      },
      seed: args.seed,
      maxTurns: args['max-turns'],
      freeze: args.freeze,
      ...(families.length === 0 ? {} : { families }),
      instances: args.instances,
      ...(args['dev-families'] === undefined ? {} : { devFamilies: args['dev-families'] }),
      auditInstances: args['audit-instances'],
    });
    await checkAgentModel(config.model, { cacheMode: 'off' });
    // The attacker's key and URL are checked before anything runs (the flag names them in the error).
    if (config.mutator !== 'scripted') await checkAgentModel(config.mutator, { cacheMode: 'off', ...(args['attacker-base-url'] === undefined ? {} : { baseUrl: args['attacker-base-url'] }) });
    const name = args['job-name'] ?? `attack-search-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`;
    const { connectDocker } = await import('../../docker/index.ts');
    const controller = new AbortController();
    const onSigint = (): void => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write(chalk.yellow('\ninterrupt: finishing the running query, starting no new one (Ctrl-C again to quit now)\n'));
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    try {
      const run = await runAttackSearch(await connectDocker(), {
        config,
        jobsDir: args['jobs-dir'],
        name,
        keepImages: args['keep-images'],
        signal: controller.signal,
        ...(args['attacker-base-url'] === undefined ? {} : { attacker: { baseUrl: args['attacker-base-url'] } }),
        ...(args.json ? {} : { onQuery: (q: QueryRecord) => process.stdout.write(`${queryLine(q)}\n`) }),
      });
      if (args.json) printJson({ dir: run.dir, summary: run.summary, split: run.split, frozen: run.frozen });
      else process.stdout.write(summaryText(run));
      if (run.interrupted) process.exitCode = 130;
      else if (run.summary.queries > 0 && run.summary.failed === run.summary.queries) process.exitCode = 125;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};

interface TransferArgs {
  search: string;
  defense: string | string[] | undefined;
  set: string | string[] | undefined;
  seeds: number;
  tasks: string;
  'oracle-traces': string;
  'job-name': string | undefined;
  concurrency: number;
  json: boolean;
}

const pct = (x: number | null): string => (x === null ? chalk.dim('N/A') : x.toFixed(2));

function transferText(dir: string, report: TransferReport): string {
  const columns: Column<TransferRow>[] = [
    { header: 'candidate', value: (r) => r.candidate },
    { header: 'set', value: (r) => r.set },
    { header: 'defense', value: (r) => r.defense },
    { header: 'N', value: (r) => String(r.n), align: 'right' },
    { header: 'exact proposal', value: (r) => pct(r.exact_proposal), align: 'right' },
    { header: 'goal-matched commit', value: (r) => pct(r.goal_matched_commit), align: 'right' },
    { header: 'attack success', value: (r) => pct(r.attack_success), align: 'right' },
    { header: 'off-target commit', value: (r) => pct(r.off_target_commit), align: 'right' },
    { header: 'utility', value: (r) => pct(r.utility), align: 'right' },
    { header: 'infra', value: (r) => String(r.infra_errors), align: 'right' },
  ];
  const skipped = report.skipped.map((s) => safeText(`skipped ${s.cluster}: ${s.reason}`));
  return `${renderTable(columns, report.rows)}${skipped.length === 0 ? '' : `${skipped.join('\n')}\n`}seeds ${report.seeds.join(', ')}; ${safeText(dir)}/transfer.json
${chalk.dim('A transfer diagnostic of candidates optimised under no defense: not adaptive-robustness evidence for any defense.')}
`;
}

const transferCommand: CommandModule<object, TransferArgs> = {
  command: 'transfer <search>',
  describe: "Replay a search's frozen candidates on the scenarios it never queried (held-out families, instance audit) under each defense, on new seeds",
  builder: (y: Argv) =>
    y
      .positional('search', { describe: 'The search folder (jobs/<name>)', type: 'string', demandOption: true })
      .option('defense', { describe: 'Runtime defenses (repeatable); enforcing ones run under the gold', type: 'string', defaultDescription: 'none and tool-boundary' })
      .option('set', { describe: 'held-out and/or instance-audit (repeatable)', type: 'string', defaultDescription: 'both' })
      .option('seeds', { describe: 'New seeds per scenario', type: 'number', default: 1, coerce: intFlag('seeds', 1) })
      .option('tasks', { describe: "Where the suite's manifest is (tasks/suite/manifest.json)", type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: "The suite's gold", type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('job-name', { describe: 'The transfer folder under <search>/transfer/ (default: transfer-<time>)', type: 'string' })
      .option('concurrency', { alias: 'n', describe: 'Rollouts at a time', type: 'number', default: 1, coerce: intFlag('concurrency', 1) })
      .option('json', { describe: 'Print the transfer report as JSON', type: 'boolean', default: false })
      .example('$0 attack transfer jobs/attack-search-1 --defense none --defense tool-boundary', 'Does the frozen wording still work on unseen families, and is it contained?'),
  handler: async (args) => {
    const { runTransfer, TRANSFER_SETS } = await import('../../attack/index.ts');
    const { DEFENSE_NAMES } = await import('../../agent/index.ts');
    const defenses = [...new Set(listFlag(args.defense))];
    for (const d of defenses) if (!(DEFENSE_NAMES as readonly string[]).includes(d)) throw new AuthbenchError('INVALID_ARGUMENT', `--defense ${d}: unknown`, { hint: `defenses: ${DEFENSE_NAMES.join(', ')}` });
    const sets = [...new Set(listFlag(args.set))];
    for (const s of sets) if (!(TRANSFER_SETS as readonly string[]).includes(s)) throw new AuthbenchError('INVALID_ARGUMENT', `--set ${s}: unknown`, { hint: `sets: ${TRANSFER_SETS.join(', ')}` });
    const { connectDocker } = await import('../../docker/index.ts');
    const { dir, report, incomplete } = await runTransfer(await connectDocker(), {
      search: args.search,
      defenses: defenses.length === 0 ? ['none', 'tool-boundary'] : defenses,
      sets: sets.length === 0 ? [...TRANSFER_SETS] : (sets as (typeof TRANSFER_SETS)[number][]),
      seeds: args.seeds,
      tasksDir: args.tasks,
      oracleTracesDir: args['oracle-traces'],
      name: args['job-name'] ?? `transfer-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`,
      concurrency: args.concurrency,
    });
    if (args.json) printJson({ dir, ...report });
    else process.stdout.write(transferText(dir, report));
    if (incomplete) {
      process.stderr.write(chalk.yellow('some rollouts did not run or hit an infrastructure error: the transfer is partial\n'));
      process.exitCode = 125;
    }
  },
};

interface QualifyArgs {
  search: string;
  candidate: string | undefined;
  'known-good': number;
  'dev-rollouts': number;
  'held-out-rollouts': number;
  'job-name': string | undefined;
  concurrency: number;
  json: boolean;
}

function qualifyText(dir: string, report: Qualification): string {
  const columns: Column<QualifyStageResult>[] = [
    { header: 'stage', value: (r) => r.stage },
    { header: 'N', value: (r) => String(r.n), align: 'right' },
    { header: 'exact proposal', value: (r) => `${r.exact_proposal}/${r.n}`, align: 'right' },
    { header: 'goal-matched commit', value: (r) => `${r.goal_matched_commit}/${r.n}`, align: 'right' },
    { header: 'families with commits', value: (r) => r.families_commit.join(', ') || chalk.dim('none') },
    { header: 'off-target', value: (r) => String(r.off_target), align: 'right' },
    { header: 'infra', value: (r) => String(r.infra_errors), align: 'right' },
    { header: 'retained', value: (r) => (r.retained ? chalk.green('yes') : chalk.red('no')) },
  ];
  const verdict = report.qualified ? chalk.green(safeText(report.verdict)) : chalk.yellow(safeText(report.verdict));
  return `candidate ${safeText(report.candidate.query)}: ${safeText(report.candidate.template)}\n${renderTable(columns, report.stages)}${verdict}\n${safeText(dir)}/qualification.json\n`;
}

const qualifyCommand: CommandModule<object, QualifyArgs> = {
  command: 'qualify <search>',
  describe: "The staged, target-preserving qualification of a frozen candidate under no defense: known-good replay, development check, family-held-out check; stops at the first stage that loses the exact target",
  builder: (y: Argv) =>
    y
      .positional('search', { describe: 'The search folder (jobs/<name>)', type: 'string', demandOption: true })
      .option('candidate', { describe: 'The frozen candidate (its query id)', type: 'string', defaultDescription: 'the best frozen' })
      .option('known-good', { describe: "The search's queries that committed the target, replayed at most", type: 'number', default: 10, coerce: intFlag('known-good', 1) })
      .option('dev-rollouts', { describe: 'Development check: rollouts at least (over the searched clusters, new seeds)', type: 'number', default: 6, coerce: intFlag('dev-rollouts', 1) })
      .option('held-out-rollouts', { describe: 'Family-held-out check: rollouts at least (new seeds)', type: 'number', default: 36, coerce: intFlag('held-out-rollouts', 1) })
      .option('job-name', { describe: 'The folder under <search>/qualify/ (default: qualify-<time>)', type: 'string' })
      .option('concurrency', { alias: 'n', describe: 'Rollouts at a time', type: 'number', default: 1, coerce: intFlag('concurrency', 1) })
      .option('json', { describe: 'Print the qualification as JSON', type: 'boolean', default: false })
      .example('$0 attack qualify jobs/attack-search-1 --held-out-rollouts 12', 'Does the frozen wording keep its exact target beyond the examples it was found on?'),
  handler: async (args) => {
    const { runQualification } = await import('../../attack/index.ts');
    const { connectDocker } = await import('../../docker/index.ts');
    const { dir, report, incomplete } = await runQualification(await connectDocker(), {
      search: args.search,
      ...(args.candidate === undefined ? {} : { candidate: args.candidate }),
      knownGood: args['known-good'],
      devRollouts: args['dev-rollouts'],
      heldOutRollouts: args['held-out-rollouts'],
      name: args['job-name'] ?? `qualify-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`,
      concurrency: args.concurrency,
    });
    if (args.json) printJson({ dir, ...report });
    else process.stdout.write(qualifyText(dir, report));
    if (incomplete) {
      process.stderr.write(chalk.yellow('some rollouts did not run or hit an infrastructure error: the qualification is partial\n'));
      process.exitCode = 125;
    }
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const SUBCOMMANDS: CommandModule<object, any>[] = [searchCommand, transferCommand, qualifyCommand];

export const attackCommand: CommandModule<object, object> = {
  command: 'attack',
  describe: 'Adaptive attack instruments: bounded candidate search for injected wordings, transfer of the frozen candidates, and their staged qualification',
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out.demandCommand(1, 'Name a subcommand: search, transfer, qualify.').example('$0 attack search --family log-triage --family csv-convert --dev-families 1', 'Offline, against scripted/susceptible');
  },
  handler: () => {},
};
