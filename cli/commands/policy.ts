import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { formatProblem, writeFileAtomic, writeJsonAtomic } from '../../core/index.ts';
import type { PolicyStrategy } from '../../policygen/index.ts';
import type { PolicyScore } from '../../score/index.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { intFlag, positiveFlag } from '../flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable } from '../table.ts';
import { scoreColumns, type ScoreRow } from './score.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface PolicyArgs extends BuildFlagArgs {
  task: string;
  model: string;
  strategy: PolicyStrategy;
  out: string | undefined;
  tasks: string;
  'oracle-traces': string;
  'base-url': string | undefined;
  'max-turns': number;
  cache: 'off' | 'read-write' | 'replay-only';
  /** Undefined when not given: the model client's bounded defaults apply (the ones `eval` uses). */
  'model-timeout': number | undefined;
  'model-retries': number | undefined;
  json: boolean;
}

/** `<out>.json` → `<out>.<suffix>` beside it. */
function beside(out: string, suffix: string): string {
  return `${out.endsWith('.json') ? out.slice(0, -'.json'.length) : out}.${suffix}`;
}

const command: CommandModule<object, PolicyArgs> = {
  command: 'policy <task>',
  describe: 'Have a model explore a task container read-only and write its authorization policy; parse and score it',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .positional('task', { describe: 'Task id (folder name under --tasks) or task folder', type: 'string', demandOption: true })
      .option('model', { alias: 'm', describe: 'provider/name, or scripted/gold | scripted/allow-all | scripted/deny-all', type: 'string', demandOption: true })
      .option('strategy', { describe: 'direct, or sufficiency-tightness (cover everything, then audit each grant)', choices: ['direct', 'sufficiency-tightness'] as const, default: 'direct' as const })
      .option('out', { describe: 'Policy file to write (default jobs/policies/<task>/<model>-<strategy>.json); raw answers go beside it', type: 'string' })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives (scoring, scripted/gold)', type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('base-url', { describe: 'Base URL for openai-compatible providers', type: 'string' })
      .option('max-turns', { describe: 'Exploration turns', type: 'number', default: 20, coerce: intFlag('max-turns', 1) })
      .option('cache', { describe: 'Model response cache', choices: ['off', 'read-write', 'replay-only'] as const, default: 'read-write' as const })
      // Shown as text so --help loads no model code; policy.test.ts checks they are the client's defaults.
      .option('model-timeout', { describe: 'Seconds per model call attempt; a timed-out attempt is retried once, so a hung endpoint fails a call in about a minute (raise it for slow local models)', type: 'number', defaultDescription: '30', coerce: positiveFlag('model-timeout') })
      .option('model-retries', { describe: 'Retries of a model call on rate limits, 5xx and network errors (backoff 1, 2, 4… s; honours Retry-After)', type: 'number', defaultDescription: '4', coerce: intFlag('model-retries', 0) })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 policy --model scripted/gold csv-sales-report', 'Baseline: S_gold as the answer (macro F1 = 1)')
      .example('$0 policy --model gpt-5 --strategy sufficiency-tightness log-triage', 'A real model, two-phase strategy')
      .example('$0 policy --model openai-compatible/qwen --base-url http://localhost:8000/v1 --json log-triage', 'A local server, JSON out'),
  handler: async (args) => {
    const { loadTask, resolveTaskRef } = await import('../../task-format/index.ts');
    const { parseModelRef, formatModelRef } = await import('../../models/index.ts');
    const { createPolicyWriter, generatePolicy } = await import('../../policygen/index.ts');
    const { loadTaskBundle, staticScore } = await import('../../goldstore/index.ts');
    const { connectDocker } = await import('../../docker/index.ts');
    const { buildTaskImage } = await import('../../taskenv/index.ts');

    const flags = await parseBuildFlags(args);
    const task = await loadTask(await resolveTaskRef(args.tasks, args.task));
    const ref = parseModelRef(args.model);
    const model = await createPolicyWriter(ref, task, {
      oracleTracesDir: args['oracle-traces'],
      client: {
        ...(args['base-url'] === undefined ? {} : { baseUrl: args['base-url'] }),
        cache: { mode: args.cache },
        ...(args['model-timeout'] === undefined ? {} : { timeoutMs: args['model-timeout'] * 1000 }),
        ...(args['model-retries'] === undefined ? {} : { retry: { maxRetries: args['model-retries'] } }),
      },
    });
    const out = args.out ?? join('jobs', 'policies', task.id, `${formatModelRef(ref).replaceAll('/', '_')}-${args.strategy}.json`);

    const log = (s: string): void => {
      if (!args.json) process.stderr.write(`${chalk.dim(`  ${task.id} | ${safeText(s)}`)}\n`);
    };
    const engine = await connectDocker();
    log('building image');
    const image = (await buildTaskImage(engine, task, flags)).tag;
    log(`exploring read-only with ${formatModelRef(ref)} (${args.strategy})`);
    const result = await generatePolicy({
      engine,
      task,
      image,
      model,
      strategy: args.strategy,
      maxTurns: args['max-turns'],
      onStep: (step) => log(`turn ${step.turn}: ${step.proposals.length} command(s)`),
    });

    await mkdir(dirname(out), { recursive: true });
    const rawFiles = result.answers.map((a, i) => (i === result.answers.length - 1 ? beside(out, 'raw.txt') : beside(out, `${a.phase}.raw.txt`)));
    for (const [i, a] of result.answers.entries()) await writeFileAtomic(rawFiles[i] ?? beside(out, 'raw.txt'), a.raw);
    await writeJsonAtomic(beside(out, 'exploration.json'), result.exploration);
    // An invalid answer leaves no policy file, so a stale one cannot be mistaken for this run's.
    if (result.policy === undefined) await rm(out, { force: true });
    else await writeJsonAtomic(out, result.policy);

    const score: PolicyScore | null = staticScore(await loadTaskBundle(task, args['oracle-traces']), {
      valid: result.parse.valid,
      problems: result.parse.problems,
      ...(result.policy === undefined ? {} : { policy: result.policy }),
    });

    const summary = {
      task: task.id,
      model: formatModelRef(ref),
      strategy: args.strategy,
      policy_file: result.policy === undefined ? null : out,
      raw_files: rawFiles,
      parse: result.parse,
      policy: result.policy ?? null,
      score,
      write_attempts: result.writeAttempts,
      exploration: { end_reason: result.exploration.end_reason, turns: result.exploration.totals.turns, executed: result.exploration.totals.executed, denials: result.exploration.totals.denials },
    };
    if (args.json) {
      printJson(summary);
      return;
    }
    const status = result.parse.valid ? chalk.green(result.parse.status) : chalk.red(`${result.parse.status}, invalid: scored 0`);
    process.stdout.write(`parse: ${status}\n`);
    // Problems quote the model's answer: untrusted.
    for (const p of result.parse.problems) process.stdout.write(`  ${safeText(formatProblem(p))}\n`);
    process.stdout.write(`exploration: ${summary.exploration.turns} turn(s), ${summary.exploration.executed} command(s), ${result.writeAttempts} refused write(s), ended ${summary.exploration.end_reason}\n`);
    process.stdout.write(`policy: ${summary.policy_file ?? chalk.dim('none written')}; raw: ${rawFiles.join(', ')}\n`);
    if (score === null) {
      process.stdout.write(chalk.yellow(`no score: ${task.id} has no gold or candidates yet (run: authbench gen-gold ${task.id})\n`));
      return;
    }
    const row: ScoreRow = { policy: summary.policy_file ?? rawFiles.at(-1) ?? out, valid: result.parse.valid, problems: result.parse.problems, score };
    process.stdout.write(renderTable(scoreColumns, [row]));
    process.stdout.write(chalk.dim('scored against oracle-traces gold (S_gold); cells are precision/recall/F1\n'));
  },
};

export const policyCommand = command as unknown as CommandModule<object, object>;
