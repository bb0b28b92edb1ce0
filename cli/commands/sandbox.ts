import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { safeText } from '../output-text.ts';
import { mark, printJson, renderTable, type Column } from '../table.ts';
import type { SelftestRow } from '../../sandbox/selftest/index.ts';
import { sandboxAdversarialCommand } from './sandbox-adversarial.ts';
import { sandboxRunCommand } from './sandbox-run.ts';

interface SelftestArgs {
  json: boolean;
}

const selftestCommand: CommandModule<object, SelftestArgs> = {
  command: 'selftest',
  describe: 'Run the launcher escape suite: every probe denied under deny rules, none under allow rules',
  builder: (y: Argv) =>
    y
      .option('json', { describe: 'Print JSON instead of text', type: 'boolean', default: false })
      .example('$0 sandbox selftest', 'Build the launcher and run every escape probe in a container')
      .example('$0 sandbox selftest --json', 'Rows and the launcher report as JSON'),
  handler: async (args) => {
    const { connectDocker } = await import('../../docker/index.ts');
    const { runSelftest, summarize } = await import('../../sandbox/selftest/index.ts');
    const engine = await connectDocker();
    const progress = args.json || process.stderr.isTTY !== true ? undefined : (row: SelftestRow): void => {
      process.stderr.write(`${row.ok ? '.' : 'F'}`);
    };
    const result = await runSelftest(engine, progress === undefined ? {} : { onProbe: progress });
    if (progress !== undefined) process.stderr.write('\n');
    const summary = summarize(result.rows);
    if (args.json) {
      printJson({ report: result.report, summary, rows: result.rows });
    } else {
      const columns: Column<SelftestRow>[] = [
        { header: 'probe', value: (r) => r.id },
        { header: 'mode', value: (r) => (r.control ? 'allow (control)' : r.mode) },
        { header: 'expected', value: (r) => r.expected },
        { header: 'observed', value: (r) => r.observed },
        { header: 'ok', value: (r) => (r.ok ? mark.pass() : mark.fail()) },
        // A probe's detail quotes what it printed inside the container.
        { header: 'detail', value: (r) => chalk.dim(safeText(r.detail).slice(0, 70)) },
      ];
      process.stdout.write(renderTable(columns, result.rows));
      const { report } = result;
      process.stdout.write(
        `\nLandlock ABI ${report.landlock_abi}, enforcement ${report.enforcement}, seccomp ${report.seccomp ? 'on' : 'off'}\n` +
          `${summary.probes} probes: ${summary.deniedUnderDeny}/${summary.probes} denied under deny, ` +
          `${summary.falseDenials} false denials under allow\n`,
      );
    }
    if (summary.failures > 0) process.exitCode = 1;
  },
};

/** `authbench sandbox <subcommand>`; add a subcommand by adding it to SUBCOMMANDS. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const SUBCOMMANDS: CommandModule<object, any>[] = [sandboxRunCommand, selftestCommand, sandboxAdversarialCommand];

export const sandboxCommand: CommandModule<object, object> = {
  command: 'sandbox',
  describe: 'The Landlock + seccomp enforcement launcher',
  builder: (y: Argv) => {
    let out = y;
    for (const sub of SUBCOMMANDS) out = out.command(sub);
    return out
      .demandCommand(1, `Name a subcommand: ${SUBCOMMANDS.map((c) => String(c.command)).join(', ')}.`)
      .example('$0 sandbox selftest', 'Check that the launcher stops every escape probe')
      .example('$0 sandbox adversarial', 'Play hostile trajectories through real rollouts and check each ends as it must');
  },
  handler: () => {},
};
