import { existsSync } from 'node:fs';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { ImportedTrajectory, Qualification } from '../../trajectories/index.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';
import { intFlag, listFlag } from '../flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable, type Column } from '../table.ts';

const pct = (x: number | null): string => (x === null ? chalk.dim('N/A') : `${(x * 100).toFixed(0)}%`);

function importLines(t: ImportedTrajectory): string[] {
  const mapped = t.proposals.filter((p) => p.command !== null).length;
  const l = t.linkage;
  return [
    `${t.file}: ${t.schema_version}, session ${t.session_id}, agent ${t.agent.name} ${t.agent.version}${t.agent.model_name === undefined ? '' : ` (${t.agent.model_name})`}${t.task_id === undefined ? '' : `, task ${t.task_id}`}`,
    `${t.steps} step(s), ${l.tool_calls} tool call(s): ${mapped} shell command(s) mapped, ${l.tool_calls - mapped} unmapped`,
    `linkage: ${l.observed}/${l.tool_calls} tool calls have their observation${l.unobserved.length === 0 ? '' : ` (missing: ${l.unobserved.join(', ')})`}; ${l.orphan_results} result(s) name no call, ${l.unlinked_results} without source_call_id`,
    `native endpoint: ${t.reward === null ? 'no reward found' : `reward ${t.reward} (${t.reward_file ?? ''})`}`,
    ...t.proposals.filter((p) => p.command === null).map((p) => `${chalk.yellow('unmapped')} ${p.id} ${p.tool}: ${p.unmapped ?? ''}`),
  ];
}

interface ImportArgs {
  trajectory: string;
  json: boolean;
}

const importCommand: CommandModule<object, ImportArgs> = {
  command: 'import <trajectory>',
  describe: 'Read an ATIF trajectory (or a Harbor trial folder): its tool calls as proposals, observations linked, shell actions mapped, the reward',
  builder: (y: Argv) =>
    y
      .positional('trajectory', { describe: 'trajectory.json, or a trial folder holding it and the verifier reward', type: 'string', demandOption: true })
      .option('json', { describe: 'Print the imported trajectory as JSON', type: 'boolean', default: false })
      .example('$0 trajectories import trial/trajectory.json', 'What authbench reads of it, and what it cannot replay'),
  handler: async (args) => {
    const { readImport } = await import('../../trajectories/index.ts');
    const imported = await readImport(args.trajectory);
    if (args.json) printJson(imported);
    else process.stdout.write(`${importLines(imported).map(safeText).join('\n')}\n`);
  },
};

interface ExportArgs {
  job: string;
  out: string | undefined;
  json: boolean;
}

const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export <job>',
  describe: "Write every rollout of a job as ATIF: trajectory.json and reward.txt in each rollout's folder (or <out>/<rollout>/), a trial folder",
  builder: (y: Argv) =>
    y
      .positional('job', { describe: 'The job folder (jobs/<name>)', type: 'string', demandOption: true })
      .option('out', { describe: 'Where the trial folders go', type: 'string', defaultDescription: "each rollout's own folder" })
      .option('json', { describe: 'Print what was written as JSON', type: 'boolean', default: false })
      .example('$0 trajectories export jobs/my-job', 'Into jobs/my-job/<rollout>/trajectory.json')
      .example('$0 trajectories export jobs/my-job --out atif/', 'Into atif/<rollout>/'),
  handler: async (args) => {
    const { exportJob } = await import('../../trajectories/index.ts');
    const written = await exportJob(args.job, args.out);
    if (args.json) {
      printJson(written);
      return;
    }
    for (const w of written) {
      process.stdout.write(w.file === undefined ? `${chalk.yellow('skipped')} ${w.rollout_id}: ${w.skipped ?? ''}\n` : `${w.file}${w.reward === null ? '' : ` (reward ${w.reward})`}\n`);
    }
    process.stdout.write(`${written.filter((w) => w.file !== undefined).length}/${written.length} rollout(s) exported\n`);
  },
};

interface ReplayArgs {
  trajectory: string;
  task: string | undefined;
  policy: string | string[] | undefined;
  defense: string | string[] | undefined;
  tasks: string;
  'oracle-traces': string;
  'jobs-dir': string;
  'job-name': string | undefined;
  concurrency: number;
  json: boolean;
}

function qualificationText(q: Qualification): string {
  const native = q.native === null ? 'no native reward: agreement not measured' : `native reward ${q.native.reward} (${q.native.pass ? 'pass' : 'fail'})`;
  const lines = [
    `replay of ${q.trajectory} (${q.agent}) on ${q.task_id}: job ${q.job}`,
    `${native}; endpoint agreement under allow-all: ${q.agreement.agreeing}/${q.agreement.compared} ${pct(q.agreement.rate)}`,
    `event linkage: ${q.linkage.observed}/${q.linkage.tool_calls} tool calls have their observation ${pct(q.linkage.rate)}`,
    `actions replayed: ${q.mapped}; not mappable: ${q.unmapped.length}`,
    ...q.unmapped.map((u) => `  ${chalk.yellow('unmapped')} ${u.call_id} ${u.tool}: ${u.reason}`),
  ];
  type Row = Qualification['rollouts'][number];
  const columns: Column<Row>[] = [
    { header: 'rollout', value: (r) => r.rollout_id },
    { header: 'status', value: (r) => r.status },
    { header: 'pass', value: (r) => (r.utility_success === null ? chalk.dim('N/A') : r.utility_success ? chalk.green('pass') : chalk.red('fail')) },
    { header: 'replayed', value: (r) => String(r.replayed), align: 'right' },
    { header: 'executed', value: (r) => String(r.executed), align: 'right' },
    { header: 'blocked', value: (r) => String(r.blocked), align: 'right' },
    { header: 'denied cmds', value: (r) => String(r.denied.filter((d) => d.denials > 0).length), align: 'right' },
  ];
  const denied = q.rollouts.flatMap((r) => r.denied.map((d) => `  ${r.rollout_id}: ${d.call_id} ${d.denials > 0 ? `${d.denials} denial(s)` : 'blocked'}: ${d.command}`));
  return `${lines.map(safeText).join('\n')}\n${renderTable(columns, q.rollouts)}${denied.length === 0 ? '' : `${['denied or blocked:', ...denied].map(safeText).join('\n')}\n`}authbench report ${q.job} renders the job\n`;
}

const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay <trajectory>',
  describe: "Replay an ATIF trajectory's shell actions on a task (scripted/replay, an eval job) under allow-all and the policies and defenses given; print the qualification",
  builder: (y: Argv) =>
    y
      .positional('trajectory', { describe: 'trajectory.json, or a Harbor trial folder', type: 'string', demandOption: true })
      .option('task', { describe: "Task id (default: the one the trajectory names, as authbench's exports do)", type: 'string' })
      .option('policy', { describe: 'Policy sources (gold, deny-all, …) or a policy file, besides allow-all (repeatable)', type: 'string' })
      .option('defense', { describe: 'Runtime defenses (repeatable)', type: 'string', defaultDescription: 'tool-boundary' })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('jobs-dir', { describe: 'Where the replay job goes', type: 'string', default: 'jobs' })
      .option('job-name', { describe: 'The replay job (default: replay-<task>-<time>)', type: 'string' })
      .option('concurrency', { alias: 'n', describe: 'Rollouts at a time', type: 'number', default: 1, coerce: intFlag('--concurrency', 1) })
      .option('json', { describe: 'Print the qualification as JSON', type: 'boolean', default: false })
      .example('$0 trajectories replay trial/ --task log-triage --policy deny-all', 'Would it still pass, and what would be denied?'),
  handler: async (args) => {
    const { readImport, runReplay } = await import('../../trajectories/index.ts');
    const { POLICY_SOURCES } = await import('../../evaluation/index.ts');
    const imported = await readImport(args.trajectory);
    const taskId = args.task ?? imported.task_id;
    if (taskId === undefined) throw new AuthbenchError('INVALID_ARGUMENT', 'the trajectory names no authbench task: pass --task', { file: imported.file });
    const policies: ('gold' | 'allow-all' | 'deny-all' | 'generated' | 'file')[] = [];
    let policyFile: { path: string; sha256: string } | undefined;
    for (const p of listFlag(args.policy)) {
      if ((POLICY_SOURCES as readonly string[]).includes(p)) {
        if (p === 'generated') throw new AuthbenchError('INVALID_ARGUMENT', '--policy generated needs a provider model; a replay has none');
        policies.push(p as (typeof POLICY_SOURCES)[number]);
        continue;
      }
      if (policyFile !== undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--policy ${p}: one policy file per replay (already ${policyFile.path})`);
      if (!existsSync(p)) throw new AuthbenchError('INVALID_ARGUMENT', `--policy ${p}: neither a policy source nor a file`, { hint: `sources: ${POLICY_SOURCES.join(', ')}` });
      const { readPolicyFile } = await import('../../goldstore/index.ts');
      policyFile = { path: p, sha256: (await readPolicyFile(p)).sha256 };
      policies.push('file');
    }
    const name = args['job-name'] ?? `replay-${taskId}-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`;
    const { connectDocker } = await import('../../docker/index.ts');
    const engine = await connectDocker();
    const { outcome, qualification } = await runReplay(engine, {
      imported,
      taskId,
      tasksDir: args.tasks,
      oracleTracesDir: args['oracle-traces'],
      policies,
      ...(policyFile === undefined ? {} : { policyFile }),
      defenses: [...new Set(listFlag(args.defense))],
      jobsDir: args['jobs-dir'],
      name,
      concurrency: args.concurrency,
    });
    if (args.json) printJson(qualification);
    else process.stdout.write(qualificationText(qualification));
    if (outcome.incomplete) {
      process.stderr.write(chalk.yellow(`some rollouts did not run or hit an infrastructure error: the qualification is partial\n`));
      process.exitCode = 125;
    }
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const SUBCOMMANDS: CommandModule<object, any>[] = [importCommand, exportCommand, replayCommand];

export const trajectoriesCommand: CommandModule<object, object> = {
  command: 'trajectories',
  describe: "ATIF trajectories (Harbor's format): import other harnesses' runs, export ours, replay them under any policy and defense",
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out
      .demandCommand(1, 'Name a subcommand: import, export, replay.')
      .example('$0 trajectories export jobs/my-job', "A job's rollouts as ATIF trial folders")
      .example('$0 trajectories replay jobs/my-job/log-triage__gold__tool-boundary__a1 --policy deny-all', 'Replay one under allow-all and deny-all');
  },
  handler: () => {},
};
