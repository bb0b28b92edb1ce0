import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import type { AgentAdapter } from '../../agents/index.ts';
import { hostAccessLine, parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';
import { safeText } from '../output-text.ts';
import { selectTasks } from '../select-tasks.ts';
import { printJson, renderTable, type Column } from '../table.ts';

interface ListArgs {
  json: boolean;
}

/** The headless argv as a reader would type it (display only; runs keep it an array). */
function shown(adapter: AgentAdapter): string {
  return adapter.headless.map((a) => (/^[\w./{}=:-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

const listCommand: CommandModule<object, ListArgs> = {
  command: 'list',
  describe: 'The installed agents authbench knows: package, pinned version, headless command, prompts turned off',
  builder: (y: Argv) =>
    y
      .option('json', { describe: 'Print JSON (the full adapters)', type: 'boolean', default: false })
      .example('$0 agents list', 'Each agent with its pinned version and headless command')
      .example('$0 agents list --json', 'The adapters as data: environment, prompts turned off, runtime grant'),
  handler: async (args) => {
    const { listAgents } = await import('../../agents/index.ts');
    const agents = listAgents();
    if (args.json) return printJson(agents);
    const columns: Column<AgentAdapter>[] = [
      { header: 'agent', value: (a) => a.name },
      { header: 'package', value: (a) => a.install.package },
      { header: 'version', value: (a) => a.install.version },
      { header: 'headless command', value: shown },
      { header: 'prompts off', value: (a) => a.promptsOff.flags.join(' ') },
    ];
    process.stdout.write(renderTable(columns, agents));
  },
};

interface BuildArgs extends BuildFlagArgs {
  agent: string;
  task: string | undefined;
  tasks: string;
  json: boolean;
}

const buildCommand: CommandModule<object, BuildArgs> = {
  command: 'build [task]',
  describe: 'Install an agent into a cached layer over a task image (or the base image) and print `<agent> --version` from inside it',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .positional('task', { describe: 'Task id or folder (default: the offline base image, no task)', type: 'string' })
      .option('agent', { describe: 'Agent name (see `agents list`)', type: 'string', demandOption: true })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('json', { describe: 'Print JSON instead of lines', type: 'boolean', default: false })
      .example('$0 agents build --agent claude-code log-triage', 'Claude Code over the log-triage image')
      .example('$0 agents build --agent codex --build-ca corp-ca.pem', 'Codex over the base image, the registry behind a TLS-intercepting proxy'),
  handler: async (args) => {
    const { agentVersion, buildAgentLayer, getAgent } = await import('../../agents/index.ts');
    const { BASE_IMAGE_REF, connectDocker, ensureBaseImages, newRunId } = await import('../../docker/index.ts');
    const { buildTaskImage } = await import('../../taskenv/index.ts');
    const agent = getAgent(args.agent);
    if (Array.isArray(args.task)) throw new AuthbenchError('INVALID_ARGUMENT', 'agents build takes one task');
    const flags = await parseBuildFlags(args);
    const engine = await connectDocker();
    const log = (line: string): void => {
      if (!args.json) process.stderr.write(chalk.dim(`  ${safeText(line)}\n`));
    };
    let taskImage = BASE_IMAGE_REF;
    let taskId: string | undefined;
    if (args.task === undefined) {
      await ensureBaseImages(engine, { onProgress: log });
    } else {
      const [task] = await selectTasks(args.tasks, [args.task]);
      if (task === undefined) throw new AuthbenchError('TASK_NOT_FOUND', `no task ${args.task}`);
      taskImage = (await buildTaskImage(engine, task, { ...flags, onProgress: log })).tag;
      taskId = task.id;
    }
    const layer = await buildAgentLayer(engine, {
      taskImage,
      agent,
      onProgress: log,
      ...(taskId === undefined ? {} : { taskId }),
      ...(flags.hostAccess === undefined ? {} : { hostAccess: flags.hostAccess }),
    });
    const version = await agentVersion(engine, layer.tag, agent, newRunId());
    if (args.json) {
      printJson({ agent: agent.name, package: agent.install.package, version: agent.install.version, over: taskImage, image: layer.tag, built: layer.built, reports: version });
      return;
    }
    process.stdout.write(`${layer.built ? chalk.green('built ') : chalk.dim('cached')} ${agent.name} ${agent.install.package}@${agent.install.version} over ${taskImage}\n`);
    process.stdout.write(`image    ${layer.tag}\n`);
    process.stdout.write(`--version ${safeText(version)}\n`);
    const access = hostAccessLine([layer.hostAccess]);
    if (access !== undefined) process.stdout.write(chalk.dim(`${access}\n`));
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const SUBCOMMANDS: CommandModule<object, any>[] = [listCommand, buildCommand];

export const agentsCommand: CommandModule<object, object> = {
  command: 'agents',
  describe: 'Installed CLI agents (Claude Code, Codex, OpenClaw): list them, build their layer over a task image',
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out.demandCommand(1, `Name a subcommand: ${SUBCOMMANDS.map((c) => String(c.command)).join(', ')}.`).example('$0 agents list', 'Each agent with its pinned version');
  },
  handler: () => {},
};
