/**
 * Runs the whole vitest suite and closes with one plain summary line
 * ("vitest: N passed, N failed, N skipped") that any CI log reader understands.
 * The exit code is vitest's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'authbench-vitest-'));
const report = join(dir, 'report.json');
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTests: number;
}

let code = run.status ?? 1;
try {
  const r = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
  process.stdout.write(`\nvitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped\n`);
  if (r.numTotalTests === 0) {
    process.stderr.write('run-tests: no test ran\n');
    code = 1;
  }
} catch {
  process.stderr.write('run-tests: vitest wrote no JSON report\n');
  code = code === 0 ? 1 : code;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
