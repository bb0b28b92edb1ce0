/**
 * The test tiers, one after another, each with its wall time: typecheck, lint,
 * the unit project, the package project (`npm pack`, the tarball installed into
 * a temp folder from the registry, its `authbench` run), and the Docker project (`--tier ci`: the sampled Docker
 * tier `make test` runs; `--tier full`: everything, for `make test-full`).
 * Closes with one plain summary line ("vitest: N passed, N failed, N skipped")
 * that any CI log reader understands, the infrastructure retries of the run
 * (test/infra-retry.ts: each one named, never silently passed), and the total
 * wall time, and every failed test with the first line of its failure (the
 * tail of a CI log is often all a reader gets). Stops at the first tier that fails (a type error makes every
 * later tier's output noise).
 *   npx node scripts/run-tests.ts [--tier ci|full] [--only typecheck,lint,unit,package,docker] [vitest args…]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OUTPUT_KEY, type RetryReport } from '../test/infra-retry-reporter.ts';

const { values: args, positionals } = parseArgs({
  options: {
    tier: { type: 'string', default: 'ci' },
    only: { type: 'string' },
  },
  allowPositionals: true,
  strict: false,
});
const tier = String(args.tier);
if (tier !== 'ci' && tier !== 'full') {
  process.stderr.write(`run-tests: --tier must be ci or full, got ${tier}\n`);
  process.exit(2);
}
const only = typeof args.only === 'string' ? new Set(args.only.split(',')) : undefined;

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTests: number;
  testResults?: { name: string; message?: string; assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[] }[];
}

/** First line of a failure message, colour codes removed, cut to a readable length. */
function firstLine(message: string | undefined): string {
  const line = (message ?? '').replace(/\u001b\[[0-9;]*m/g, '').split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 240 ? `${line.slice(0, 237)}...` : line.trim();
}

/** Each failed test of a report as "file > name: first line of the failure", so a log's tail names what broke. */
function failuresOf(r: JsonReport): string[] {
  const out: string[] = [];
  for (const file of r.testResults ?? []) {
    const rel = file.name.startsWith(process.cwd()) ? file.name.slice(process.cwd().length + 1) : file.name;
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failed) out.push(`${rel} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
    // A file that failed to load has no failed assertions, only a message.
    if (failed.length === 0 && file.message !== undefined && file.message !== '') out.push(`${rel}: ${firstLine(file.message)}`);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'authbench-vitest-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
/** Every infrastructure retry of every tier, as the retry helper printed it. */
const retries: string[] = [];
/** Every failed test of every tier, repeated at the end of the log. */
const failures: string[] = [];
const times: string[] = [];
const started = performance.now();
let code = 0;

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** The retry lines the reporter wrote for a tier; undefined when it wrote none (vitest never got that far). */
function readRetries(file: string): string[] | undefined {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as RetryReport).retries;
  } catch {
    return undefined;
  }
}

function tierStep(name: string, argv: string[], vitest: boolean): boolean {
  if (only !== undefined && !only.has(name)) return true;
  process.stdout.write(`\n== tier ${name} (${tier}) ==\n`);
  const t0 = performance.now();
  const report = join(dir, `${name}.json`);
  const retryReport = join(dir, `${name}-retries.json`);
  const full = vitest
    ? [...argv, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, '--reporter=./test/infra-retry-reporter.ts', `--outputFile.${OUTPUT_KEY}=${retryReport}`, ...positionals]
    : argv;
  const run = spawnSync('npx', full, { stdio: 'inherit', env: { ...process.env, AUTHBENCH_TEST_TIER: tier } });
  const ms = performance.now() - t0;
  let line = `tier ${name}: ${run.status === 0 ? 'ok' : `failed (exit ${String(run.status)})`} in ${seconds(ms)}`;
  if (vitest) {
    try {
      const r = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
      totals.passed += r.numPassedTests;
      totals.failed += r.numFailedTests;
      failures.push(...failuresOf(r));
      totals.skipped += r.numPendingTests + r.numTodoTests;
      const retried = readRetries(retryReport);
      retries.push(...(retried ?? []));
      const retryNote = retried === undefined ? 'infra retries unknown (no retry report)' : `${retried.length} infra ${retried.length === 1 ? 'retry' : 'retries'}`;
      line = `tier ${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped, ${retryNote} in ${seconds(ms)}`;
      if (r.numTotalTests === 0) {
        line += ' (no test ran)';
        code = code === 0 ? 1 : code;
      }
    } catch {
      line += ' (vitest wrote no JSON report)';
      code = code === 0 ? 1 : code;
    }
  }
  times.push(line);
  process.stdout.write(`${line}\n`);
  if (run.status !== 0) code = run.status ?? 1;
  return run.status === 0;
}

try {
  const ok =
    tierStep('typecheck', ['tsc', '--noEmit'], false) &&
    tierStep('lint', ['eslint', '.'], false) &&
    tierStep('unit', ['vitest', 'run', '--project', 'unit'], true) &&
    tierStep('package', ['vitest', 'run', '--project', 'package'], true) &&
    tierStep('docker', ['vitest', 'run', '--project', 'docker*'], true);
  if (!ok) process.stdout.write('\nstopped at the first tier that failed\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`\n${times.join('\n')}\nwall time: ${seconds(performance.now() - started)} (tier ${tier})\n`);
process.stdout.write(`vitest: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
// Retried work passed or failed on its second attempt; either way the run's log names every retry.
if (failures.length > 0) process.stdout.write(`failed tests:${failures.map((l) => `\n  ${l}`).join('')}\n`);
process.stdout.write(`infra retries: ${retries.length}${retries.map((l) => `\n  ${l}`).join('')}\n`);
process.exit(code);
