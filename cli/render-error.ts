import chalk from 'chalk';
import type { AuthbenchError} from '../core/index.ts';
import { isAuthbenchError } from '../core/index.ts';
import { safeText } from './output-text.ts';

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
  write(`${chalk.red('authbench: internal error:')} ${safeText(err.message)}\n${chalk.dim(safeText(err.stack ?? ''))}\n`);
  return 125;
}

/**
 * Messages and details quote what went wrong, and that is often untrusted text: a failed build's
 * last log lines, a validator's output, a model's answer, a file name from a dataset. Each part is
 * made safe (safeText) before it is coloured.
 */
export function formatAuthbenchError(e: AuthbenchError): string {
  const where = safeText([e.file, e.field].filter((s) => s !== undefined).join(': '));
  const lines = [
    `${chalk.red(`authbench: ${e.code}`)}${where === '' ? '' : ` ${chalk.bold(where)}`}: ${safeText(e.message)}`,
    ...e.details.map((d) => `  ${chalk.dim(safeText(d))}`),
  ];
  if (e.hint !== undefined) lines.push(`  ${chalk.cyan('hint:')} ${safeText(e.hint)}`);
  if (e.cause instanceof Error && !isAuthbenchError(e.cause)) lines.push(`  ${chalk.dim(`cause: ${safeText(e.cause.message)}`)}`);
  return `${lines.join('\n')}\n`;
}
