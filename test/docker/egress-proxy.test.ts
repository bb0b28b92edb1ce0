/**
 * Allowlisted external hosts at host granularity, through the rollout's filtering egress proxy.
 * Two stand-ins for external hosts, `allowed.example` and `blocked.example` (python servers on
 * one port), sit on an upstream network of the test's own that only the proxy joins. From the
 * task container, inside the sandbox session: a policy naming allowed.example reaches it through
 * the proxy (plain HTTP and CONNECT) while blocked.example — also on the task's allowlist, but not
 * the policy's — gets 403; a connection that bypasses the proxy has no route (by name or by
 * address, though Landlock's port rule would let it); task.toml's allowlist caps allow-all, port
 * rules included; the proxy also starts on Docker's default bridge (what rollouts use); a policy
 * naming no external host starts no proxy; the proxy and its network are gone after the sandbox.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, EGRESS_PROXY_HOST, LABELS, type Container, type DockerEngine } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { policySidecarHosts, type Policy } from '../../sandbox/policy/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, egressRuleLabels, openTaskSandbox, summarizeEgress } from '../../taskenv/index.ts';

const RUN_ID = `egress-proxy-test-${process.pid}-${Date.now()}`;
/** The stand-ins and their network: the test's own, cleaned by the test. */
const UPSTREAM_RUN = `${RUN_ID}-upstream`;
const UPSTREAM = `authbench-net-egress-test-${process.pid}`;
const PORT = 8080;
// python3 under enforcement: its runtime, and name resolution.
const RUNTIME: PatternSet = { read: ['/usr/**', '/lib/**', '/etc/**', '/dev/null', '/proc/**'], write: ['/dev/null'], execute: ['/usr/**', '/lib/**'] };

const server = (name: string): string => `import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"served-by-${name}\\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("", ${String(PORT)}), H).serve_forever()
`;

async function writeTask(root: string, id: string, allowed: readonly string[]): Promise<Task> {
  const dir = join(root, id);
  for (const sub of ['environment', 'solution', 'tests']) await mkdir(join(dir, sub), { recursive: true });
  const hosts = allowed.map((h) => JSON.stringify(h)).join(', ');
  await writeFile(join(dir, 'task.toml'), `version = "1.0"\n\n[metadata]\nauthbench_eval_dataset = "standard"\n\n[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = [${hosts}]\n`);
  await writeFile(join(dir, 'instruction.md'), 'Fetch the pages.\n');
  await writeFile(join(dir, 'environment/Dockerfile'), `FROM ${BASE_IMAGE_REF}\nWORKDIR /app\n`);
  await writeFile(join(dir, 'solution/solve.sh'), '#!/bin/bash\ntrue\n');
  await writeFile(join(dir, 'tests/test.sh'), '#!/bin/bash\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n');
  return loadTask(dir);
}

const py = (script: string): string[] => ['python3', '-c', script];
/** Plain HTTP through the proxy (urllib reads http_proxy): the body, or the HTTP status, or the error. */
const viaProxy = (url: string): string[] =>
  py(`import urllib.request, urllib.error
try:
    print(urllib.request.urlopen("${url}", timeout=10).read().decode().strip())
except urllib.error.HTTPError as e:
    print("status", e.code)
except Exception as e:
    print("error", type(e).__name__, e)`);
/** A CONNECT tunnel through the proxy, then a request inside it. */
const tunnel = (host: string, port: number): string[] =>
  py(`import http.client, os, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.set_tunnel("${host}", ${String(port)})
try:
    c.request("GET", "/")
    print(c.getresponse().read().decode().strip())
except OSError as e:
    print("error", e)`);
/** No proxy: straight to the host. */
const direct = (host: string): string[] =>
  py(`import urllib.request
try:
    print(urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://${host}:${String(PORT)}/", timeout=5).read().decode().strip())
except Exception as e:
    print("error", type(e).__name__, e)`);

let engine: DockerEngine;
let root: string;
let both: Task;
let onlyAllowed: Task;
let image: string;
const standIns = new Map<string, Container>();

async function listening(container: Container): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await container.exec({ cmd: py(`import socket; socket.create_connection(("127.0.0.1", ${String(PORT)}), timeout=1)`) });
    if (r.exitCode === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('a stand-in never listened');
}

const ours = (service?: string) => ({ label: [`${LABELS.run}=${RUN_ID}`, ...(service === undefined ? [] : [`authbench.service=${service}`])] });

describe('egress proxy: allowlisted external hosts at host granularity', () => {
  beforeAll(async () => {
    engine = await connectDocker();
    root = await mkdtemp(join(tmpdir(), 'authbench-egress-'));
    both = await writeTask(root, 'egress-both', ['allowed.example', 'blocked.example']);
    onlyAllowed = await writeTask(root, 'egress-one', [`allowed.example:${String(PORT)}`]);
    image = (await buildTaskImage(engine, both)).tag;
    await engine.createNetwork(UPSTREAM, { [LABELS.run]: UPSTREAM_RUN });
    for (const name of ['allowed.example', 'blocked.example']) {
      const c = await engine.startContainer({
        image: BASE_IMAGE_REF,
        labels: { [LABELS.run]: UPSTREAM_RUN },
        network: { name: UPSTREAM, aliases: [name] },
        process: { entrypoint: py(server(name)) },
      });
      standIns.set(name, c);
    }
    for (const c of standIns.values()) await listening(c);
  }, 300_000);

  afterAll(async () => {
    if (engine !== undefined) {
      await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
      await cleanManaged(engine, { labels: { [LABELS.run]: UPSTREAM_RUN } });
    }
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('loads: external hosts are the proxy\'s, not a load error', () => {
    expect(both.network).toEqual({ mode: 'allowlist', hosts: [], external: [{ host: 'allowed.example' }, { host: 'blocked.example' }] });
  });

  it('a policy naming allowed.example reaches it through the proxy only; blocked.example gets 403; no route around the proxy', async () => {
    const policy: Policy = { read: [], write: [], execute: [], network: { tcp_connect: [{ host: 'allowed.example', port: PORT }], tcp_bind: [], allow_all: false } };
    const enforce = { kind: 'enforce', policy, implicit: RUNTIME } as const;
    {
      await using box = await openTaskSandbox(engine, both, image, { runId: RUN_ID, sidecarAccess: policySidecarHosts(policy.network), egressUpstream: UPSTREAM });
      expect(egressRuleLabels(box.egress?.rules ?? [])).toEqual(['allowed.example']);
      const run = async (cmd: string[]): Promise<string> => {
        const r = await box.session.run({ cmd, mode: enforce, trace: false });
        expect(r.exec.exitCode, r.exec.stderr).toBe(0);
        return r.exec.stdout.trim();
      };
      expect(await run(viaProxy(`http://allowed.example:${String(PORT)}/`))).toBe('served-by-allowed.example');
      expect(await run(tunnel('allowed.example', PORT))).toBe('served-by-allowed.example');
      // On the task's allowlist, but not the policy's: the proxy refuses it.
      expect(await run(viaProxy(`http://blocked.example:${String(PORT)}/`))).toBe('status 403');
      expect(await run(tunnel('blocked.example', PORT))).toMatch(/^error .*403/);
      // Around the proxy: the name does not resolve, and the address (Landlock allows port 8080 anywhere) has no route.
      expect(await run(direct('allowed.example'))).toMatch(/^error /);
      const address = Object.values((await standIns.get('allowed.example')?.state?.())?.addresses ?? {})[0];
      expect(address).toBeDefined();
      expect(await run(direct(address ?? ''))).toMatch(/^error /);
      expect(summarizeEgress((await box.egress?.decisions()) ?? [])).toEqual({ forwarded: [`allowed.example:${String(PORT)}`], refused: [`blocked.example:${String(PORT)}`] });
      expect((await engine.docker.listContainers({ filters: ours(EGRESS_PROXY_HOST) })).length).toBe(1);
    }
    // Torn down with the sandbox: the proxy and every network of the rollout.
    expect((await engine.docker.listContainers({ all: true, filters: ours(EGRESS_PROXY_HOST) })).length).toBe(0);
    expect((await engine.docker.listNetworks({ filters: ours() })).length).toBe(0);
  }, 120_000);

  it('task.toml caps allow-all, port rules included', async () => {
    await using box = await openTaskSandbox(engine, onlyAllowed, image, { runId: RUN_ID, egressUpstream: UPSTREAM });
    const run = async (cmd: string[]): Promise<string> => (await box.session.run({ cmd, mode: { kind: 'unenforced' }, trace: false })).exec.stdout.trim();
    expect(await run(viaProxy(`http://allowed.example:${String(PORT)}/`))).toBe('served-by-allowed.example');
    expect(await run(viaProxy(`http://allowed.example:${String(PORT + 1)}/`))).toBe('status 403');
    expect(await run(viaProxy(`http://blocked.example:${String(PORT)}/`))).toBe('status 403');
    expect(await run(direct('blocked.example'))).toMatch(/^error /);
  }, 120_000);

  it('the default upstream (Docker\'s bridge) as a rollout gets it: the proxy starts and still refuses what is not allowed', async () => {
    await using box = await openTaskSandbox(engine, onlyAllowed, image, { runId: RUN_ID });
    expect((await engine.docker.listContainers({ filters: ours(EGRESS_PROXY_HOST) })).length).toBe(1);
    const r = await box.session.run({ cmd: viaProxy(`http://blocked.example:${String(PORT)}/`), mode: { kind: 'unenforced' }, trace: false });
    expect(r.exec.stdout.trim()).toBe('status 403');
  }, 120_000);

  it('a policy naming no external host starts no proxy, and has no network', async () => {
    await using box = await openTaskSandbox(engine, both, image, { runId: RUN_ID, sidecarAccess: [], egressUpstream: UPSTREAM });
    expect(box.egress).toBeUndefined();
    expect((await engine.docker.listContainers({ filters: ours(EGRESS_PROXY_HOST) })).length).toBe(0);
    const r = await box.session.run({ cmd: viaProxy(`http://allowed.example:${String(PORT)}/`), mode: { kind: 'unenforced' }, trace: false });
    expect(r.exec.stdout).toMatch(/^error /);
  }, 120_000);
});
