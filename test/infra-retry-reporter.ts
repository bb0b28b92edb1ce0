/**
 * A vitest reporter that collects the retry lines test/infra-retry.ts prints
 * (RETRY_MARKER …) from every worker, repeats them in one block at the end of
 * the run, and — given `--outputFile.infraRetries=FILE` — writes them there as
 * JSON (`{ "retries": [line, …] }`) for scripts/run-tests.ts to count in the
 * tier summary. Used alongside the default reporter, never instead of it.
 * Imports nothing but node:fs, so scripts/run-tests.ts can read its format.
 */
import { writeFileSync } from 'node:fs';
import type { UserConsoleLog } from 'vitest';
import type { Reporter, Vitest } from 'vitest/node';

/** Every retry line starts with this (test/infra-retry.ts prints them); the reporter counts lines that do. */
export const RETRY_MARKER = '[infra-retry]';

/** The key of `outputFile` this reporter writes to. */
export const OUTPUT_KEY = 'infraRetries';

/** Lines of `text` that are retry lines. */
export function retryLines(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(RETRY_MARKER));
}

export interface RetryReport {
  retries: string[];
}

export default class InfraRetryReporter implements Reporter {
  readonly retries: string[] = [];
  private outputFile: string | undefined;
  private readonly print: (text: string) => void;

  constructor(options: { print?: (text: string) => void; outputFile?: string } = {}) {
    this.print = options.print ?? ((text) => process.stdout.write(text));
    this.outputFile = options.outputFile;
  }

  onInit(vitest: Vitest): void {
    const configured = vitest.config.outputFile;
    if (this.outputFile === undefined && typeof configured === 'object') this.outputFile = configured[OUTPUT_KEY];
  }

  onUserConsoleLog(log: UserConsoleLog): void {
    this.retries.push(...retryLines(log.content));
  }

  onTestRunEnd(): void {
    if (this.retries.length > 0) {
      this.print(`\n${this.retries.length} infrastructure retr${this.retries.length === 1 ? 'y' : 'ies'} in this run:\n${this.retries.map((l) => `  ${l}`).join('\n')}\n`);
    }
    if (this.outputFile !== undefined) {
      const report: RetryReport = { retries: this.retries };
      writeFileSync(this.outputFile, `${JSON.stringify(report, null, 2)}\n`);
    }
  }
}
