/**
 * Scale-out benchmark, section (f) of `make bench` (scripts/bench/scale.ts says what is compared):
 * one job of scripted-oracle rollouts on a starter task run as one process, as two shards at
 * once, and as one process over two engines — the main daemon and a dockerd of the bench's own
 * (scripts/bench/second-daemon.ts, removed at the end) — with the same number of slots in all,
 * through the real CLI, in rounds whose mode order rotates. A warm-up job on both engines first
 * builds on the second engine what its rollouts need (untimed). Needs root (the second dockerd);
 * without it the section says so and exits 0. A benchmark, not a test: it never fails on a rate.
 *
 *   npx node scripts/bench-scale.ts [--rollouts N] [--slots S] [--rounds R] [--task ID] [--quick] [--json]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import { parseDockerHost } from '../docker/index.ts';
import { CAN_START_DAEMON, SecondDaemon } from './bench/second-daemon.ts';
import { renderScale, roundOrder, scaleRows, type ScaleMode, type ScaleRun } from './bench/scale.ts';

const USAGE = 'usage: npx node scripts/bench-scale.ts [--rollouts N] [--slots S] [--rounds R] [--task ID] [--quick] [--json]';
const started = performance.now();
const progress = (line: string): void => {
  process.stderr.write(`bench-scale [${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new AuthbenchError('INVALID_ARGUMENT', `--${name} must be a positive integer, got ${value}`, { hint: USAGE });
  return n;
}

/** `authbench eval …` to its end; rejects on a non-zero exit, with its output's tail. */
function evalCli(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/authbench.ts', 'eval', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new AuthbenchError('INTERNAL', `bench-scale: eval ${args.join(' ')} exited ${String(code)}`, { details: stderr.split('\n').slice(-15) }))));
  });
}

/** Completed rollouts of a job folder. */
function completed(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { withFileTypes: true }).filter((d) => {
    const file = join(dir, d.name, 'result.json');
    if (!d.isDirectory() || !existsSync(file)) return false;
    const r = JSON.parse(readFileSync(file, 'utf8')) as { status?: string; utility_success?: boolean | null };
    return r.status === 'completed' && r.utility_success === true;
  }).length;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rollouts: { type: 'string' },
      slots: { type: 'string', default: '2' },
      rounds: { type: 'string' },
      task: { type: 'string', default: 'csv-sales-report' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n  --rollouts N  rollouts per job (default 8; --quick 4)\n  --slots S     rollout slots in all, even (default 2: -n 2 / two shards of 1 / two engines of 1)\n  --rounds R    times each mode runs (default 2; --quick 1)\n  --task ID     the starter task (default csv-sales-report)\n`);
    return;
  }
  const rollouts = positive('rollouts', values.rollouts ?? (values.quick ? '4' : '8'));
  const rounds = positive('rounds', values.rounds ?? (values.quick ? '1' : '2'));
  const slots = positive('slots', values.slots);
  if (slots % 2 !== 0) throw new AuthbenchError('INVALID_ARGUMENT', `--slots must be even (two shards or engines share them), got ${slots}`, { hint: USAGE });
  if (!CAN_START_DAEMON) {
    process.stdout.write('\n(f) scale-out: skipped: a second dockerd needs root, dockerd and unshare\n');
    return;
  }
  const load = loadavg();
  const main = parseDockerHost(readEnv(ENV.DOCKER_HOST)).endpoint;
  const jobs = mkdtempSync(join(tmpdir(), 'ab-bench-scale-'));
  const second = new SecondDaemon({ bridge: true });
  const job = (name: string, k: number): string[] => ['--jobs-dir', jobs, '--model', 'scripted/oracle', '--policy', 'gold', '-i', values.task, '-k', String(k), '--job-name', name, '--json'];
  const half = String(slots / 2);
  const modes: Record<ScaleMode, (name: string) => Promise<void>> = {
    'one-shard': (name) => evalCli([...job(name, rollouts), '-n', String(slots)]),
    'two-shards': (name) => Promise.all([1, 2].map((i) => evalCli([...job(name, rollouts), '-n', half, '--shard', `${i}/2`]))).then(() => undefined),
    'two-engines': (name) => evalCli([...job(name, rollouts), '--engine', `${main}=${half}`, '--engine', `${second.host}=${half}`]),
  };
  const runs: ScaleRun[] = [];
  try {
    progress(`second dockerd at ${second.host}`);
    await second.start();
    progress('warm-up on both engines (the second gets the base, the harness builder and the task image loaded from the main one)');
    await evalCli([...job('warm-up', 2), '--engine', `${main}=1`, '--engine', `${second.host}=1`]);
    for (let round = 0; round < rounds; round++) {
      for (const mode of roundOrder(round)) {
        const name = `${mode}-r${round}`;
        progress(`round ${round + 1}/${rounds}: ${mode}`);
        const t0 = performance.now();
        await modes[mode](name);
        const seconds = (performance.now() - t0) / 1000;
        runs.push({ mode, round, rollouts, seconds, ok: completed(join(jobs, name)) === rollouts });
      }
    }
  } finally {
    await second.stop();
    second.remove();
    rmSync(jobs, { recursive: true, force: true });
  }
  const rows = scaleRows(runs);
  if (values.json) process.stdout.write(`${JSON.stringify({ rollouts, slots, rounds, task: values.task, load, runs, rows }, null, 2)}\n`);
  else process.stdout.write(renderScale(rows, { rollouts, slots, load }));
}

try {
  await main();
} catch (e) {
  const err = e instanceof AuthbenchError ? e : undefined;
  process.stderr.write(`bench-scale: ${e instanceof Error ? e.message : String(e)}\n`);
  for (const d of err?.details ?? []) process.stderr.write(`  ${d}\n`);
  process.exitCode = 1;
}
