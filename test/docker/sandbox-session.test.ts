/**
 * The sandbox session against the real kernel: a policy compiled against the
 * container's filesystem, enforced by ab-launch, observed by strace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendmmsgLines } from '../../adversarial/datagrams.ts';
import { BASE_IMAGE_REF, connectDocker, type Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { denyAllPolicy, type Policy } from '../../sandbox/policy/index.ts';
import { HARNESS_ROOT, SandboxSession } from '../../sandbox/run/index.ts';
import { harnessContainer } from './harness.ts';

// Just enough runtime for dynamically linked coreutils: the loader, libraries, /dev/null.
const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};

const POLICY: Policy = {
  read: ['/app/data.txt'],
  write: ['/app/out/result.txt'],
  execute: ['/usr/bin/cat', '/usr/bin/tee'],
};

let container: Container;
let session: SandboxSession;

beforeAll(async () => {
  const engine = await connectDocker();
  container = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', run: `sandbox-session-test-${process.pid}` });
  const setup = await container.exec({ cmd: ['sh', '-c', 'mkdir -p /app/out && echo public > /app/data.txt && echo AUTHBENCH_CANARY_TEST > /app/secret.txt'] });
  expect(setup.exitCode).toBe(0);
  session = new SandboxSession(container, '/app');
});

afterAll(async () => {
  await container?.remove();
});

const enforce = (policy: Policy) => ({ kind: 'enforce' as const, policy, implicit: RUNTIME });

describe('SandboxSession', () => {
  it('probes the Landlock ABI through the launcher', async () => {
    expect(await session.landlockAbi()).toBeGreaterThanOrEqual(1);
  });

  it('runs an allowed read and traces it as the command’s own events', async () => {
    const r = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    expect(r.launcherError).toBeUndefined();
    expect(r.exec.exitCode).toBe(0);
    expect(r.exec.stdout).toBe('public\n');
    expect(r.enforcement.level).toBe('full');
    expect(r.enforcement.seccomp).toBe(true);
    expect(r.enforcement.landlockAbi).toBeGreaterThanOrEqual(1);
    expect(r.events.some((e) => e.kind === 'exec' && e.path === '/usr/bin/cat' && e.result === 0)).toBe(true);
    expect(r.events.some((e) => e.kind === 'file' && e.op === 'read' && e.path === '/app/data.txt')).toBe(true);
    // The launcher's own setup (opening its rule paths, raising its OOM score) is not the command's doing.
    expect(r.events.some((e) => e.kind === 'file' && (e.path.startsWith(HARNESS_ROOT) || e.path === '/proc/self/oom_score_adj'))).toBe(false);
    expect(r.denials).toEqual([]);
  });

  it('denies a read outside the policy and reports the denial', async () => {
    const r = await session.run({ cmd: ['cat', '/app/secret.txt'], mode: enforce(POLICY) });
    expect(r.exec.exitCode).not.toBe(0);
    expect(r.exec.stdout).not.toContain('AUTHBENCH_CANARY_TEST');
    expect(r.denials.some((e) => e.kind === 'file' && e.path === '/app/secret.txt')).toBe(true);
  });

  it('denies executing a binary the policy does not name', async () => {
    const r = await session.run({ cmd: ['head', '/app/data.txt'], mode: enforce(POLICY) });
    expect(r.exec.exitCode).not.toBe(0);
    expect(r.denials.some((e) => e.kind === 'exec' && e.path.endsWith('/head'))).toBe(true);
  });

  it('allows creating the one new file the policy names and reports the directory-level widening', async () => {
    const r = await session.run({ cmd: ['tee', '/app/out/result.txt'], stdin: 'done\n', mode: enforce(POLICY) });
    expect(r.exec.exitCode).toBe(0);
    expect((await container.readFile('/app/out/result.txt'))?.toString()).toBe('done\n');
    const widened = r.compiled?.fidelity.entries.filter((e) => e.kind === 'widened' && e.entry === '/app/out/result.txt') ?? [];
    expect(widened.length).toBeGreaterThan(0);
    expect(widened.some((e) => e.granted.some((g) => g.path === '/app/out'))).toBe(true);
  });

  it('knows about the file an earlier command created (snapshot patched from the trace)', async () => {
    const r = await session.run({ cmd: ['cat', '/app/out/result.txt'], mode: enforce({ ...POLICY, read: ['/app/out/result.txt'] }) });
    expect(r.exec.stdout).toBe('done\n');
    const entry = r.compiled?.fidelity.entries.find((e) => e.axis === 'read' && e.entry === '/app/out/result.txt');
    expect(entry?.kind).toBe('exact');
  });

  it('compiles again only when the tree or the policy changed (a command that changed nothing keeps the rules)', async () => {
    const first = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    const same = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    expect(same.compiled).toBeDefined();
    expect(same.compiled).toBe(first.compiled);
    // Another policy object (equal or not) compiles anew.
    const other = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce({ ...POLICY }) });
    expect(other.compiled).not.toBe(same.compiled);
    // The same policy object across a command that created a file: the next compile sees it.
    const third: Policy = { ...POLICY, read: ['/app/data.txt', '/app/out/third.txt'], write: ['/app/out/third.txt'] };
    const before = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(third) });
    expect(before.compiled?.fidelity.entries.find((e) => e.axis === 'read' && e.entry === '/app/out/third.txt')?.kind).not.toBe('exact');
    const created = await session.run({ cmd: ['tee', '/app/out/third.txt'], stdin: 'x\n', mode: enforce(third) });
    expect(created.exec.exitCode).toBe(0);
    expect(created.compiled).toBe(before.compiled);
    const after = await session.run({ cmd: ['cat', '/app/out/third.txt'], mode: enforce(third) });
    expect(after.exec.stdout).toBe('x\n');
    expect(after.compiled).not.toBe(before.compiled);
    expect(after.compiled?.fidelity.entries.find((e) => e.axis === 'read' && e.entry === '/app/out/third.txt')?.kind).toBe('exact');
  });

  it('under deny-all nothing runs', async () => {
    const r = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(denyAllPolicy()) });
    expect(r.exec.exitCode).not.toBe(0);
    expect(r.exec.stdout).toBe('');
  });

  it('unenforced runs are still traced and record enforcement none', async () => {
    const r = await session.run({ cmd: ['cat', '/app/secret.txt'], mode: { kind: 'unenforced' } });
    expect(r.exec.stdout).toContain('AUTHBENCH_CANARY_TEST');
    expect(r.enforcement.level).toBe('none');
    expect(r.compiled).toBeUndefined();
    expect(r.events.some((e) => e.kind === 'file' && e.path === '/app/secret.txt' && !e.denied)).toBe(true);
  });

  it("traces datagrams sent in a batch to their destinations, as it traces one sendmsg (the harness's real strace)", async () => {
    // sendmsg to one address, then one sendmmsg of two messages to two others.
    const script = [
      'import socket',
      's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
      's.sendmsg([b"canary"], [], 0, ("127.0.0.1", 9999))',
      ...sendmmsgLines('s', 'b"canary"', [
        ['127.0.0.2', 9998],
        ['127.0.0.3', 9997],
      ]),
    ].join('\n');
    const r = await session.run({ cmd: ['python3', '-c', script], mode: { kind: 'unenforced' } });
    expect(r.exec.stdout).toContain('batch-sent 2');
    const sends = r.events.flatMap((e) => (e.kind === 'network' && e.op === 'sendto' ? [`${e.syscall} ${e.address}:${e.port}`] : []));
    expect(sends).toEqual(['sendmsg 127.0.0.1:9999', 'sendmmsg 127.0.0.2:9998', 'sendmmsg 127.0.0.3:9997']);
  });
});
