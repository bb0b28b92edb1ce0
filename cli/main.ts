import chalk from 'chalk';
import yargs, { type Argv } from 'yargs';
import { AUTHBENCH_VERSION, ENV, readEnv } from '../core/index.ts';
import { renderError } from './render-error.ts';
import { commands } from './commands/index.ts';

/**
 * Build the yargs program. Exported so flag parsing is unit-tested without
 * running anything: commands are registered with lazy handlers.
 */
export function createCli(argv: readonly string[]): Argv {
  let cli = yargs([...argv])
    .scriptName('authbench')
    .version(AUTHBENCH_VERSION)
    // -h as well as --help, on every command (yargs' help option is global, and so is its alias).
    .help('help')
    .alias('help', 'h')
    // Help and --version return from main like any command (bin sets the exit code), so they run in-process in tests.
    .exitProcess(false)
    // Arguments after `--` are a command to run (sandbox run), never flags of ours.
    .parserConfiguration({ 'populate--': true })
    .strict()
    .demandCommand(1, 'Name a command; see authbench --help.')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .example('$0 tasks list', 'The bundled tasks: stage, dataset, oracle, gold')
    .example('$0 eval --model scripted/oracle --policy gold log-triage', 'Offline: one task through the agent loop under its gold policy')
    .example('$0 eval --model gpt-5 log-triage --dry-run', 'What a real-model run would do, and how many rollouts; nothing written')
    .example('$0 eval --job-name try1 --resume', 'Continue an interrupted job from its saved config')
    .example('$0 report jobs/try1', 'Tables and a self-contained report.html over a job')
    .example('$0 <command> -h', "A command's flags and examples")
    .epilog('Docs: README.md. Exit codes: 0 ok, 1 bad input or failed check, 125 authbench/infrastructure failure.')
    .fail((msg, err) => {
      // A flag's coerce check fails as a YError wrapping its message: bad input, not an internal error.
      if (err?.name === 'YError') throw new CliUsageError(err.message);
      throw err ?? new CliUsageError(msg);
    });
  for (const command of commands) cli = cli.command(command);
  return cli;
}

export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

export async function main(argv: readonly string[]): Promise<number> {
  // https://no-color.org: chalk reads only FORCE_COLOR and --no-color, so NO_COLOR is applied here.
  if (readEnv(ENV.NO_COLOR) !== undefined) chalk.level = 0;
  try {
    await createCli(argv).parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CliUsageError) {
      process.stderr.write(`authbench: ${e.message}\nRun with --help for usage.\n`);
      return 1;
    }
    return renderError(e);
  }
}
