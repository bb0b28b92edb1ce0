import chalk from 'chalk';
import { stripVTControlCharacters } from 'node:util';
import { escapeJsonText } from './output-text.ts';

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  align?: 'left' | 'right';
}

/** Render rows as an aligned text table (colour codes do not count toward width). */
export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const width = (s: string): number => stripVTControlCharacters(s).length;
  const widths = columns.map((c, i) => Math.max(width(c.header), ...cells.map((row) => width(row[i] ?? ''))));
  const pad = (s: string, i: number): string => {
    const fill = ' '.repeat((widths[i] ?? 0) - width(s));
    return columns[i]?.align === 'right' ? fill + s : s + fill;
  };
  const header = columns.map((c, i) => chalk.bold(pad(c.header, i))).join('  ');
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  const body = cells.map((row) => row.map((s, i) => pad(s, i)).join('  ').trimEnd());
  return [header.trimEnd(), chalk.dim(rule), ...body].join('\n') + '\n';
}

/** Pretty JSON on stdout; untrusted strings in it are escaped so a terminal shows them as they are (see escapeJsonText). */
export function printJson(value: unknown): void {
  process.stdout.write(`${escapeJsonText(JSON.stringify(value, null, 2))}\n`);
}

export const mark = {
  yes: (): string => chalk.green('yes'),
  no: (): string => chalk.dim('no'),
  pass: (): string => chalk.green('pass'),
  fail: (): string => chalk.red('FAIL'),
};
