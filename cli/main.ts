import yargs, { type Argv } from 'yargs';
import { AUTHBENCH_VERSION } from '../core/index.ts';
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
    // Arguments after `--` are a command to run (sandbox run), never flags of ours.
    .parserConfiguration({ 'populate--': true })
    .strict()
    .demandCommand(1, 'Name a command; see authbench --help.')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns || 100))
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
