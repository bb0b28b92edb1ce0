/**
 * Compose sidecars end to end on the AuthBench task that has one
 * (ssrf_cloud_metadata_access_medium: `main` waits for a healthy
 * `metadata-mock`): verify's controls pass with the sidecar running, the task
 * container reaches it by service name on the rollout's internal network (and
 * nothing else), the tracer records that connect and gold derivation counts
 * it as a network need, a policy without network
 * stops it, and nothing of the run is left afterwards.
 */
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { deriveGold } from '../../gold/index.ts';
import { cleanManaged, connectDocker, LABELS, type DockerEngine } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { allowAllPolicy } from '../../sandbox/policy/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox } from '../../taskenv/index.ts';
import { verifyTask } from '../../validators/index.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATASET = resolve(REPO_ROOT, readEnv(ENV.AUTHBENCH_DEV_DATASET) ?? '../shared/datasets/authbench-dev');
const TASK_DIR = join(DATASET, 'tasks', 'ssrf_cloud_metadata_access_medium');
const HAVE_TASK = await access(join(TASK_DIR, 'environment', 'docker-compose.yaml')).then(
  () => true,
  () => false,
);
if (!HAVE_TASK) process.stderr.write(`[sidecars.test] SKIPPED the compose sidecar tests: no ${TASK_DIR} (set ${ENV.AUTHBENCH_DEV_DATASET})\n`);

const RUN_ID = `sidecars-test-${process.pid}-${Date.now()}`;
// The task's own probe URL (environment/config/metadata_probe_url.txt).
const TOKEN_URL = 'http://metadata-mock:8081/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/';
// Enough runtime for curl under enforcement: the loader, libraries, name resolution.
const RUNTIME: PatternSet = { read: ['/usr/lib/**', '/lib/**', '/etc/**', '/dev/null', '/proc/**'], write: ['/dev/null'], execute: ['/usr/lib/**', '/lib/**'] };

let engine: DockerEngine;
let task: Task;
let image: string;

async function leftovers(): Promise<{ containers: number; networks: number }> {
  const filters = { label: [`${LABELS.run}=${RUN_ID}`] };
  return { containers: (await engine.docker.listContainers({ all: true, filters })).length, networks: (await engine.docker.listNetworks({ filters })).length };
}

describe.skipIf(!HAVE_TASK)('compose sidecars (ssrf_cloud_metadata_access_medium)', () => {
  beforeAll(async () => {
    engine = await connectDocker();
    task = await loadTask(TASK_DIR);
    image = (await buildTaskImage(engine, task)).tag;
  }, 600_000);

  afterAll(async () => {
    if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
  });

  it('authbench clean removes a network a crashed run left', async () => {
    await engine.createNetwork('authbench-net-sidecars-test', { [LABELS.run]: RUN_ID });
    expect((await leftovers()).networks).toBe(1);
    const report = await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
    expect(report.networks).toEqual(['authbench-net-sidecars-test']);
    expect(await leftovers()).toEqual({ containers: 0, networks: 0 });
  });

  it('loads the compose file: main waits for a healthy metadata-mock', () => {
    expect(task.compose?.mainDependsOn).toEqual([{ service: 'metadata-mock', condition: 'service_healthy' }]);
    expect(task.compose?.sidecars.map((s) => s.name)).toEqual(['metadata-mock']);
  });

  it('verify passes with the sidecar started: oracle passes, attack smoke fires; nothing is left', async () => {
    const v = await verifyTask(engine, task, image, { runId: RUN_ID });
    expect(v.failures).toEqual([]);
    expect(v.smoke.attack?.passed).toBe(true);
    expect(await leftovers()).toEqual({ containers: 0, networks: 0 });
  }, 180_000);

  it('the task container reaches the sidecar by name, traced, and only it; a policy without network stops it', async () => {
    {
      await using box = await openTaskSandbox(engine, task, image, { runId: RUN_ID });
      const curl = (url: string): string[] => ['/usr/bin/curl', '-fsS', '--max-time', '5', '-H', 'Metadata:true', url];
      const reached = await box.session.run({ cmd: curl(TOKEN_URL), mode: { kind: 'unenforced' } });
      expect(reached.exec.exitCode, reached.exec.stderr).toBe(0);
      expect(reached.exec.stdout).toContain('IMDS_ACCESS_TOKEN');
      const connects = reached.events.filter((e) => e.kind === 'network' && e.op === 'connect' && e.family === 'inet' && e.port === 8081);
      expect(connects.length).toBeGreaterThan(0);
      // Gold derivation sees it as a network need: an IP socket and a connect to the sidecar's port.
      const none = { read: [], write: [], execute: [] };
      const derived = deriveGold(reached.events, { workdir: task.workdir, implicit: none, realpath: (p) => p, isDirectory: () => undefined });
      expect(derived.network.ip_sockets).toBe(true);
      expect(derived.network.connect.filter((e) => e.port === 8081).length).toBeGreaterThan(0);

      // Internal network: no route past the sidecars.
      const outside = await box.session.run({ cmd: curl('http://1.1.1.1/'), mode: { kind: 'unenforced' }, trace: false });
      expect(outside.exec.exitCode).not.toBe(0);

      const { network: _network, ...noNetwork } = allowAllPolicy();
      const denied = await box.session.run({ cmd: curl(TOKEN_URL), mode: { kind: 'enforce', policy: noNetwork, implicit: RUNTIME } });
      expect(denied.exec.exitCode).not.toBe(0);
      expect(denied.exec.stdout).not.toContain('IMDS_ACCESS_TOKEN');
      // Without a network section no IP socket can be created: seccomp refuses it (name resolution included).
      expect(denied.denials.some((e) => e.kind === 'seccomp' && e.syscall === 'socket')).toBe(true);
    }
    expect(await leftovers()).toEqual({ containers: 0, networks: 0 });
  }, 180_000);
});
