/**
 * A Docker daemon restarted in the middle of an `eval` job (issue #16, item 3). The test starts a
 * SECOND dockerd of its own (own socket, data root, exec root, pidfile and network namespace; no
 * bridge, no iptables),
 * so the main daemon other tests and runs use is never stopped or touched beyond reading images
 * from it; loads into it the images one starter task needs (the task image, its base, the harness
 * builder: no build, no network); runs `eval` against it through DOCKER_HOST; stops the daemon as
 * soon as the first rollout has its result and starts it again. The job must end on its own with
 * the summary and exit 125 (the rollouts the restart hit are infrastructure errors), never a stack
 * trace; `--resume` then completes every rollout exactly once. The daemon and its folders are
 * removed whatever happens.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, connectDocker, type DockerEngine } from '../../docker/index.ts';
import type { RolloutResult } from '../../evaluation/index.ts';
import { LAUNCHER_SOURCE_DIR } from '../../sandbox/launcher/index.ts';
import { loadTask } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { CAN_START_DAEMON, DOCKERD, SecondDaemon, UNSHARE } from '../../scripts/bench/second-daemon.ts';

const TASK = 'csv-sales-report';
const ROLLOUTS = 6;
const ROOT = process.getuid?.() === 0;
const CAN_RUN = CAN_START_DAEMON;
if (!CAN_RUN) {
  process.stderr.write(
    `[daemon-restart.test] SKIPPED: needs root, dockerd and unshare (found: ${DOCKERD ?? 'no dockerd'}, ${UNSHARE ?? 'no unshare'}, root: ${String(ROOT)})\n`,
  );
}

let main: DockerEngine;
let second: SecondDaemon | undefined;
let jobs = '';
/** The main daemon's bridge; the second daemon must leave it alone (see SecondDaemon.start). */
const MAIN_BRIDGE = '/sys/class/net/docker0';
let mainBridgeBefore = false;

beforeAll(async () => {
  if (!CAN_RUN) return;
  jobs = mkdtempSync(join(tmpdir(), 'ab-restart-jobs-'));
  mainBridgeBefore = existsSync(MAIN_BRIDGE);
  main = await connectDocker();
  // What the second daemon needs so nothing is built there: the task image, its base, the harness builder.
  const task = await buildTaskImage(main, await loadTask(join('tasks', TASK)));
  const builder = await main.buildImage({ repository: 'authbench/launcher-builder', kind: 'builder-image', contextDir: LAUNCHER_SOURCE_DIR });
  // No bridge: nothing is built there (see SecondDaemon), and a --bridge=none daemon must not see the main docker0.
  second = new SecondDaemon({ bridge: false });
  await second.start();
  const images = [task.tag, BASE_IMAGE_REF, builder.tag];
  // One archive, so shared layers travel once; read from the main daemon, loaded into ours only.
  const load = spawnSync('bash', ['-c', 'set -o pipefail; docker save "$@" | docker -H "$SECOND_HOST" load -q', 'load', ...images], {
    env: { ...process.env, SECOND_HOST: second.host },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (load.status !== 0) throw new Error(`loading ${images.join(', ')} into the second daemon failed: ${load.stderr}`);
}, 600_000);

afterAll(async () => {
  if (second !== undefined) {
    await second.stop();
    second.remove();
  }
  if (jobs !== '') rmSync(jobs, { recursive: true, force: true });
}, 120_000);

function results(job: string): RolloutResult[] {
  const dir = join(jobs, job);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'result.json')))
    .map((d) => JSON.parse(readFileSync(join(dir, d.name, 'result.json'), 'utf8')) as RolloutResult);
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `eval` against the second daemon only (DOCKER_HOST), as a child whose end the test waits for. */
function evalAgainst(daemon: SecondDaemon, args: string[]): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DOCKER_HOST: daemon.host, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<Run>((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

describe.skipIf(!CAN_RUN)('eval across a Docker daemon restart (a second daemon of the test\'s own)', () => {
  it('ends by itself with the summary and exit 125, no stack trace; --resume completes every rollout exactly once', async () => {
    const daemon = second;
    if (daemon === undefined) throw new Error('no second daemon');
    const name = 'restart';
    const args = ['--model', 'scripted/oracle', '--policy', 'gold', '-i', TASK, '-k', String(ROLLOUTS), '-n', '1', '--job-name', name];
    const run = evalAgainst(daemon, [...args, '--docker-wait', '90']);

    // Stop the daemon as soon as the first rollout has its result: the next one is running or starting.
    const deadline = Date.now() + 240_000;
    while (results(name).length === 0) {
      if (run.child.exitCode !== null || Date.now() > deadline) {
        const r = await run.done;
        throw new Error(`no rollout finished before the restart (exit ${String(r.status)}):\n${r.stderr.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await daemon.stop();
    await new Promise((r) => setTimeout(r, 2_000));
    await daemon.start();

    const r = await Promise.race([run.done, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('eval did not end by itself')), 300_000))]);
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output.slice(-3000)).toBe(125);
    expect(output).not.toContain('internal error');
    expect(output).not.toContain('SuppressedError');
    expect(output).not.toMatch(/\n\s+at /);
    // The normal end of a run: the summary table, the job line, the infrastructure errors listed, how to resume.
    expect(r.stdout).toMatch(/TSR std/);
    expect(r.stdout).toMatch(new RegExp(`job .*${name}: \\d+/${ROLLOUTS} rollouts`));
    expect(r.stdout).toMatch(/infra_error .*docker|infra_error .*sandbox/);
    expect(r.stderr).toContain(`resume with authbench eval --job-name ${name} --resume`);
    const first = results(name);
    const hit = first.filter((x) => x.status === 'infra_error');
    expect(hit.length).toBeGreaterThanOrEqual(1);
    // Never an agent failure: every rollout is either measured and passed, or infra.
    expect(first.every((x) => x.status === 'infra_error' || x.utility_success === true)).toBe(true);

    const resumed = await evalAgainst(daemon, [...args, '--resume', '--json']).done;
    expect(resumed.status, resumed.stderr.slice(-3000)).toBe(0);
    const json = JSON.parse(resumed.stdout) as { planned: number; reused: number };
    expect(json.planned).toBe(ROLLOUTS);
    expect(json.reused).toBe(first.length - hit.length);
    const all = results(name);
    expect(all).toHaveLength(ROLLOUTS);
    expect(new Set(all.map((x) => x.rollout_id)).size).toBe(ROLLOUTS);
    expect(all.every((x) => x.status === 'completed' && x.utility_success === true)).toBe(true);
    // Two starts and a stop of the second daemon later, the main daemon still has its bridge.
    if (mainBridgeBefore) expect(existsSync(MAIN_BRIDGE)).toBe(true);
  }, 600_000);
});
