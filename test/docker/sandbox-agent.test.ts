/**
 * The in-container agent (`ab-launch --serve`) behind SandboxSession: many
 * commands through one attached exec, with the same results the exec path
 * gives, and nothing left running once the session is closed.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, LABELS, parseDockerHost, type Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { ensureLauncher, installLauncher, LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import { denyAllPolicy, type Policy } from '../../sandbox/policy/index.ts';
import { AgentClient, SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';

const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};
const POLICY: Policy = { read: ['/app/data.txt'], write: [], execute: ['/usr/bin/cat'] };
const enforce = (policy: Policy): RunOptions['mode'] => ({ kind: 'enforce', policy, implicit: RUNTIME });
const UNENFORCED: RunOptions['mode'] = { kind: 'unenforced' };

let docker: Dockerode;
let container: Container;
let session: SandboxSession;

/** Every process in the container as `comm args…`, read through a plain exec (not the agent). */
async function processes(): Promise<string[]> {
  const r = await container.exec({ cmd: ['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done'] });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

async function runningExecs(): Promise<string[]> {
  const info = await docker.getContainer(container.id).inspect();
  const running: string[] = [];
  for (const id of info.ExecIDs ?? []) {
    const e = await docker.getExec(id).inspect();
    if (e.Running) running.push(`${id.slice(0, 12)} ${e.ProcessConfig.entrypoint} ${e.ProcessConfig.arguments.join(' ')}`);
  }
  return running;
}

beforeAll(async () => {
  docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  const engine = await connectDocker();
  const binary = await ensureLauncher(engine);
  container = await engine.startContainer({
    image: BASE_IMAGE_REF,
    workdir: '/app',
    labels: { [LABELS.run]: `sandbox-agent-test-${process.pid}` },
  });
  await installLauncher(container, binary);
  const setup = await container.exec({
    cmd: ['sh', '-c', 'mkdir -p /app && echo public > /app/data.txt && echo AUTHBENCH_CANARY_AGENT > /app/secret.txt && cp /bin/sleep /tmp/hangmark'],
  });
  expect(setup.exitCode).toBe(0);
  session = new SandboxSession(container, '/app', { transport: 'agent' });
});

afterAll(async () => {
  await session?.close();
  await container?.remove();
});

describe('SandboxSession over the agent', () => {
  it('runs through the agent and records it', async () => {
    const r = await session.run({ cmd: ['sh', '-c', 'exit 0'], mode: UNENFORCED, trace: false });
    expect(r.transport).toBe('agent');
    expect(await session.transportInfo()).toEqual({ kind: 'agent' });
  });

  it('returns exit codes, and keeps stdout and stderr apart', async () => {
    for (const code of [0, 1, 3, 42, 255]) {
      const r = await session.run({ cmd: ['sh', '-c', `echo out-${code}; echo err-${code} >&2; exit ${code}`], mode: UNENFORCED, trace: false });
      expect([r.exec.exitCode, r.exec.stdout, r.exec.stderr, r.exec.timedOut]).toEqual([code, `out-${code}\n`, `err-${code}\n`, false]);
    }
  });

  it('reports a signal death as 128 + signal', async () => {
    const r = await session.run({ cmd: ['sh', '-c', 'kill -TERM $$'], mode: UNENFORCED, trace: false });
    expect(r.exec.exitCode).toBe(143);
  });

  it('passes stdin, env and the working directory', async () => {
    const r = await session.run({
      cmd: ['sh', '-c', 'cat; echo "$AB_TEST_VAR"; pwd'],
      stdin: 'from stdin\n',
      env: { AB_TEST_VAR: 'set=yes' },
      workdir: '/tmp',
      mode: UNENFORCED,
      trace: false,
    });
    expect(r.exec.stdout).toBe('from stdin\nset=yes\n/tmp\n');
  });

  it('carries binary output intact, including bytes that look like frames', async () => {
    // NUL, a frame-like header (length 1, type 'D'), 0xff and a lone newline.
    const bytes = Buffer.from([0, 0, 0, 0, 1, 0x44, 0xff, 0x00, 0x0a, 0x41]);
    const octal = [...bytes].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
    const r = await session.run({ cmd: ['printf', octal], mode: UNENFORCED, trace: false });
    expect(r.exec.exitCode).toBe(0);
    expect(r.exec.stdout).toBe(bytes.toString('utf8'));
    expect(r.outputBytes).toEqual({ stdout: bytes.length, stderr: 0 });
  });

  it('caps a flood and counts what it dropped', async () => {
    const r = await session.run({ cmd: ['head', '-c', '30000000', '/dev/zero'], mode: UNENFORCED, trace: false, outputCapBytes: 1000 });
    expect(r.exec.exitCode).toBe(0);
    expect(r.exec.stdout.length).toBe(1000);
    expect(r.exec.stdoutTruncated).toBe(true);
    expect(r.outputBytes?.stdout).toBe(30_000_000);
  });

  it('kills the whole process group on timeout, flooding or hanging, and keeps serving', async () => {
    const flood = await session.run({ cmd: ['yes'], mode: UNENFORCED, trace: false, timeoutMs: 300, outputCapBytes: 100 });
    expect([flood.exec.timedOut, flood.exec.exitCode, flood.exec.stdout.length]).toEqual([true, null, 100]);

    const hang = await session.run({ cmd: ['sh', '-c', '/tmp/hangmark 300 & /tmp/hangmark 301'], mode: UNENFORCED, trace: false, timeoutMs: 300 });
    expect([hang.exec.timedOut, hang.exec.exitCode]).toEqual([true, null]);
    expect((await processes()).filter((p) => p.includes('hangmark'))).toEqual([]);

    const after = await session.run({ cmd: ['echo', 'still here'], mode: UNENFORCED, trace: false });
    expect([after.transport, after.exec.stdout]).toEqual(['agent', 'still here\n']);
  });

  it('enforces through ab-launch and traces: an allowed read', async () => {
    const r = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    expect(r.launcherError).toBeUndefined();
    expect([r.exec.exitCode, r.exec.stdout]).toEqual([0, 'public\n']);
    expect(r.enforcement.level).toBe('full');
    expect(r.events.some((e) => e.kind === 'exec' && e.path === '/usr/bin/cat' && e.result === 0)).toBe(true);
    expect(r.events.some((e) => e.kind === 'file' && e.op === 'read' && e.path === '/app/data.txt' && !e.denied)).toBe(true);
    expect(r.denials).toEqual([]);
  });

  it('reports denials: a read outside the policy, and everything under deny-all', async () => {
    const secret = await session.run({ cmd: ['cat', '/app/secret.txt'], mode: enforce(POLICY) });
    expect(secret.exec.exitCode).not.toBe(0);
    expect(secret.exec.stdout).not.toContain('AUTHBENCH_CANARY_AGENT');
    expect(secret.denials.some((e) => e.kind === 'file' && e.path === '/app/secret.txt')).toBe(true);

    const denied = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(denyAllPolicy()) });
    expect(denied.transport).toBe('agent');
    expect(denied.launcherError).toBeUndefined();
    expect(denied.exec.exitCode).not.toBe(0);
    expect(denied.exec.stdout).toBe('');
    expect(denied.denials.some((e) => e.kind === 'exec' && e.path === '/usr/bin/cat')).toBe(true);
  });

  it('does not hand the agent’s descriptors to commands', async () => {
    const r = await session.run({ cmd: ['sh', '-c', 'ls /proc/self/fd'], mode: UNENFORCED, trace: false });
    // 0, 1, 2 and the descriptor ls itself opened for the listing.
    expect(r.exec.stdout.split('\n').filter((l) => l !== '').map(Number).filter((fd) => fd > 3)).toEqual([]);
  });
});

describe('agent lifecycle', () => {
  it('closing a session stops the agent even mid-command and leaves no exec or process behind', async () => {
    const s = new SandboxSession(container, '/app', { transport: 'agent' });
    const pending = s.run({ cmd: ['/tmp/hangmark', '302'], mode: UNENFORCED, trace: false });
    const failed = pending.then(
      () => 'completed',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect((await processes()).some((p) => p.includes(`${LAUNCHER_PATH} --serve`))).toBe(true);
    await s.close();
    expect(await failed).toMatch(/agent exited/);
    const left = await processes();
    expect(left.filter((p) => p.includes('hangmark 302'))).toEqual([]);
    // Only the main session's agent (from the describe above) is still serving.
    expect(left.filter((p) => p.includes('--serve'))).toHaveLength(1);
  });

  it('the main session’s close leaves nothing running', async () => {
    await session.close();
    expect((await processes()).filter((p) => p.includes('--serve') || p.includes('hangmark'))).toEqual([]);
    expect(await runningExecs()).toEqual([]);
    // A later run starts a fresh agent.
    const r = await session.run({ cmd: ['echo', 'again'], mode: UNENFORCED, trace: false });
    expect([r.transport, r.exec.stdout]).toEqual(['agent', 'again\n']);
    await session.close();
    expect(await runningExecs()).toEqual([]);
  });

  it('--stop-serve stops an agent by pid', async () => {
    const client = await AgentClient.start(container);
    expect(client.alive).toBe(true);
    const stop = await container.exec({ cmd: [LAUNCHER_PATH, '--stop-serve', String(client.hello.pid)] });
    expect(stop.exitCode).toBe(0);
    await expect(client.request({ argv: ['true'], outputCapBytes: 10 })).rejects.toThrow(/agent exited|cannot reach/);
    expect(client.alive).toBe(false);
    await client.close();
    expect(await runningExecs()).toEqual([]);
  });
});

describe('fallback to the exec path', () => {
  it('uses exec when the container offers no attach, and says why', async () => {
    const bare: Container = {
      id: container.id,
      image: container.image,
      exec: (o) => container.exec(o),
      copyIn: (h, d) => container.copyIn(h, d),
      putFiles: (d, f, m) => container.putFiles(d, f, m),
      readFile: (p) => container.readFile(p),
      copyOut: (p, h) => container.copyOut(p, h),
      remove: () => Promise.resolve(),
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
    const s = new SandboxSession(bare, '/app');
    const r = await s.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    expect([r.transport, r.exec.stdout, r.enforcement.level]).toEqual(['exec', 'public\n', 'full']);
    expect((await s.transportInfo()).fallbackReason).toMatch(/no attached exec/);
  });

  it('uses exec when the agent cannot start (no launcher in the container)', async () => {
    const engine = await connectDocker();
    await using plain = await engine.startContainer({ image: BASE_IMAGE_REF, labels: { [LABELS.run]: `sandbox-agent-test-${process.pid}` } });
    const s = new SandboxSession(plain, '/');
    const info = await s.transportInfo();
    expect(info.kind).toBe('exec');
    expect(info.fallbackReason).toMatch(/agent did not start/);
    expect(info.fallbackReason).toContain('ab-launch');
    // The session stays on the exec path it chose, even once a launcher is there.
    await installLauncher(plain, await ensureLauncher(engine));
    const r = await s.run({ cmd: ['echo', 'via exec'], mode: UNENFORCED, trace: false });
    expect([r.transport, r.exec.stdout]).toEqual(['exec', 'via exec\n']);
    await s.close();
  });

  it('transport: exec gives the same results as the agent', async () => {
    const viaExec = new SandboxSession(container, '/app', { transport: 'exec' });
    const viaAgent = new SandboxSession(container, '/app', { transport: 'agent' });
    try {
      for (const s of [viaExec, viaAgent]) {
        const r = await s.run({ cmd: ['cat', '/app/secret.txt'], mode: enforce(POLICY) });
        expect(r.transport).toBe(s === viaExec ? 'exec' : 'agent');
        expect(r.exec.exitCode).toBe(1);
        expect(r.denials.map((e) => (e.kind === 'file' ? e.path : e.kind))).toContain('/app/secret.txt');
      }
    } finally {
      await viaAgent.close();
      await viaExec.close();
    }
  });
});
