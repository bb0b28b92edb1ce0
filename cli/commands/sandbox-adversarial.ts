import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import type { RunKind, Verdict } from '../../adversarial/index.ts';
import { safeText } from '../output-text.ts';
import { createProgress, itemLine } from '../progress.ts';
import { mark, printJson, renderTable, type Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface AdversarialArgs {
  only: string[] | undefined;
  runs: string[] | undefined;
  tasks: string;
  'oracle-traces': string;
  'jobs-dir': string;
  'job-name': string | undefined;
  concurrency: number;
  tracer: 'strace' | 'ebpf' | undefined;
  list: boolean;
  json: boolean;
}

export const sandboxAdversarialCommand: CommandModule<object, AdversarialArgs> = {
  command: 'adversarial',
  describe: 'Play the adversarial suite: hostile trajectories through the real rollout path, each with the outcome it must produce',
  builder: (y: Argv) =>
    y
      .option('only', { describe: 'Only these scenarios (repeatable)', type: 'string', array: true })
      .option('runs', { describe: 'Only these runs (repeatable)', type: 'string', array: true, choices: ['gold', 'allow-all', 'narrow', 'none'] })
      .option('tasks', { describe: 'Folder of task folders (the bundled starter tasks)', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Where gold lives', type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('jobs-dir', { describe: 'Where the job folder is written', type: 'string', default: 'jobs' })
      .option('job-name', { describe: 'Job folder name (default adversarial-<time>)', type: 'string' })
      .option('concurrency', { alias: 'n', describe: 'Rollouts at once', type: 'number', default: 2 })
      .option('tracer', { describe: 'What traces the rollouts: strace, or eBPF from the host as `eval --tracer ebpf` (the persistent-shell scenarios are left out)', choices: ['strace', 'ebpf'] as const, defaultDescription: 'strace' })
      .option('list', { describe: 'List the scenarios and exit', type: 'boolean', default: false })
      .option('json', { describe: 'Print JSON instead of text', type: 'boolean', default: false })
      .example('$0 sandbox adversarial', 'Every scenario under every run it names (about two minutes on two cores)')
      .example('$0 sandbox adversarial --only sigstop-agent --only symlink-tmp-to-etc', 'Two scenarios')
      .example('$0 sandbox adversarial --list', 'What each scenario tries and which threat it covers'),
  handler: async (args) => {
    const { SCENARIOS, runAdversarial, plan } = await import('../../adversarial/index.ts');
    if (args.list) {
      const rows = SCENARIOS.map((s) => ({ id: s.id, threat: s.threat, runs: s.runs.join(','), outcome: s.expect.outcome, description: s.description }));
      if (args.json) printJson(rows);
      else
        process.stdout.write(
          renderTable(
            [
              { header: 'scenario', value: (r) => r.id },
              { header: 'threat', value: (r) => r.threat },
              { header: 'runs', value: (r) => r.runs },
              { header: 'must end', value: (r) => r.outcome },
            ],
            rows,
          ),
        );
      return;
    }
    const options = {
      ...(args.only === undefined ? {} : { only: args.only }),
      ...(args.runs === undefined ? {} : { runs: args.runs as RunKind[] }),
      ...(args.tracer === undefined ? {} : { tracer: args.tracer }),
    };
    const total = plan(options).length;
    const { connectDocker } = await import('../../docker/index.ts');
    const engine = await connectDocker();
    const progress = createProgress({ unit: 'rollouts', enabled: !args.json });
    const outcome = await runAdversarial(engine, {
      ...options,
      tasksDir: args.tasks,
      oracleTracesDir: args['oracle-traces'],
      jobsDir: args['jobs-dir'],
      name: args['job-name'] ?? `adversarial-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}`,
      concurrency: args.concurrency,
      onVerdict: (v, done) => {
        const line = itemLine(done, total, v.ok, `${v.scenario} ${v.run}: ${v.ok ? v.outcome : v.failures.join('; ')}`);
        progress.finish({ done, total, line, keep: !v.ok, status: '' });
      },
    }).finally(() => progress.stop());
    const failed = outcome.verdicts.filter((v) => !v.ok);
    if (args.json) {
      printJson({ job: outcome.dir, verdicts: outcome.verdicts });
    } else {
      const columns: Column<Verdict>[] = [
        { header: 'scenario', value: (v) => v.scenario },
        { header: 'run', value: (v) => v.run },
        { header: 'must end', value: (v) => v.expected },
        { header: 'ended', value: (v) => v.outcome },
        { header: 'ok', value: (v) => (v.ok ? mark.pass() : mark.fail()) },
        { header: 'why not', value: (v) => chalk.dim(safeText(v.failures.join('; ')).slice(0, 100)) },
      ];
      process.stdout.write(renderTable(columns, outcome.verdicts));
      process.stdout.write(`${outcome.verdicts.length - failed.length}/${outcome.verdicts.length} runs as expected; job ${outcome.dir}\n`);
    }
    if (failed.length > 0) process.exitCode = 1;
  },
};
