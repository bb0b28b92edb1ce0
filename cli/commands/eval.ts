import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { EvalFlags, JobEvent, SummaryRow } from '../../evaluation/index.ts';
import { printJson, renderTable, type Column } from '../table.ts';
import { createProgress } from '../progress.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { intFlag, listFlag, positiveFlag, shardFlag } from '../flags.ts';
import { safeText } from '../output-text.ts';
import { DEFAULT_DIR_HELP, defaultDir, type DefaultDir } from '../default-dirs.ts';
import { runOnSlurm } from './eval-slurm.ts';

/**
 * A new job's folder when its flag is not given: only when the working directory lacks it and
 * authbench ships one (defaultDir); otherwise the config's own default applies, so `--resume`
 * of a job started here compares equal.
 */
function shippedDir<K extends 'tasks_dir' | 'oracle_traces_dir'>(name: DefaultDir, key: K): Partial<Record<K, string>> {
  const dir = defaultDir(name);
  return dir === name ? {} : ({ [key]: dir } as Partial<Record<K, string>>);
}

interface EvalArgs extends BuildFlagArgs {
  task: string[];
  model: string | undefined;
  /** An array when the flag is repeated (refused). */
  replay: string | string[] | undefined;
  'base-url': string | undefined;
  tasks: string | undefined;
  'oracle-traces': string | undefined;
  include: string | string[] | undefined;
  exclude: string | string[] | undefined;
  policy: string | string[] | undefined;
  strategy: 'direct' | 'sufficiency-tightness' | undefined;
  defense: string | string[] | undefined;
  concurrency: number;
  'cpu-pinning': 'auto' | 'off' | undefined;
  attempts: number | undefined;
  seed: number | undefined;
  'max-turns': number | undefined;
  'tool-format': 'native' | 'text' | undefined;
  shell: 'fresh' | 'persistent' | undefined;
  tracer: 'strace' | 'ebpf' | undefined;
  topology: 'single' | 'supervisor-worker' | 'peer-chain' | undefined;
  agent: string | undefined;
  counterfactuals: boolean | undefined;
  'max-counterfactuals': number | undefined;
  limit: number | undefined;
  'jobs-dir': string;
  'job-name': string | undefined;
  resume: boolean;
  'dry-run': boolean;
  cache: 'off' | 'read-write' | 'replay-only' | undefined;
  'model-timeout': number | undefined;
  'model-retries': number | undefined;
  'docker-wait': number;
  'max-consecutive-infra': number;
  shard: { index: number; count: number } | undefined;
  'claim-stale': number;
  executor: 'local' | 'slurm';
  partition: string | undefined;
  'array-size': number | undefined;
  'sbatch-arg': string | string[] | undefined;
  engine: string | string[] | undefined;
  json: boolean;
}

const pct = (x: number | null): string => (x === null ? chalk.dim('N/A') : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null): string => (x === null ? chalk.dim('N/A') : x.toFixed(2));

// Flags that make up the job's config have no yargs default: undefined means "not given", which
// --resume needs to tell apart from a default (the saved config supplies it). The defaults are EVAL_DEFAULTS
// (evaluation/resume.ts), shown here as text so --help loads nothing heavy; eval.test.ts checks they agree.
const command: CommandModule<object, EvalArgs> = {
  command: 'eval [task..]',
  describe: 'Run the execution agent on every task × policy source × defense × attempt, validate, and summarize',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .positional('task', { describe: 'Task ids or globs to run (as -i; default: every task under --tasks)', type: 'string', array: true, default: [] })
      .option('model', { alias: 'm', describe: 'provider/name (bare name = openai/…), or scripted/oracle | scripted/follow-injection | scripted/replay (required unless --resume)', type: 'string' })
      .option('replay', { describe: 'With --model scripted/replay: a JSON array of shell commands (strings or {"command", "timeout_sec"}) proposed one per turn', type: 'string' })
      .option('base-url', { describe: 'Base URL for openai-compatible providers (vLLM, Ollama, llama.cpp)', type: 'string' })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', defaultDescription: DEFAULT_DIR_HELP.tasks })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('include', { alias: 'i', describe: 'Task id glob to keep (repeatable); each must match a task', type: 'string' })
      .option('exclude', { alias: 'x', describe: 'Task id glob to drop (repeatable)', type: 'string' })
      .option('limit', { describe: 'Only the first N selected tasks (by id)', type: 'number', coerce: intFlag('limit', 1) })
      .option('policy', { describe: 'Policy source: gold | allow-all | deny-all | generated, or a policy FILE (hand-written; scored and enforced like the others) (repeatable)', type: 'string', defaultDescription: 'gold' })
      .option('strategy', { describe: 'How --policy generated is written by --model', choices: ['direct', 'sufficiency-tightness'] as const, defaultDescription: 'direct' })
      .option('defense', { describe: 'Defense: none | prompt-only | structured-guard | tool-boundary | taint-only | intent-ledger | rollback (repeatable)', type: 'string', defaultDescription: 'tool-boundary' })
      .option('concurrency', { alias: 'n', describe: 'Rollouts in parallel', type: 'number', default: 3, coerce: intFlag('concurrency', 1) })
      .option('cpu-pinning', { describe: 'auto: each rollout slot runs its commands and their tracer on one CPU of its own (slot k on CPU k mod CPUs; cheaper strace); off: unpinned', choices: ['auto', 'off'] as const, defaultDescription: 'auto' })
      .option('attempts', { alias: 'k', describe: 'Attempts per task, policy and defense', type: 'number', defaultDescription: '1', coerce: intFlag('attempts', 1) })
      .option('seed', { describe: 'Base seed (attempt k uses seed + k - 1)', type: 'number', defaultDescription: '0', coerce: intFlag('seed', Number.MIN_SAFE_INTEGER) })
      .option('max-turns', { describe: 'Model turns per episode', type: 'number', defaultDescription: '30', coerce: intFlag('max-turns', 1) })
      .option('tool-format', { describe: 'How the model acts: native tool calls, or text (no tools offered; JSON actions in the reply, parsed with recorded repairs)', choices: ['native', 'text'] as const, defaultDescription: 'native' })
      .option('tracer', {
        describe: "What traces the agent's commands: strace in the container, or eBPF from the host (root; one ab-ebpf for the job, built in Docker)",
        choices: ['strace', 'ebpf'] as const,
        defaultDescription: 'strace',
      })
      .option('shell', { describe: 'How the built-in loop runs commands: fresh (a new bash -c each) or persistent (one shell per episode: cwd, variables, functions carry over; still enforced and traced)', choices: ['fresh', 'persistent'] as const, defaultDescription: 'fresh' })
      .option('topology', { describe: 'Agents per rollout, for tasks whose [authbench] names none: single, supervisor-worker (a supervisor delegates to a worker) or peer-chain (agent k\'s answer is agent k+1\'s input)', choices: ['single', 'supervisor-worker', 'peer-chain'] as const, defaultDescription: 'single' })
      .option('agent', { describe: 'Who acts: authbench (the built-in loop) or an installed agent (claude-code, codex; `authbench agents list`), run headless in the sandbox with the model through the relay; defenses none, prompt-only, tool-boundary', type: 'string', defaultDescription: 'authbench' })
      .option('counterfactuals', { describe: 'Re-run each command a defense stopped in a throw-away copy of the container, under the gold policy, to judge false positives (--no-counterfactuals: off)', type: 'boolean', defaultDescription: 'on' })
      .option('max-counterfactuals', { describe: 'Stopped commands re-run per rollout, at most', type: 'number', defaultDescription: '8', coerce: intFlag('max-counterfactuals', 0) })
      .option('jobs-dir', { describe: 'Where jobs are written', type: 'string', default: 'jobs' })
      .option('job-name', { describe: 'Job folder name inside --jobs-dir (default: <model>-<time>)', type: 'string' })
      .option('resume', { describe: 'Continue the job --job-name from its saved config: skip rollouts with a complete result; flags given again must match it (with --model and no such job: start it)', type: 'boolean', default: false })
      .option('dry-run', { describe: 'Check everything and print the rollout plan and its size; write, build and run nothing', type: 'boolean', default: false })
      .option('cache', { describe: 'Model response cache', choices: ['off', 'read-write', 'replay-only'] as const, defaultDescription: 'read-write' })
      .option('model-timeout', { describe: 'Seconds per model call attempt; a timed-out attempt is retried once, so a hung endpoint fails a call in about a minute (raise it for slow local models)', type: 'number', defaultDescription: '30', coerce: positiveFlag('model-timeout') })
      .option('model-retries', { describe: 'Retries of a model call on rate limits, 5xx and network errors (backoff 1, 2, 4… s; honours Retry-After)', type: 'number', defaultDescription: '4', coerce: intFlag('model-retries', 0) })
      // Not part of the job's config: how long to wait and when to give up change no result, so --resume may use others.
      .option('docker-wait', { describe: 'Seconds to wait for a Docker daemon that stopped answering mid-job before starting no more rollouts (0: do not wait)', type: 'number', default: 60, coerce: intFlag('docker-wait', 0) })
      .option('max-consecutive-infra', { describe: 'Stop starting rollouts after N infrastructure errors in a row (model or Docker; 0: never)', type: 'number', default: 5, coerce: intFlag('max-consecutive-infra', 0) })
      // Not part of the job's config either: every shard of a job shares the config and lock.
      .option('shard', { describe: 'Run shard I of N: the k-th rollout of the id-sorted plan goes to shard k mod N + 1; shards (and resumes) of one job may run at once, each rollout claimed (joins the job if another shard started it)', type: 'string', coerce: shardFlag })
      .option('claim-stale', { describe: 'Seconds without a heartbeat after which another process\'s rollout claim is stale and taken over (a crashed shard); heartbeats every quarter of it', type: 'number', default: 60, coerce: positiveFlag('claim-stale') })
      .option('json', { describe: 'Print the summary as JSON', type: 'boolean', default: false })
      .example('$0 eval --model scripted/oracle --policy gold', 'Offline: the oracle through the agent loop under its gold policy')
      .example('$0 eval --model gpt-5 log-triage --dry-run', 'What a real-model run of one task would do, and how many rollouts')
      .example('$0 eval --model gpt-5 log-triage c-fix-build --job-name try1', 'A real model (OPENAI_API_KEY) on two tasks')
      .example('$0 eval --job-name try1 --resume', 'Continue an interrupted job from its saved config')
      // Not part of the job's config: where the shards run changes no result.
      .option('executor', { describe: 'Where the rollouts run: here, or as one Slurm array job whose tasks are the job\'s shards (eval --resume --shard I/N on the nodes; this process follows the job folder and prints the summary; Ctrl-C cancels the Slurm job)', choices: ['local', 'slurm'] as const, default: 'local' as const })
      .option('partition', { describe: 'With --executor slurm: the Slurm partition', type: 'string' })
      .option('array-size', { describe: `With --executor slurm: shards (array tasks), at most one per pending rollout`, type: 'number', defaultDescription: 'min(pending rollouts, 4)', coerce: intFlag('array-size', 1) })
      // Not part of the job's config either: which engine runs a rollout changes no result (result.json records it).
      .option('engine', { describe: 'A Docker engine to run rollouts on, URL[=SLOTS] (repeatable): unix:///path, tcp://host:2376 (TLS from DOCKER_TLS_VERIFY/DOCKER_CERT_PATH), ssh://[user@]host; SLOTS default -n. A free slot on any engine takes the next rollout; images are built on the engine that runs it; an engine that stays away (--docker-wait) is drained. Default: DOCKER_HOST with -n slots', type: 'string' })
      .option('sbatch-arg', { describe: 'With --executor slurm: an extra sbatch argument, e.g. --sbatch-arg=--time=120 (repeatable; after authbench\'s own, so it wins)', type: 'string' })
      .example('$0 eval --model scripted/oracle --job-name big --executor slurm --array-size 8 --partition batch', 'The job as a Slurm array of 8 shards; the summary when the last one ends')
      .example('$0 eval --model scripted/oracle --job-name big --shard 1/2', 'One of two processes sharing job big (the other: --shard 2/2); authbench status jobs/big')
      .example('$0 eval --model scripted/follow-injection --defense none --defense tool-boundary', 'Positive control vs kernel enforcement')
      .example('$0 eval --model scripted/oracle --policy my-policy.json log-triage', 'Evaluate a hand-written policy (scored and enforced)')
      .example('$0 eval --model scripted/replay --replay trajectory.json --defense none --defense tool-boundary', 'Play fixed commands, one per turn, whatever each observation says')
      .example('$0 eval --model gpt-5 -n 4 -k 3 --limit 5 --policy gold --policy allow-all', 'Five tasks, three attempts each')
      .example('$0 eval --model gpt-5 --policy generated --strategy sufficiency-tightness', 'The model writes each policy (read-only exploration), then executes under it')
      .example('$0 eval --model scripted/oracle --tasks ../authbench/tasks --base-map "python:3.12*=authbench/base:python3.11-bookworm"', 'Another base for some images (recorded in the job: --resume refuses other ones)')
      .epilog('Exit codes: 0 done, 1 bad input or a refused start (nothing written), 125 nothing measured, a rollout left undone or ended by an infrastructure error (--resume runs those), or an authbench failure, 130 interrupted.'),
  handler: async (args) => {
    const { POLICY_SOURCES, agentConfig, checkAgentConfig, checkJob, checkJobName, configFromFlags, controlLines, flaggedRollouts, funnelLine, infraErrors, jobControlReports, jobRunId, outcomeOf, parserLine, parserRows, policyWriterCost, readJobConfig, resumeConfig, runJob, selectTasks, summarize } = await import('../../evaluation/index.ts');
    const { DEFENSE_NAMES, REPLAY_REF, loadReplayFile } = await import('../../agent/index.ts');
    const { parseModelRef, formatModelRef } = await import('../../models/index.ts');
    const { readPolicyFile } = await import('../../goldstore/index.ts');

    if (args.resume && args['job-name'] === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', '--resume needs --job-name: the job to continue', { hint: 'ls the --jobs-dir folder for job names' });
    }
    if (args['job-name'] !== undefined) checkJobName(args['job-name']);
    if (args.shard !== undefined && args['job-name'] === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', '--shard needs --job-name: the job every shard shares', { hint: 'authbench eval --job-name NAME --shard 1/2 … (and 2/2 with the same flags)' });
    }
    if (Array.isArray(args.replay)) throw new AuthbenchError('INVALID_ARGUMENT', '--replay given more than once: one replay file per job');
    for (const d of listFlag(args.defense)) {
      if (!(DEFENSE_NAMES as readonly string[]).includes(d)) throw new AuthbenchError('INVALID_ARGUMENT', `--defense ${d}: unknown defense`, { hint: `valid: ${DEFENSE_NAMES.join(', ')}` });
    }
    const ref = args.model === undefined ? undefined : parseModelRef(args.model);
    if (ref !== undefined) {
      const replays = ref.provider === REPLAY_REF.provider && ref.name === REPLAY_REF.name;
      if (replays && args.replay === undefined && !args.resume) {
        throw new AuthbenchError('INVALID_ARGUMENT', `--model ${args.model ?? ''} needs --replay FILE`, {
          hint: 'a JSON array of shell commands, e.g. ["ls -la", {"command": "make test", "timeout_sec": 300}]',
        });
      }
      if (!replays && args.replay !== undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--replay is only for --model scripted/replay, not ${args.model ?? ''}`);
    }
    // Read and checked now, before anything is built or run; the config records its digest for --resume.
    let replay: { path: string; sha256: string } | undefined;
    let replayLength = 0;
    if (args.replay !== undefined) {
      const { commands, sha256 } = await loadReplayFile(args.replay);
      replay = { path: args.replay, sha256 };
      replayLength = commands.length;
    }
    // A --policy value is a source name, else a hand-written policy file (one per job, like --replay).
    let policies: ('gold' | 'allow-all' | 'deny-all' | 'generated' | 'file')[] | undefined;
    let policyFile: { path: string; sha256: string } | undefined;
    if (args.policy !== undefined) {
      policies = [];
      for (const p of listFlag(args.policy)) {
        if ((POLICY_SOURCES as readonly string[]).includes(p)) {
          policies.push(p as (typeof POLICY_SOURCES)[number]);
          continue;
        }
        if (policyFile !== undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--policy ${p}: one policy file per job (already ${policyFile.path})`);
        if (!existsSync(p)) throw new AuthbenchError('INVALID_ARGUMENT', `--policy ${p}: neither a policy source nor a file`, { hint: `sources: ${POLICY_SOURCES.join(', ')}; or the path of an authorization policy JSON file` });
        policyFile = { path: p, sha256: (await readPolicyFile(p)).sha256 };
        policies.push('file');
      }
      policies = [...new Set(policies)];
    }
    const listed = (v: string | string[] | undefined): string[] | undefined => (v === undefined ? undefined : [...new Set(listFlag(v))]);
    const build = await parseBuildFlags(args);
    const { baseMapEntries, buildArgs, hostAccess } = build;
    const include = args.task.length === 0 && args.include === undefined ? undefined : [...new Set([...listFlag(args.include), ...args.task])];
    // `--agent authbench` (the default) writes nothing: a built-in job's config is what it was before the flag.
    const agent = agentConfig(args.agent);
    const given: EvalFlags = {
      ...(ref === undefined ? {} : { model: formatModelRef(ref) }),
      ...(replay === undefined ? {} : { replay }),
      ...(args['base-url'] === undefined ? {} : { base_url: args['base-url'] }),
      ...(args.tasks === undefined ? shippedDir('tasks', 'tasks_dir') : { tasks_dir: args.tasks }),
      ...(args['oracle-traces'] === undefined ? shippedDir('oracle-traces', 'oracle_traces_dir') : { oracle_traces_dir: args['oracle-traces'] }),
      ...(include === undefined ? {} : { include }),
      ...(args.exclude === undefined ? {} : { exclude: listed(args.exclude) ?? [] }),
      ...(policies === undefined ? {} : { policies }),
      ...(policyFile === undefined ? {} : { policy_file: policyFile }),
      ...(args.strategy === undefined ? {} : { policy_strategy: args.strategy }),
      ...(args.limit === undefined ? {} : { limit: args.limit }),
      ...(args.defense === undefined ? {} : { defenses: listed(args.defense) ?? [] }),
      ...(args.attempts === undefined ? {} : { attempts: args.attempts }),
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      ...(args['max-turns'] === undefined ? {} : { max_turns: args['max-turns'] }),
      ...(args['tool-format'] === undefined ? {} : { tool_format: args['tool-format'] }),
      ...(args.shell === undefined ? {} : { shell: args.shell }),
      ...(args.tracer === undefined ? {} : { tracer: args.tracer }),
      ...(args.topology === undefined ? {} : { topology: args.topology }),
      ...(agent === undefined ? {} : { agent }),
      ...(args.counterfactuals === false ? { max_counterfactuals: 0 } : args['max-counterfactuals'] === undefined ? {} : { max_counterfactuals: args['max-counterfactuals'] }),
      ...(args.cache === undefined ? {} : { cache: args.cache }),
      ...(args['model-timeout'] === undefined ? {} : { model_timeout_sec: args['model-timeout'] }),
      ...(args['model-retries'] === undefined ? {} : { model_retries: args['model-retries'] }),
      // What changes an image goes in the config (and so the lock --resume compares); the CA and proxies do not.
      ...(baseMapEntries.length === 0 && Object.keys(buildArgs).length === 0 ? {} : { build: { base_map: baseMapEntries, build_args: buildArgs } }),
    };
    const jobName = args['job-name'];
    // --resume of a job not started yet, with the flags a new one needs, starts it (scripts rerun the same line).
    const saved = args.resume && jobName !== undefined && (ref === undefined || existsSync(join(args['jobs-dir'], jobName, 'config.json')));
    const config = saved && jobName !== undefined ? resumeConfig(jobName, await readJobConfig(join(args['jobs-dir'], jobName), jobName), given) : configFromFlags(given);
    if (config.policies.includes('generated') && config.model.startsWith('scripted/')) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--policy generated needs a provider model: ${config.model} cannot both write a policy and execute`, {
        hint: 'scripted policy writers run with `authbench policy --model scripted/gold <task>`',
      });
    }
    checkAgentConfig(config);
    if (config.shell === 'persistent' && config.agent !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--shell persistent is for the built-in loop: ${config.agent.name} runs its own shell`);
    }
    if (config.topology !== undefined && config.topology !== 'single' && config.agent !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--topology ${config.topology} is for the built-in loop: ${config.agent.name} runs one headless session`);
    }
    if (config.tool_format === 'text' && config.model.startsWith('scripted/')) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--tool-format text needs a provider model: ${config.model} proposes native tool calls`, {
        hint: 'text mode is for models served without tool calling, e.g. --model openai-compatible/NAME --base-url URL',
      });
    }
    if (replayLength >= config.max_turns) {
      process.stderr.write(chalk.yellow(`warning: --replay has ${replayLength} command(s) but --max-turns is ${config.max_turns}: episodes end at max_turns before the replay finishes\n`));
    }
    const name = jobName ?? `${config.model.replaceAll('/', '_')}-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`;
    const shard = args.shard === undefined ? {} : { shard: args.shard };
    const shardText = args.shard === undefined ? '' : ` shard ${args.shard.index}/${args.shard.count}`;
    const resumeHint = `authbench eval --job-name ${name} --resume${args.shard === undefined ? '' : ` --shard ${args.shard.index}/${args.shard.count}`}`;

    if (args['dry-run']) {
      const checked = await checkJob({ config, jobsDir: args['jobs-dir'], name, resume: args.resume, ...shard });
      const rows = checked.plan.rollouts.map((r) => ({ ...r, state: checked.plan.reused.has(r.id) ? 'done' : 'pending' }));
      const size = { job: checked.dir, ...(args.shard === undefined ? {} : { shard: `${args.shard.index}/${args.shard.count}` }), tasks: checked.tasks.length, rollouts: rows.length, pending: checked.plan.pending.length, reused: checked.plan.reused.size };
      if (args.json) {
        printJson({ ...size, config, rollouts: rows });
        return;
      }
      process.stdout.write(renderTable([
        { header: 'rollout', value: (r: (typeof rows)[number]) => r.id },
        { header: 'state', value: (r) => (r.state === 'done' ? chalk.dim('done') : 'pending') },
      ], rows));
      process.stdout.write(`dry run of ${size.job}${shardText} (${config.model}): ${size.tasks} task(s), ${size.rollouts} rollout(s), ${size.pending} to run${size.reused > 0 ? `, ${size.reused} done` : ''}; nothing was written\n`);
      return;
    }
    // Bad input (model, key, replay, policy file, tasks, gold, job folder) is exit 1 whatever the
    // state of the Docker daemon: checked here, before connecting (runJob checks again, cheaply).
    await checkJob({ config, jobsDir: args['jobs-dir'], name, resume: args.resume, ...shard });
    const slurmOnly = (['partition', 'array-size', 'sbatch-arg'] as const).filter((f) => args[f] !== undefined);
    if (args.executor !== 'slurm' && slurmOnly.length > 0) throw new AuthbenchError('INVALID_ARGUMENT', `--${slurmOnly[0] ?? ''} is for --executor slurm`);
    if (args.executor === 'slurm' && args.shard !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', '--executor slurm makes the shards itself: drop --shard', { hint: '--array-size N sets how many' });
    }
    const { checkEngineSupported, connectDocker, connectEngines, parseEngineSpec } = await import('../../docker/index.ts');
    const engineSpecs = [args.engine ?? []].flat().map(parseEngineSpec);
    if (args.executor === 'slurm' && engineSpecs.length > 0) throw new AuthbenchError('INVALID_ARGUMENT', '--engine is for --executor local: a Slurm node uses its own engine (DOCKER_HOST)');

    const controller = new AbortController();
    const onSigint = (): void => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write(chalk.yellow(args.executor === 'slurm' ? '\ninterrupt: cancelling the Slurm job (Ctrl-C again to quit now and leave it queued)\n' : '\ninterrupt: finishing running rollouts, starting no new ones (Ctrl-C again to quit now)\n'));
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    const progress = createProgress({ unit: 'rollouts', enabled: !args.json });
    const counts = { pass: 0, fail: 0, infra: 0, attack: 0, tampered: 0 };
    const tally = (): string =>
      `${chalk.green(`${counts.pass} pass`)} ${chalk.red(`${counts.fail} fail`)}${counts.attack > 0 ? chalk.red(` ${counts.attack} attack`) : ''}${counts.tampered > 0 ? chalk.magenta(` ${counts.tampered} tampered`) : ''}${counts.infra > 0 ? chalk.yellow(` ${counts.infra} infra`) : ''}`;
    const onEvent = (e: JobEvent): void => {
      const counter = chalk.dim(`[${e.done}/${e.total}]`);
      for (const left of e.kind === 'orphans-removed' ? (e.orphans?.left ?? []) : []) {
        progress.log(chalk.yellow(`could not remove ${left.id}, left by an earlier run of this job: ${left.message}; the job goes on without it (\`authbench clean\` removes it later)`));
      }
      if (e.kind === 'orphans-removed' && e.orphans !== undefined && e.orphans.containers + e.orphans.networks > 0) {
        progress.log(chalk.yellow(`removed ${e.orphans.containers} container(s) and ${e.orphans.networks} network(s) an earlier run of this job left when it was killed`));
      } else if (e.kind === 'orphans-elsewhere' && e.strays !== undefined) {
        progress.log(chalk.yellow(`warning: ${e.strays.containers} container(s) and ${e.strays.networks} network(s) of other authbench runs killed on this host are still on the engine, holding memory and disk (\`authbench clean --containers\` removes them, as does their own job's next run)`));
      } else if (e.kind === 'busy' && e.rollout !== undefined) {
        progress.log(chalk.dim(`${e.rollout.id}: claimed by another live process (authbench status), not run here`));
      } else if (e.kind === 'tracer-priority') {
        progress.log(chalk.yellow(`warning: the eBPF tracer's reader runs at normal priority (raising its priority was refused: no CAP_SYS_NICE): on a busy machine the kernel may drop trace records; every command that lost any is marked truncated (result.trace.truncated_commands)`));
      } else if (e.kind === 'tracer-paths') {
        progress.log(chalk.yellow(`warning: this kernel refused the eBPF tracer's resolved-path walk: an open through a symlink is traced under the name it used, not also the file it reached (strace's real_path); containment and tampering checks that look for the target miss it (--tracer strace records both)`));
      } else if (e.kind === 'disk-short' && e.disk !== undefined) {
        const gib = (b: number): string => (b / 1024 ** 3).toFixed(1);
        progress.log(chalk.yellow(`warning: ${e.disk.root} has ${gib(e.disk.freeBytes)} GiB free; the rollouts running at once on it may write ${gib(e.disk.neededBytes)} GiB, each up to its task's storage limit, and the images need room too: an agent that fills its limit could fill the disk (lower -n, or free space)`));
      } else if (e.kind === 'docker-wait') {
        progress.log(chalk.yellow(`the Docker daemon${engineSpecs.length > 1 && e.engine !== undefined ? ` at ${e.engine}` : ''} does not answer; waiting up to ${Math.round((e.waitMs ?? 0) / 1000)} s before starting another rollout (--docker-wait)`));
      } else if (e.kind === 'building') {
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
        // The agent's own limit, not ours: said, so a stopped disk-filler is not read as a plain failure.
        const limit = r.end_reason === 'storage_limit' ? chalk.yellow(` storage limit (${r.storage?.limit_mb ?? '?'} MiB)`) : '';
        const line = `${counter} ${mark} ${e.rollout.id}${attack}${limit} ${chalk.dim(`${(r.duration_ms / 1000).toFixed(1)}s`)}${r.infra_error === undefined ? '' : chalk.yellow(` ${r.infra_error.message}`)}`;
        // On a terminal only what needs a look stays on screen; the bar carries the counts.
        progress.finish({ done: e.done, total: e.total, line, keep: infra || tampered || r.utility_success !== true || r.attack_success === true, status: tally() });
      }
    };
    try {
      // The shards take what the job's config does not hold: how to run, not what to measure.
      const shardArgs = [
        ...['--concurrency', String(args.concurrency), '--claim-stale', String(args['claim-stale']), '--docker-wait', String(args['docker-wait']), '--max-consecutive-infra', String(args['max-consecutive-infra'])],
        ...(args['cpu-pinning'] === undefined ? [] : ['--cpu-pinning', args['cpu-pinning']]),
        ...[args['build-ca'] ?? []].flat().flatMap((f) => ['--build-ca', resolve(f)]),
        ...(args['build-proxy-from-env'] === true ? ['--build-proxy-from-env'] : []),
      ];
      const sbatchArgs = [args['sbatch-arg'] ?? []].flat();
      const outcome = args.executor === 'slurm'
        ? await runOnSlurm({ config, jobsDir: args['jobs-dir'], name, resume: args.resume, arraySize: args['array-size'], partition: args.partition, sbatchArgs, shardArgs, signal: controller.signal, log: (line) => progress.log(line), progress: (done, total, status) => progress.update(done, total, status) }).finally(() => progress.stop())
        : await (async () => {
            // What the engines make on the side (the harness check's container) is the job's too: its next run removes it if this process is killed.
            const runId = jobRunId(name);
            const lanes = engineSpecs.length === 0 ? undefined : await connectEngines(engineSpecs, args.concurrency, runId);
            const engine = lanes?.[0]?.engine ?? (await connectDocker({ runId }));
            // connectEngines checked its engines; DOCKER_HOST's is checked here (it may be a podman socket).
            if (lanes === undefined) await checkEngineSupported(engine);
            return runJob(engine, { ...(lanes === undefined ? {} : { engines: lanes }), config, jobsDir: args['jobs-dir'], name, resume: args.resume, ...shard, claims: { staleMs: args['claim-stale'] * 1000, heartbeatMs: (args['claim-stale'] * 1000) / 4 }, concurrency: args.concurrency, ...(args['cpu-pinning'] === undefined ? {} : { cpuPinning: args['cpu-pinning'] }), onEvent, signal: controller.signal, dockerWaitMs: args['docker-wait'] * 1000, maxConsecutiveInfra: args['max-consecutive-infra'], ...(hostAccess === undefined ? {} : { hostAccess }) });
          })().finally(() => progress.stop());
      const rows = summarize(outcome.results);
      // A positive control that never attacked with nothing enforced makes its "contained" rows meaningless: said per task.
      const controls = await jobControlReports(outcome.results, await selectTasks(config));
      if (args.json) {
        const parser = parserRows(outcome.results);
        printJson({ job: outcome.dir, ...(args.shard === undefined ? {} : { shard: `${args.shard.index}/${args.shard.count}` }), planned: outcome.planned, done: outcome.results.length, reused: outcome.reused, busy: outcome.busy, interrupted: outcome.interrupted, ...(outcome.stopped === undefined ? {} : { stopped: outcome.stopped }), incomplete: outcome.incomplete, summary: rows, controls, ...(parser.length === 0 ? {} : { parser }) });
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
        process.stdout.write(`job ${outcome.dir}${shardText}: ${outcome.results.length}/${outcome.planned} rollouts (${outcome.reused} reused${outcome.busy === 0 ? '' : `, ${outcome.busy} run by another process`})\n`);
        for (const line of controls.flatMap(controlLines)) process.stdout.write(`${line.warn ? chalk.yellow(`warning: ${safeText(line.text)}`) : safeText(line.text)}\n`);
        // The exact-goal funnel per row with attacks (containment/funnel.ts); rows without an attack goal print nothing.
        for (const r of rows) if (r.funnel !== null) process.stdout.write(`funnel ${r.policy}/${r.defense}: ${funnelLine(r.funnel)}\n`);
        for (const f of flaggedRollouts(outcome.results)) process.stdout.write(`${chalk.magenta(f.outcome)} ${f.rollout}: ${safeText(f.why)}\n`);
        // Text mode only: how the replies parsed, per model (an invalid one never ran and never ended an episode).
        for (const p of parserRows(outcome.results)) process.stdout.write(`parser (text actions) ${safeText(parserLine(p))}\n`);
        for (const i of infraErrors(outcome.results)) process.stdout.write(`${chalk.yellow('infra_error')} ${i.rollout}: ${i.source} ${i.code}: ${safeText(i.message)}\n`);
        if (rows.some((r) => r.policy === 'generated')) {
          // Rows share generations (one per task and attempt, used by every defense): the job total counts each once.
          const writer = policyWriterCost(outcome.results);
          process.stdout.write(`policy writer: ${writer.costUsd === null ? 'cost unknown' : `$${writer.costUsd.toFixed(4)}`} over ${writer.generations} generation(s), each counted once\n`);
        }
        // Last: the headline `authbench report` ends with and report.html opens with, the same numbers.
        const [{ jobHeadline }, { headlineText }] = await Promise.all([import('../../report/index.ts'), import('./report.ts')]);
        process.stdout.write(await headlineText(jobHeadline(outcome.dir, outcome.results)));
      }
      for (const d of outcome.drained ?? []) process.stderr.write(chalk.yellow(`engine drained: ${d.message}; the other engines ran the rest\n`));
      for (const l of outcome.leaked ?? []) process.stderr.write(chalk.yellow(`container of ${l.label} not removed (${l.message}); its result stands; \`authbench clean\` removes it\n`));
      if (outcome.stopped !== undefined) process.stderr.write(chalk.yellow(`${outcome.stopped.message}\n`));
      if (outcome.allInfra) process.stderr.write(chalk.yellow(`every rollout hit an infrastructure error; nothing was measured\n`));
      if (outcome.incomplete && !outcome.interrupted) {
        const undone = outcome.planned - outcome.results.length - outcome.busy;
        const infra = outcome.results.filter((r) => r.status === 'infra_error').length;
        process.stderr.write(chalk.yellow(`${undone} rollout(s) not run, ${infra} ended by an infrastructure error: resume with ${resumeHint}\n`));
        process.exitCode = 125;
      }
      if (outcome.interrupted) {
        process.stderr.write(chalk.yellow(`interrupted: resume with ${resumeHint}\n`));
        process.exitCode = 130;
      }
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};

export const evalCommand = command as unknown as CommandModule<object, object>;
