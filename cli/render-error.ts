import chalk from 'chalk';
import type { AuthbenchError} from '../core/index.ts';
import { isAuthbenchError } from '../core/index.ts';

/**
 * The one place an error becomes output and an exit code.
 * Returns the exit code; the caller sets process.exitCode.
 */
export function renderError(e: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (isAuthbenchError(e)) {
    write(formatAuthbenchError(e));
    return e.exitCode;
  }
  const err = e instanceof Error ? e : new Error(String(e));
  write(`${chalk.red('authbench: internal error:')} ${err.message}\n${chalk.dim(err.stack ?? '')}\n`);
  return 125;
}

export function formatAuthbenchError(e: AuthbenchError): string {
  const where = [e.file, e.field].filter((s) => s !== undefined).join(': ');
  const lines = [
    `${chalk.red(`authbench: ${e.code}`)}${where === '' ? '' : ` ${chalk.bold(where)}`}: ${e.message}`,
    ...e.details.map((d) => `  ${chalk.dim(d)}`),
  ];
  if (e.hint !== undefined) lines.push(`  ${chalk.cyan('hint:')} ${e.hint}`);
  if (e.cause instanceof Error && !isAuthbenchError(e.cause)) lines.push(`  ${chalk.dim(`cause: ${e.cause.message}`)}`);
  return `${lines.join('\n')}\n`;
}
