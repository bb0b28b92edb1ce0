/**
 * One `eval` over two Docker engines (issue #20, items 3 and 4): the main daemon and a SECOND
 * dockerd the test starts (scripts/bench/second-daemon.ts: own socket, data root, exec root,
 * pidfile, network namespace and bridge; stopped and deleted at the end), one slot each. The
 * second engine starts empty and has no way out to a package mirror, so the rollout it takes
 * first makes there what a rollout needs: the images the main engine has under the same
 * content-hash tags (the offline base, the harness builder, the task image) are loaded from it
 * (DockerEngine.loadFrom), and the harness volume is filled there. Every rollout must run exactly
 * once, on both engines (result.json names the engine). Then the second daemon is stopped while it
 * runs a rollout: that rollout is an infrastructure error (so are up to ENGINE_DRAIN_AFTER more if the
 * daemon answers with errors while it shuts down), the engine is drained (no new rollout goes to it),
 * the main engine runs the rest, and `--resume` finishes the job, each rollout once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { LABELS, connectDocker, parseDockerHost } from '../../docker/index.ts';
import { ENGINE_DRAIN_AFTER, type RolloutResult } from '../../evaluation/index.ts';
import { CAN_START_DAEMON, DOCKERD, SecondDaemon, UNSHARE } from '../../scripts/bench/second-daemon.ts';

const TASK = 'csv-sales-report';
const MAIN = parseDockerHost(readEnv(ENV.DOCKER_HOST)).endpoint;
if (!CAN_START_DAEMON) {
  process.stderr.write(`[engines.test] SKIPPED: needs root, dockerd and unshare (found: ${DOCKERD ?? 'no dockerd'}, ${UNSHARE ?? 'no unshare'})\n`);
}

let second: SecondDaemon | undefined;
let jobs = '';

beforeAll(async () => {
  if (!CAN_START_DAEMON) return;
  jobs = mkdtempSync(join(tmpdir(), 'ab-engines-jobs-'));
  second = new SecondDaemon({ bridge: true });
  await second.start();
}, 120_000);

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

function evalRun(args: string[]): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<Run>((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

const job = (name: string, k: number): string[] => ['--model', 'scripted/oracle', '--policy', 'gold', '-i', TASK, '-k', String(k), '--job-name', name];

describe.skipIf(!CAN_START_DAEMON)('eval across two Docker engines (a second dockerd of the test\'s own)', () => {
  it('runs every rollout exactly once over both engines, loading into the empty one what it needs', async () => {
    const daemon = second;
    if (daemon === undefined) throw new Error('no second daemon');
    const started = performance.now();
    const r = await evalRun([...job('two', 4), '--engine', `${MAIN}=1`, '--engine', `${daemon.host}=1`, '--json']).done;
    process.stderr.write(`[engines.test] 4 rollouts over two engines, the second made ready from empty: ${Math.round((performance.now() - started) / 1000)} s\n`);
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const all = results('two');
    expect(all).toHaveLength(4);
    expect(new Set(all.map((x) => x.rollout_id)).size).toBe(4);
    expect(all.every((x) => x.status === 'completed' && x.utility_success === true)).toBe(true);
    expect(new Set(all.map((x) => x.engine))).toEqual(new Set([MAIN, daemon.host]));
    // The task image (the main engine's, loaded: the same id under the same content-hash tag), the offline base and the harness volume now exist on the second engine.
    const engine = await connectDocker({ host: daemon.host });
    const images = await engine.docker.listImages();
    const taskTag = images.flatMap((i) => i.RepoTags ?? []).find((t) => t.startsWith(`authbench/task-${TASK}:`));
    expect(taskTag).toBeDefined();
    expect((await engine.imageInfo(taskTag ?? ''))?.id).toBe((await (await connectDocker()).imageInfo(taskTag ?? ''))?.id);
    expect(images.flatMap((i) => i.RepoTags ?? [])).toContain('authbench/base:bookworm');
    expect((await engine.docker.listVolumes()).Volumes.some((v) => v.Name.startsWith('authbench-harness-'))).toBe(true);
  }, 600_000);

  it('drains an engine that goes away mid-job: its rollout is infra, the other engine runs the rest, --resume finishes each once', async () => {
    const daemon = second;
    if (daemon === undefined) throw new Error('no second daemon');
    const ROLLOUTS = 6;
    const run = evalRun([...job('drain', ROLLOUTS), '--engine', `${MAIN}=1`, '--engine', `${daemon.host}=1`, '--docker-wait', '3']);
    // Stop the second daemon as soon as it runs a rollout of this job.
    const engine = await connectDocker({ host: daemon.host });
    const deadline = Date.now() + 180_000;
    for (;;) {
      const mine = await engine.docker.listContainers({ filters: { label: [`${LABELS.run}=job-drain`] } }).catch(() => []);
      if (mine.length > 0) break;
      if (run.child.exitCode !== null || run.child.signalCode !== null || Date.now() > deadline) throw new Error(`the second engine never ran a rollout:\n${(await run.done).stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await daemon.stop();
    const r = await Promise.race([run.done, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('eval did not end by itself')), 300_000))]);
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output.slice(-3000)).toBe(125);
    expect(output).not.toMatch(/\n\s+at /);
    // A daemon stopped with SIGTERM either goes silent (drained after --docker-wait) or answers with
    // errors for a while as it shuts down (drained after ENGINE_DRAIN_AFTER fast failures of its own).
    const escaped = daemon.host.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    expect(r.stderr).toMatch(new RegExp(`engine drained: the Docker daemon at ${escaped} (did not answer for 3 s|failed [0-9]+ rollouts in a row)`));
    const first = results('drain');
    const hit = first.filter((x) => x.status === 'infra_error');
    // Only rollouts the second engine took are lost to it, at most its run of faults; the main engine ran every other one.
    expect(hit.length).toBeGreaterThanOrEqual(1);
    expect(hit.length).toBeLessThanOrEqual(ENGINE_DRAIN_AFTER);
    expect(new Set(hit.map((x) => x.engine))).toEqual(new Set([daemon.host]));
    expect(first.filter((x) => x.status === 'completed').every((x) => x.engine === MAIN && x.utility_success === true)).toBe(true);
    expect(first).toHaveLength(ROLLOUTS);

    const resumed = await evalRun([...job('drain', ROLLOUTS), '--resume', '--engine', `${MAIN}=1`, '--json']).done;
    expect(resumed.status, resumed.stderr.slice(-3000)).toBe(0);
    expect((JSON.parse(resumed.stdout) as { reused: number }).reused).toBe(ROLLOUTS - hit.length);
    const all = results('drain');
    expect(all).toHaveLength(ROLLOUTS);
    expect(new Set(all.map((x) => x.rollout_id)).size).toBe(ROLLOUTS);
    expect(all.every((x) => x.status === 'completed' && x.utility_success === true)).toBe(true);
  }, 600_000);
});
