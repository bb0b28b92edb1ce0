import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { JobEvent, SummaryRow } from '../../evaluation/index.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { createProgress } from '../progress.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';

interface EvalArgs extends BuildFlagArgs {
  model: string;
  /** An array when the flag is repeated (refused). */
  replay: string | string[] | undefined;
  'base-url': string | undefined;
  tasks: string;
  'oracle-traces': string;
  include: string[];
  exclude: string[];
  policy: string[];
  strategy: 'direct' | 'sufficiency-tightness';
  defense: string[];
  concurrency: number;
  attempts: number;
  seed: number;
  'max-turns': number;
  'jobs-dir': string;
  'job-name': string | undefined;
  resume: boolean;
  cache: string;
  'model-timeout': number;
  'model-retries': number;
  json: boolean;
}

const pct = (x: number | null): string => (x === null ? chalk.dim('N/A') : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null): string => (x === null ? chalk.dim('N/A') : x.toFixed(2));

const command: CommandModule<object, EvalArgs> = {
  command: 'eval',
  describe: 'Run the execution agent on every task × policy source × defense × attempt, validate, and summarize',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .option('model', { alias: 'm', describe: 'provider/name (bare name = openai/…), or scripted/oracle | scripted/follow-injection | scripted/replay', type: 'string', demandOption: true })
      .option('replay', { describe: 'With --model scripted/replay: a JSON array of shell commands (strings or {"command", "timeout_sec"}) proposed one per turn', type: 'string' })
      .option('base-url', { describe: 'Base URL for openai-compatible providers (vLLM, Ollama, llama.cpp)', type: 'string' })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: 'tasks' })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: 'oracle-traces' })
      .option('include', { alias: 'i', describe: 'Task id glob to keep (repeatable)', type: 'string', array: true, default: [] })
      .option('exclude', { alias: 'x', describe: 'Task id glob to drop (repeatable)', type: 'string', array: true, default: [] })
      .option('policy', { describe: 'Policy source: gold | allow-all | deny-all | generated (repeatable)', type: 'string', array: true, default: ['gold'] })
      .option('strategy', { describe: 'How --policy generated is written by --model', choices: ['direct', 'sufficiency-tightness'] as const, default: 'direct' as const })
      .option('defense', { describe: 'Defense: none | prompt-only | structured-guard | tool-boundary | taint-only | intent-ledger | rollback (repeatable)', type: 'string', array: true, default: ['tool-boundary'] })
      .option('concurrency', { alias: 'n', describe: 'Rollouts in parallel', type: 'number', default: 3 })
      .option('attempts', { alias: 'k', describe: 'Attempts per task, policy and defense', type: 'number', default: 1 })
      .option('seed', { describe: 'Base seed (attempt k uses seed + k - 1)', type: 'number', default: 0 })
      .option('max-turns', { describe: 'Model turns per episode', type: 'number', default: 30 })
      .option('jobs-dir', { describe: 'Where jobs are written', type: 'string', default: 'jobs' })
      .option('job-name', { describe: 'Job folder name (default: <model>-<time>)', type: 'string' })
      .option('resume', { describe: 'Continue a job: skip rollouts with a complete result; refuse if its inputs changed', type: 'boolean', default: false })
      .option('cache', { describe: 'Model response cache: off | read-write | replay-only', type: 'string', default: 'read-write' })
      .option('model-timeout', { describe: 'Seconds per model call attempt', type: 'number', default: 300 })
      .option('model-retries', { describe: 'Retries of a model call on rate limits, 5xx and timeouts (backoff honours Retry-After)', type: 'number', default: 4 })
      .option('json', { describe: 'Print the summary as JSON', type: 'boolean', default: false })
      .example('$0 eval --model scripted/oracle --policy gold', 'Offline: the oracle through the agent loop under its gold policy')
      .example('$0 eval --model scripted/follow-injection --defense none --defense tool-boundary', 'Positive control vs kernel enforcement')
      .example('$0 eval --model scripted/replay --replay trajectory.json --defense none --defense tool-boundary', 'Play fixed commands, one per turn, whatever each observation says')
      .example('$0 eval --model gpt-5 -n 4 -k 3 --policy gold --policy allow-all', 'A real model (OPENAI_API_KEY), three attempts')
      .example('$0 eval --model gpt-5 --policy generated --strategy sufficiency-tightness', 'The model writes each policy (read-only exploration), then executes under it')
      .example('$0 eval --model gpt-5 --job-name run1 --resume', 'Continue an interrupted job')
      .example('$0 eval --model scripted/oracle --tasks ../authbench/tasks --base-map "python:3.12*=authbench/base:python3.11-bookworm"', 'Another base for some images (recorded in the job: --resume refuses other ones)'),
  handler: async (args) => {
    const { EvalConfigSchema, POLICY_SOURCES, controlLines, flaggedRollouts, infraErrors, jobControlReports, outcomeOf, policyWriterCost, runJob, selectTasks, summarize } = await import('../../evaluation/index.ts');
    const { DEFENSE_NAMES, REPLAY_REF, loadReplayFile } = await import('../../agent/index.ts');
    const { parseModelRef, formatModelRef } = await import('../../models/index.ts');
    const { connectDocker } = await import('../../docker/index.ts');

    const ref = parseModelRef(args.model);
    if (Array.isArray(args.replay)) throw new AuthbenchError('INVALID_ARGUMENT', '--replay given more than once: one replay file per job');
    const replays = ref.provider === REPLAY_REF.provider && ref.name === REPLAY_REF.name;
    if (replays && args.replay === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--model ${args.model} needs --replay FILE`, {
        hint: 'a JSON array of shell commands, e.g. ["ls -la", {"command": "make test", "timeout_sec": 300}]',
      });
    }
    if (!replays && args.replay !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--replay is only for --model scripted/replay, not ${args.model}`);
    }
    // Read and checked now, before anything is built or run; the config records its digest for --resume.
    let replay: { path: string; sha256: string } | undefined;
    if (args.replay !== undefined) {
      const { commands, sha256 } = await loadReplayFile(args.replay);
      replay = { path: args.replay, sha256 };
      if (commands.length >= args['max-turns']) {
        process.stderr.write(chalk.yellow(`warning: --replay has ${commands.length} command(s) but --max-turns is ${args['max-turns']}: episodes end at max_turns before the replay finishes\n`));
      }
    }
    for (const p of args.policy) {
      if (!(POLICY_SOURCES as readonly string[]).includes(p)) {
        throw new AuthbenchError('INVALID_ARGUMENT', `--policy ${p}: unknown policy source`, { hint: `valid: ${POLICY_SOURCES.join(', ')}` });
      }
    }
    const generates = args.policy.includes('generated');
    if (generates && ref.provider === 'scripted') {
      throw new AuthbenchError('INVALID_ARGUMENT', `--policy generated needs a provider model: ${args.model} cannot both write a policy and execute`, {
        hint: 'scripted policy writers run with `authbench policy --model scripted/gold <task>`',
      });
    }
    for (const d of args.defense) {
      if (!(DEFENSE_NAMES as readonly string[]).includes(d)) throw new AuthbenchError('INVALID_ARGUMENT', `--defense ${d}: unknown defense`, { hint: `valid: ${DEFENSE_NAMES.join(', ')}` });
    }
    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw new AuthbenchError('INVALID_ARGUMENT', '--concurrency must be a positive integer');
    if (!Number.isInteger(args.attempts) || args.attempts < 1) throw new AuthbenchError('INVALID_ARGUMENT', '--attempts must be a positive integer');
    // What changes an image goes in the config (and so the lock --resume compares); the CA and proxies do not.
    const { baseMapEntries, buildArgs, hostAccess } = await parseBuildFlags(args);
    const config = EvalConfigSchema.parse({
      schema_version: 1,
      model: formatModelRef(ref),
      ...(replay === undefined ? {} : { replay }),
      ...(args['base-url'] === undefined ? {} : { base_url: args['base-url'] }),
      tasks_dir: args.tasks,
      oracle_traces_dir: args['oracle-traces'],
      include: args.include,
      exclude: args.exclude,
      policies: [...new Set(args.policy)],
      ...(generates ? { policy_strategy: args.strategy } : {}),
      defenses: [...new Set(args.defense)],
      attempts: args.attempts,
      seed: args.seed,
      max_turns: args['max-turns'],
      cache: args.cache,
      model_timeout_sec: args['model-timeout'],
      model_retries: args['model-retries'],
      ...(baseMapEntries.length === 0 && Object.keys(buildArgs).length === 0 ? {} : { build: { base_map: baseMapEntries, build_args: buildArgs } }),
    });
    const name = args['job-name'] ?? `${formatModelRef(ref).replaceAll('/', '_')}-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`;

    const controller = new AbortController();
    const onSigint = (): void => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write(chalk.yellow('\ninterrupt: finishing running rollouts, starting no new ones (Ctrl-C again to quit now)\n'));
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    const progress = createProgress({ unit: 'rollouts', enabled: !args.json });
    const counts = { pass: 0, fail: 0, infra: 0, attack: 0, tampered: 0 };
    const tally = (): string =>
      `${chalk.green(`${counts.pass} pass`)} ${chalk.red(`${counts.fail} fail`)}${counts.attack > 0 ? chalk.red(` ${counts.attack} attack`) : ''}${counts.tampered > 0 ? chalk.magenta(` ${counts.tampered} tampered`) : ''}${counts.infra > 0 ? chalk.yellow(` ${counts.infra} infra`) : ''}`;
    const onEvent = (e: JobEvent): void => {
      const counter = chalk.dim(`[${e.done}/${e.total}]`);
      if (e.kind === 'building') {
        progress.detail(`${counter} building ${e.taskId}`);
        progress.update(e.done, e.total, `building ${e.taskId ?? ''}`);
      } else if (e.kind === 'rollout-done' && e.result !== undefined && e.rollout !== undefined) {
        const r = e.result;
        const infra = r.status === 'infra_error';
        const outcome = outcomeOf(r);
        const tampered = outcome === 'sandbox_tampered' || outcome === 'validator_surface_tampered';
        counts[infra ? 'infra' : r.utility_success === true ? 'pass' : 'fail']++;
        if (tampered) counts.tampered++;
        if (r.attack_success === true) counts.attack++;
        const mark = infra ? chalk.yellow('infra') : tampered ? chalk.magenta(outcome) : outcome === 'agent_error' ? chalk.red('agent_error') : r.utility_success === true ? chalk.green('pass ') : chalk.red('fail ');
        const attack = r.attack_success === null ? '' : r.attack_success ? chalk.red(' ATTACK') : chalk.green(' no-attack');
        const line = `${counter} ${mark} ${e.rollout.id}${attack} ${chalk.dim(`${(r.duration_ms / 1000).toFixed(1)}s`)}${r.infra_error === undefined ? '' : chalk.yellow(` ${r.infra_error.message}`)}`;
        // On a terminal only what needs a look stays on screen; the bar carries the counts.
        progress.finish({ done: e.done, total: e.total, line, keep: infra || tampered || r.utility_success !== true || r.attack_success === true, status: tally() });
      }
    };
    try {
      const engine = await connectDocker();
      const outcome = await runJob(engine, { config, jobsDir: args['jobs-dir'], name, resume: args.resume, concurrency: args.concurrency, onEvent, signal: controller.signal, ...(hostAccess === undefined ? {} : { hostAccess }) }).finally(() => progress.stop());
      const rows = summarize(outcome.results);
      // A positive control that never attacked with nothing enforced makes its "contained" rows meaningless: said per task.
      const controls = await jobControlReports(outcome.results, await selectTasks(config));
      if (args.json) {
        printJson({ job: outcome.dir, planned: outcome.planned, done: outcome.results.length, reused: outcome.reused, interrupted: outcome.interrupted, summary: rows, controls });
      } else {
        const columns: Column<SummaryRow>[] = [
          { header: 'policy', value: (r) => r.policy },
          { header: 'defense', value: (r) => r.defense },
          { header: 'n', value: (r) => String(r.completed), align: 'right' },
          { header: 'TSR std', value: (r) => pct(r.tsrStandard), align: 'right' },
          { header: 'TSR sens', value: (r) => pct(r.tsrSensitive), align: 'right' },
          { header: 'ASR', value: (r) => pct(r.asr), align: 'right' },
          { header: 'SER', value: (r) => pct(r.ser), align: 'right' },
          { header: 'F1 r', value: (r) => num(r.f1.read), align: 'right' },
          { header: 'F1 w', value: (r) => num(r.f1.write), align: 'right' },
          { header: 'F1 x', value: (r) => num(r.f1.execute), align: 'right' },
          { header: 'tampered', value: (r) => { const n = r.outcomes.sandbox_tampered + r.outcomes.validator_surface_tampered; return n === 0 ? '0' : chalk.magenta(String(n)); }, align: 'right' },
          { header: 'infra err', value: (r) => (r.infraErrors === 0 ? '0' : chalk.yellow(String(r.infraErrors))), align: 'right' },
          { header: 'cost $', value: (r) => (r.costUsd === null ? chalk.dim('?') : r.costUsd.toFixed(4)), align: 'right' },
          ...(rows.some((r) => r.policy === 'generated')
            ? [{ header: 'policy $', value: (r: SummaryRow) => (r.policy !== 'generated' ? chalk.dim('-') : r.policyCostUsd === null ? chalk.dim('?') : r.policyCostUsd.toFixed(4)), align: 'right' as const }]
            : []),
        ];
        process.stdout.write(`\n${renderTable(columns, rows)}`);
        process.stdout.write(`job ${outcome.dir}: ${outcome.results.length}/${outcome.planned} rollouts (${outcome.reused} reused)\n`);
        for (const line of controls.flatMap(controlLines)) process.stdout.write(`${line.warn ? chalk.yellow(`warning: ${line.text}`) : line.text}\n`);
        for (const f of flaggedRollouts(outcome.results)) process.stdout.write(`${chalk.magenta(f.outcome)} ${f.rollout}: ${f.why}\n`);
        for (const i of infraErrors(outcome.results)) process.stdout.write(`${chalk.yellow('infra_error')} ${i.rollout}: ${i.source} ${i.code}: ${i.message}\n`);
        if (rows.some((r) => r.policy === 'generated')) {
          // Rows share generations (one per task and attempt, used by every defense): the job total counts each once.
          const writer = policyWriterCost(outcome.results);
          process.stdout.write(`policy writer: ${writer.costUsd === null ? 'cost unknown' : `$${writer.costUsd.toFixed(4)}`} over ${writer.generations} generation(s), each counted once\n`);
        }
      }
      if (outcome.allInfra) {
        process.stderr.write(chalk.yellow(`every rollout hit an infrastructure error; nothing was measured\n`));
        process.exitCode = 125;
      }
      if (outcome.interrupted) {
        process.stderr.write(chalk.yellow(`interrupted: resume with authbench eval … --job-name ${name} --resume\n`));
        process.exitCode = 130;
      }
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};

export const evalCommand = command as unknown as CommandModule<object, object>;
