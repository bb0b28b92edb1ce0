/**
 * The policy's network axis at host granularity: two sidecars serving the
 * SAME port (Landlock, which filters TCP by port only, cannot tell them
 * apart), built from the offline base. A policy naming one reaches it and not
 * the other — not by name, not by address — while Landlock's port rule is the
 * same for both; allow-all reaches both; a task.toml allowlist caps what even
 * allow-all reaches; the trace's connect is named by service for the gold.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, LABELS, type DockerEngine } from '../../docker/index.ts';
import { deriveGold, nameSidecarEndpoints } from '../../gold/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { policySidecarHosts, type Policy } from '../../sandbox/policy/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { buildSidecarImages, buildTaskImage, openTaskSandbox } from '../../taskenv/index.ts';

const RUN_ID = `sidecar-networks-test-${process.pid}-${Date.now()}`;
const PORT = 8080;
// python3 under enforcement: its runtime, and name resolution.
const RUNTIME: PatternSet = { read: ['/usr/**', '/lib/**', '/etc/**', '/dev/null', '/proc/**'], write: ['/dev/null'], execute: ['/usr/**', '/lib/**'] };

const sidecarDockerfile = (): string =>
  [
    `FROM ${BASE_IMAGE_REF}`,
    // COPY, not RUN: nothing to execute at build time keeps the build to seconds.
    'COPY index.html /srv/www/index.html',
    'WORKDIR /srv/www',
    `CMD ["python3", "-m", "http.server", "${String(PORT)}"]`,
  ].join('\n');

const compose = `services:
  main:
    depends_on:
      alpha: { condition: service_healthy }
      beta: { condition: service_healthy }
${['alpha', 'beta']
  .map(
    (s) => `  ${s}:
    build: ./${s}
    healthcheck:
      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:${String(PORT)}/', timeout=2)"]
      interval: 1s
      timeout: 3s
      retries: 30
`,
  )
  .join('')}`;

async function writeTask(root: string, id: string, environment: string): Promise<string> {
  const dir = join(root, id);
  for (const sub of ['environment/alpha', 'environment/beta', 'solution', 'tests']) await mkdir(join(dir, sub), { recursive: true });
  await writeFile(join(dir, 'task.toml'), `version = "1.0"\n\n[metadata]\nauthbench_eval_dataset = "standard"\n\n[environment]\n${environment}\n`);
  await writeFile(join(dir, 'instruction.md'), 'Fetch the page from each service.\n');
  await writeFile(join(dir, 'environment/Dockerfile'), `FROM ${BASE_IMAGE_REF}\nWORKDIR /app\n`);
  await writeFile(join(dir, 'environment/docker-compose.yaml'), compose);
  for (const s of ['alpha', 'beta']) {
    await writeFile(join(dir, `environment/${s}/Dockerfile`), sidecarDockerfile());
    await writeFile(join(dir, `environment/${s}/index.html`), `served-by-${s}\n`);
  }
  await writeFile(join(dir, 'solution/solve.sh'), '#!/bin/bash\ntrue\n');
  await writeFile(join(dir, 'tests/test.sh'), '#!/bin/bash\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n');
  return dir;
}

const fetch = (host: string): string[] => [
  'python3',
  '-c',
  `import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://${host}:${String(PORT)}/', timeout=3).read().decode())`,
];

let engine: DockerEngine;
let root: string;
let open: Task;
let allowlisted: Task;
let image: string;

describe('sidecar networks: host granularity on one port', () => {
  beforeAll(async () => {
    engine = await connectDocker();
    root = await mkdtemp(join(tmpdir(), 'authbench-sidecar-networks-'));
    open = await loadTask(await writeTask(root, 'nets-open', 'allow_internet = false'));
    allowlisted = await loadTask(await writeTask(root, 'nets-allowlist', 'network_mode = "allowlist"\nallowed_hosts = ["beta"]'));
    image = (await buildTaskImage(engine, open)).tag;
    await buildSidecarImages(engine, open);
    await buildSidecarImages(engine, allowlisted);
  }, 300_000);

  afterAll(async () => {
    if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('allow-all (the default, and what an unenforced defense gets) reaches both', async () => {
    await using box = await openTaskSandbox(engine, open, image, { runId: RUN_ID });
    expect(box.sidecars?.reachable).toEqual(['alpha', 'beta']);
    for (const s of ['alpha', 'beta']) {
      const r = await box.session.run({ cmd: fetch(s), mode: { kind: 'unenforced' }, trace: false });
      expect(r.exec.stdout, r.exec.stderr).toBe(`served-by-${s}\n`);
    }
  }, 120_000);

  it('a policy naming alpha reaches alpha, not beta on the same port (by name or address); the trace names alpha', async () => {
    const policy: Policy = { read: [], write: [], execute: [], network: { tcp_connect: [{ host: 'alpha', port: PORT }], tcp_bind: [], allow_all: false } };
    await using box = await openTaskSandbox(engine, open, image, { runId: RUN_ID, sidecarAccess: policySidecarHosts(policy.network) });
    expect(box.sidecars?.reachable).toEqual(['alpha']);
    const enforce = { kind: 'enforce', policy, implicit: RUNTIME } as const;
    const alpha = await box.session.run({ cmd: fetch('alpha'), mode: enforce });
    expect(alpha.exec.stdout, alpha.exec.stderr).toBe('served-by-alpha\n');
    const byName = await box.session.run({ cmd: fetch('beta'), mode: enforce, trace: false });
    expect(byName.exec.exitCode).not.toBe(0);
    expect(byName.exec.stdout).not.toContain('served-by-beta');
    // Landlock's port rule allows 8080 on any host: only the network keeps beta's address out of reach.
    const hosts = await box.sidecars?.hosts();
    const betaAddress = [...(hosts ?? new Map<string, string>())].find(([, s]) => s === 'beta')?.[0];
    expect(betaAddress).toBeDefined();
    const byAddress = await box.session.run({ cmd: fetch(betaAddress ?? ''), mode: enforce, trace: false });
    expect(byAddress.exec.exitCode).not.toBe(0);
    expect(byAddress.exec.stdout).not.toContain('served-by-beta');
    // The connect to alpha's address becomes alpha:8080 in the gold's network.
    const none = { read: [], write: [], execute: [] };
    const derived = deriveGold(alpha.events, { workdir: open.workdir, implicit: none, realpath: (p) => p, isDirectory: () => undefined });
    expect(nameSidecarEndpoints(derived.network, hosts ?? new Map()).connect.map((e) => `${e.address}:${String(e.port)}`)).toContain(`alpha:${String(PORT)}`);
  }, 120_000);

  it('a policy naming no sidecar gets no network at all', async () => {
    await using box = await openTaskSandbox(engine, open, image, { runId: RUN_ID, sidecarAccess: [] });
    expect(box.sidecars?.reachable).toEqual([]);
    const r = await box.session.run({ cmd: fetch('alpha'), mode: { kind: 'unenforced' }, trace: false });
    expect(r.exec.exitCode).not.toBe(0);
  }, 120_000);

  it('task.toml allowed_hosts = ["beta"]: even allow-all reaches beta only', async () => {
    expect(allowlisted.network).toEqual({ mode: 'allowlist', hosts: ['beta'], external: [] });
    await using box = await openTaskSandbox(engine, allowlisted, image, { runId: RUN_ID });
    expect(box.sidecars?.reachable).toEqual(['beta']);
    const beta = await box.session.run({ cmd: fetch('beta'), mode: { kind: 'unenforced' }, trace: false });
    expect(beta.exec.stdout, beta.exec.stderr).toBe('served-by-beta\n');
    const alpha = await box.session.run({ cmd: fetch('alpha'), mode: { kind: 'unenforced' }, trace: false });
    expect(alpha.exec.exitCode).not.toBe(0);
  }, 120_000);

  it('leaves nothing behind', async () => {
    const filters = { label: [`${LABELS.run}=${RUN_ID}`] };
    expect((await engine.docker.listContainers({ all: true, filters })).length).toBe(0);
    expect((await engine.docker.listNetworks({ filters })).length).toBe(0);
  });
});
