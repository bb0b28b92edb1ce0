/**
 * The model relay forwarded into a task container with network `none`: a sandboxed command reaches
 * the relay on the host through one loopback port, only when its enforced policy grants that port;
 * the forwarder is out of the command's reach; and the relay's key never enters the container.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, connectDocker, type Container } from '../../docker/index.ts';
import { startRelay, scriptedBackend, upstreamBackend, type Relay } from '../../models/relay/index.ts';
import { chatCompletion, startFakeOpenAiServer, type FakeServer } from '../../models/test-support.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { withRelayGrant, type Policy } from '../../sandbox/policy/index.ts';
import { SandboxSession, type SandboxResult } from '../../sandbox/run/index.ts';
import { openRelayForward, type RelayForward } from '../../taskenv/index.ts';
import { harnessContainer } from './harness.ts';

const MODEL = 'test-model';
const PORT = 7861;
const UPSTREAM_PORT = 7862;
const SCRIPTED_REPLY = 'scripted reply through the relay';
const MARKER = 'sk-AUTHBENCH-MARKER-KEY-5f1c9e2a7b';
const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};
/** python3 and the shell, nothing of the network. */
const POLICY: Policy = { read: ['/usr/**', '/etc/**', '/app/**'], write: ['/tmp/**'], execute: ['/usr/bin/**', '/bin/**'] };

/** A chat completion POSTed with urllib: prints the reply's text, or the error's type and text. */
const post = (port: number): string[] => [
  'python3',
  '-c',
  `import json, urllib.request
req = urllib.request.Request("http://127.0.0.1:${port}/v1/chat/completions", data=json.dumps({"model": "${MODEL}", "messages": [{"role": "user", "content": "hi"}]}).encode(), headers={"content-type": "application/json"})
try:
    print(json.load(urllib.request.urlopen(req, timeout=20))["choices"][0]["message"]["content"])
except Exception as e:
    print(type(e).__name__, e)
    raise SystemExit(3)`,
];

let container: Container;
let session: SandboxSession;
let scripted: Relay;
let upstream: Relay;
let fake: FakeServer;
let socketDir: string;
const forwards: RelayForward[] = [];
const savedKey = process.env['OPENAI_API_KEY'];

const enforce = (policy: Policy, cmd: string[]): Promise<SandboxResult> => session.run({ cmd, mode: { kind: 'enforce', policy, implicit: RUNTIME }, timeoutMs: 60_000 });

beforeAll(async () => {
  // The key is in the host's environment too: nothing may carry it from there into the container.
  process.env['OPENAI_API_KEY'] = MARKER;
  const engine = await connectDocker();
  container = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', network: 'none', run: `relay-forward-test-${process.pid}` });
  expect((await container.exec({ cmd: ['mkdir', '-p', '/app'] })).exitCode).toBe(0);
  session = new SandboxSession(container, '/app');
  scripted = await startRelay({
    models: [MODEL],
    backend: scriptedBackend(() => ({ text: SCRIPTED_REPLY, toolCalls: [], finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 5 } })),
  });
  // The upstream backend holds the marker key and listens on a unix socket: the forward's other target.
  fake = await startFakeOpenAiServer(() => ({ body: chatCompletion({ content: 'upstream says hi', usage: { prompt_tokens: 2, completion_tokens: 3 } }) }));
  socketDir = await mkdtemp(join(tmpdir(), 'relay-forward-'));
  upstream = await startRelay({
    models: [MODEL],
    backend: upstreamBackend({ provider: 'openai', env: { OPENAI_API_KEY: MARKER, OPENAI_BASE_URL: fake.baseUrl } }),
    listen: { socketPath: join(socketDir, 'relay.sock') },
  });
  forwards.push(await openRelayForward(container, scripted, { port: PORT }), await openRelayForward(container, upstream, { port: UPSTREAM_PORT }));
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env['OPENAI_API_KEY'];
  else process.env['OPENAI_API_KEY'] = savedKey;
  await Promise.all(forwards.map((f) => f.close()));
  await session?.close();
  await container?.remove();
  await scripted?.close();
  await upstream?.close();
  await fake?.close();
  if (socketDir !== undefined) await rm(socketDir, { recursive: true, force: true });
});

describe('the model relay forwarded into a container', () => {
  it('answers a sandboxed client whose enforced policy grants the relay port', async () => {
    const r = await enforce(withRelayGrant(POLICY, PORT), post(PORT));
    expect([r.exec.exitCode, r.exec.stdout.trim(), r.enforcement.level]).toEqual([0, SCRIPTED_REPLY, 'full']);
    expect(r.events.some((e) => e.kind === 'network' && e.op === 'connect' && e.address === '127.0.0.1' && e.port === PORT && e.denied !== true)).toBe(true);
    expect(scripted.events().at(-1)).toMatchObject({ outcome: 'ok', source: 'scripted' });
    expect(forwards[0]?.stats().connections).toBeGreaterThanOrEqual(1);
  });

  it('carries concurrent connections with large bodies, streamed replies too', async () => {
    const before = scripted.events().length;
    const script = `import json, threading, urllib.request
out = {}
def call(i):
    body = {"model": "${MODEL}", "stream": i % 2 == 1, "messages": [{"role": "user", "content": str(i) * 3000000}]}
    req = urllib.request.Request("http://127.0.0.1:${PORT}/v1/chat/completions", data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    out[i] = urllib.request.urlopen(req, timeout=60).read().decode()
threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps([out.get(i, "") for i in range(4)]))`;
    const r = await enforce(withRelayGrant(POLICY, PORT), ['python3', '-c', script]);
    expect(r.exec.exitCode).toBe(0);
    const replies = JSON.parse(r.exec.stdout) as string[];
    expect(replies.map((text) => text.includes(SCRIPTED_REPLY.split(' ')[0] ?? '?'))).toEqual([true, true, true, true]);
    expect(replies.map((text) => text.includes('data: '))).toEqual([false, true, false, true]);
    expect(scripted.events().slice(before).map((e) => [e.outcome, e.request.bytes > 3_000_000])).toEqual(Array.from({ length: 4 }, () => ['ok', true]));
  });

  it('refuses the same client without the grant, and the denial is in the result', async () => {
    const before = scripted.events().length;
    const none = await enforce(POLICY, post(PORT));
    expect(none.exec.exitCode).toBe(3);
    expect(none.exec.stdout).toMatch(/PermissionError|Operation not permitted/);
    // No network section: no IP socket at all (seccomp).
    expect(none.denials.some((e) => e.kind === 'seccomp' && e.syscall === 'socket')).toBe(true);
    // Another port granted: the socket is allowed, connect() to the relay's port is not (Landlock).
    const other = await enforce(withRelayGrant(POLICY, 9), post(PORT));
    expect(other.exec.exitCode).toBe(3);
    expect(other.denials.some((e) => e.kind === 'network' && e.op === 'connect' && e.port === PORT)).toBe(true);
    expect(scripted.events().length).toBe(before);
  });

  it('keeps the forwarder out of reach of sandboxed commands', async () => {
    const kill = await session.run({
      cmd: ['bash', '-c', 'n=0; for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q -- "--forwar[d]"; then n=$((n+1)); kill -9 ${p#/proc/} || echo refused; fi; done; echo found=$n'],
      mode: { kind: 'unenforced' },
      timeoutMs: 60_000,
    });
    expect(kill.exec.stdout).toContain('found=2');
    expect(kill.exec.stdout.match(/refused/g)?.length).toBe(2);
    // And it holds nothing worth taking: no capability, no_new_privs.
    const status = await container.exec({
      cmd: ['sh', '-c', 'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline | grep -q -- "--forwar[d]"; then grep -E "^(CapEff|CapPrm|NoNewPrivs):" $p/status; fi; done'],
      user: '0:0',
    });
    expect(status.stdout.trim().split('\n').map((l) => l.replace(/\s+/g, ' ')).sort()).toEqual([
      'CapEff: 0000000000000000',
      'CapEff: 0000000000000000',
      'CapPrm: 0000000000000000',
      'CapPrm: 0000000000000000',
      'NoNewPrivs: 1',
      'NoNewPrivs: 1',
    ]);
    const again = await enforce(withRelayGrant(POLICY, PORT), post(PORT));
    expect(again.exec.stdout.trim()).toBe(SCRIPTED_REPLY);
  });

  it('reaches a relay on a unix socket whose key never enters the container', async () => {
    const r = await enforce(withRelayGrant(POLICY, UPSTREAM_PORT), post(UPSTREAM_PORT));
    expect([r.exec.exitCode, r.exec.stdout.trim()]).toEqual([0, 'upstream says hi']);
    // The key was used, on the host side only.
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${MARKER}`);
    expect(JSON.stringify(r)).not.toContain(MARKER);
    expect(JSON.stringify(upstream.events())).not.toContain(MARKER);

    // Every process's environment, read by root from outside any sandbox (the forwarders included).
    const environ = await container.exec({
      cmd: ['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; tr "\\0" "\\n" < $p/environ; done'],
      user: '0:0',
    });
    expect(environ.exitCode).toBe(0);
    expect(environ.stdout).toContain('--forward');
    expect(environ.stdout).toContain('PATH=');
    expect(environ.stdout).not.toContain(MARKER);
    expect(environ.stdout).not.toContain('OPENAI_API_KEY');

    // The filesystem: the harness mount and everywhere a process could have written.
    for (const dir of ['/opt/authbench', '/app', '/tmp', '/root', '/etc', '/var']) {
      expect([dir, await container.archiveContains?.(dir, [MARKER])]).toEqual([dir, false]);
    }
    // The check can fail: a planted copy is found.
    expect((await container.exec({ cmd: ['sh', '-c', `echo ${MARKER.slice(0, 10)}''${MARKER.slice(10)} > /tmp/planted`] })).exitCode).toBe(0);
    expect(await container.archiveContains?.('/tmp', [MARKER])).toBe(true);
  });

  it('names the port when something in the container already listens on it', async () => {
    await expect(openRelayForward(container, scripted, { port: PORT })).rejects.toMatchObject({
      code: 'RELAY_FORWARD_FAILED',
      message: expect.stringContaining(`${PORT}`) as unknown,
      hint: expect.stringContaining(`127.0.0.1:${PORT}`) as unknown,
    });
    // Closing a forward frees its port: a new one listens there and serves.
    await forwards[0]?.close();
    forwards[0] = await openRelayForward(container, scripted, { port: PORT });
    expect((await enforce(withRelayGrant(POLICY, PORT), post(PORT))).exec.stdout.trim()).toBe(SCRIPTED_REPLY);
  });
});
