/**
 * Containers belong to a run (docker/owner.ts): `authbench eval` killed with SIGKILL leaves its
 * rollout container, labelled with the dead process's pid; the next run of the same job removes
 * it before it starts and completes. `clean`'s rule (orphansOnly) removes a dead owner's
 * container and network and leaves a live one's alone. Never the whole `authbench clean`: other
 * runs share this engine, so everything here is narrowed to this file's run labels.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, DockerEngine, LABELS, lookupProcess, ownerState } from '../../docker/index.ts';

const jobs = mkdtempSync(join(tmpdir(), 'authbench-orphans-'));
const JOB = `orphans-${process.pid}`;
const RUN_ID = `orphans-test-${process.pid}-${Date.now()}`;
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
});
afterAll(async () => {
  rmSync(jobs, { recursive: true, force: true });
  for (const run of [`job-${JOB}`, RUN_ID]) await cleanManaged(engine, { labels: { [LABELS.run]: run } });
});

/** This job's containers as the daemon lists them. */
async function jobContainers(): Promise<{ id: string; state: string; labels: Record<string, string> }[]> {
  const listed = await engine.docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=job-${JOB}`] } });
  return listed.map((c) => ({ id: c.Id, state: c.State, labels: c.Labels }));
}

function completedRollouts(): number {
  const dir = join(jobs, JOB);
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'result.json'))).length;
}

describe('a run killed with SIGKILL', () => {
  it('leaves its container labelled with the dead pid; the next run of the job removes it and completes', async () => {
    const args = ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--model', 'scripted/oracle', '--policy', 'gold', '-i', 'csv-sales-report', '-k', '2', '-n', '1', '--job-name', JOB];
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    // Kill hard while the first rollout's container runs: nothing gets to clean up.
    const deadline = Date.now() + 300_000;
    for (;;) {
      if ((await jobContainers()).some((c) => c.state === 'running')) break;
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`no rollout container of job ${JOB} appeared (eval exit ${String(child.exitCode)})`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill('SIGKILL');
    await exited;
    expect(completedRollouts()).toBeLessThan(2);

    const left = await jobContainers();
    expect(left.length).toBeGreaterThanOrEqual(1);
    // Whatever else the killed process had made (a harness check's container) is the job's too.
    const itsOwn = await engine.docker.listContainers({ all: true, filters: { label: [`${LABELS.ownerPid}=${String(child.pid)}`] } });
    expect(itsOwn.map((c) => c.Labels[LABELS.run])).toEqual(itsOwn.map(() => `job-${JOB}`));
    expect(left.every((c) => c.labels[LABELS.ownerPid] === String(child.pid))).toBe(true);
    expect(left.map((c) => ownerState(c.labels, engine.owner, lookupProcess))).toEqual(left.map(() => 'gone'));

    // Another killed run's container (another run id, the dead owner): not this job's to remove, but said.
    const other = await new DockerEngine(engine.docker, engine.endpoint, { ...engine.owner, pid: child.pid ?? 0 }).startContainer({ image: BASE_IMAGE_REF, labels: { [LABELS.run]: RUN_ID } });
    try {
      // The saved config alone: the resumed run removes the orphans first and says so.
      const resumed = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--job-name', JOB, '--resume'], { encoding: 'utf8', timeout: 300_000 });
      expect(resumed.status, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(new RegExp(`removed ${left.length} container\\(s\\) and 0 network\\(s\\) an earlier run of this job left`));
      expect(resumed.stderr).toMatch(/warning: [1-9]\d* container\(s\) and \d+ network\(s\) of other authbench runs killed on this host are still on the engine/);
      expect(completedRollouts()).toBe(2);
      expect(await jobContainers()).toEqual([]);
      expect((await engine.docker.getContainer(other.id).inspect()).State.Running).toBe(true);
    } finally {
      await other.remove();
    }
  });
});

describe("an engine connected under a job's run id", () => {
  it('labels what it makes without a run of its own with that id, so the job finds it', async () => {
    const jobEngine = await connectDocker({ runId: RUN_ID });
    expect(jobEngine.owner.runId).toBe(RUN_ID);
    expect(jobEngine.owner.pid).toBe(process.pid);
    await using side = await jobEngine.startContainer({ image: BASE_IMAGE_REF });
    const labels = (await engine.docker.getContainer(side.id).inspect()).Config.Labels;
    expect(labels[LABELS.run]).toBe(RUN_ID);
    expect(labels[LABELS.ownerPid]).toBe(String(process.pid));
  });
});

describe('clean, orphans only', () => {
  it("removes a dead owner's container and network and leaves a live run's alone; --containers touches nothing else", async () => {
    const finished = spawnSync('true');
    expect(finished.pid).toBeGreaterThan(0);
    // The same engine as another process that has ended: the labels are what a killed run leaves.
    const dead = new DockerEngine(engine.docker, engine.endpoint, { ...engine.owner, pid: finished.pid ?? 0 });
    const labels = { [LABELS.run]: RUN_ID };
    const live = await engine.startContainer({ image: BASE_IMAGE_REF, labels });
    const orphan = await dead.startContainer({ image: BASE_IMAGE_REF, labels });
    const liveNet = `authbench-net-orphans-live-${process.pid}`;
    const deadNet = `authbench-net-orphans-dead-${process.pid}`;
    await engine.createNetwork(liveNet, labels);
    await dead.createNetwork(deadNet, labels);

    // `clean --containers` over everything authbench made (a dry run: other files' runs share the engine):
    // the dead owner's container and network, never an image or a volume, never a live run's.
    const containersOnly = await cleanManaged(engine, { orphansOnly: true, containersOnly: true, dryRun: true });
    expect(containersOnly.images).toEqual([]);
    expect(containersOnly.volumes).toEqual([]);
    expect(containersOnly.containers.map((c) => c.id)).toContain(orphan.id);
    expect(containersOnly.containers.map((c) => c.id)).not.toContain(live.id);
    expect(containersOnly.networks).toContain(deadNet);
    expect(containersOnly.networks).not.toContain(liveNet);
    // What eval lists (and warns of) up front: the same dead owner's, never a live run's.
    const listed = await engine.listOrphans();
    expect(listed.containers).toContain(orphan.id);
    expect(listed.containers).not.toContain(live.id);
    expect(listed.networks).toContain(deadNet);
    expect(listed.networks).not.toContain(liveNet);
    // The same without containersOnly would take images: what `clean` alone does.
    expect((await cleanManaged(engine, { orphansOnly: true, dryRun: true })).images.length).toBeGreaterThan(0);

    const report = await cleanManaged(engine, { labels, orphansOnly: true });
    expect(report.failures).toEqual([]);
    expect(report.containers.map((c) => c.id)).toEqual([orphan.id]);
    expect(report.networks).toEqual([deadNet]);
    expect(report.kept.map((k) => [k.kind, k.why])).toEqual(expect.arrayContaining([['container', 'alive'], ['network', 'alive']]));

    const remaining = await engine.docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=${RUN_ID}`] } });
    expect(remaining.map((c) => c.Id)).toEqual([live.id]);
    const networks = await engine.docker.listNetworks({ filters: { label: [`${LABELS.run}=${RUN_ID}`] } });
    expect(networks.map((n) => n.Name)).toEqual([liveNet]);

    // Without orphansOnly (clean --all) the live run's go too.
    const all = await cleanManaged(engine, { labels });
    expect(all.containers.map((c) => c.id)).toEqual([live.id]);
    expect(all.networks).toEqual([liveNet]);
  });
});
