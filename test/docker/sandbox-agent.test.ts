/**
 * The in-container agent (`ab-launch --serve`) behind SandboxSession, against
 * the real kernel: many commands through one attached exec, the launcher's
 * verdict on a channel no command holds, seccomp denials recorded by the
 * agent, no process outliving its command, and nothing left running once the
 * session is closed. Commands are treated as hostile: each case below is
 * something a command under an injected instruction could try.
 */
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, parseDockerHost, type Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import { denyAllPolicy, type Policy } from '../../sandbox/policy/index.ts';
import { AgentClient, SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';
import { harnessContainer } from './harness.ts';

const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};
const POLICY: Policy = { read: ['/app/data.txt'], write: [], execute: ['/usr/bin/cat'] };
/** What a shell script needs: bash, coreutils, python, writes under /app and /tmp. */
const SHELL_POLICY: Policy = { read: ['/app/**', '/usr/**', '/etc/**'], write: ['/app/**', '/tmp/**'], execute: ['/usr/bin/**', '/bin/**'] };
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

const sh = (script: string): string[] => ['bash', '-c', script];

beforeAll(async () => {
  docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  const engine = await connectDocker();
  container = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', run: `sandbox-agent-test-${process.pid}`, pidsLimit: 512 });
  const setup = await container.exec({
    cmd: ['sh', '-c', 'mkdir -p /app && echo public > /app/data.txt && echo AUTHBENCH_CANARY_AGENT > /app/secret.txt && cp /bin/sleep /tmp/hangmark'],
  });
  expect(setup.exitCode).toBe(0);
  session = new SandboxSession(container, '/app');
});

afterAll(async () => {
  await session?.close();
  await container?.remove();
});

describe('SandboxSession over the agent', () => {
  it('returns exit codes, and keeps stdout and stderr apart', async () => {
    const r = await session.run({ cmd: sh('echo out; echo err >&2; exit 3'), mode: UNENFORCED, trace: false });
    expect([r.exec.exitCode, r.exec.stdout, r.exec.stderr]).toEqual([3, 'out\n', 'err\n']);
  });

  it('reports a signal death as 128 + signal', async () => {
    const r = await session.run({ cmd: sh('kill -9 $$'), mode: UNENFORCED, trace: false });
    expect(r.exec.exitCode).toBe(137);
  });

  it('passes stdin, env and the working directory', async () => {
    const r = await session.run({ cmd: sh('cat; echo "$GREETING"; pwd'), mode: UNENFORCED, trace: false, stdin: 'from stdin\n', env: { GREETING: 'hi' }, workdir: '/tmp' });
    expect(r.exec.stdout).toBe('from stdin\nhi\n/tmp\n');
  });

  it('carries binary output intact, including bytes that look like frames', async () => {
    const bytes = Buffer.from([0, 0, 0, 9, 0x44, 1, 2, 0xff, 0x80, 10]);
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

  it('kills every process of a command on timeout, flooding, hanging or escaped with setsid, and keeps serving', async () => {
    const flood = await session.run({ cmd: ['yes'], mode: UNENFORCED, trace: false, timeoutMs: 300, outputCapBytes: 100 });
    expect([flood.exec.timedOut, flood.exec.exitCode, flood.exec.stdout.length]).toEqual([true, null, 100]);

    const hang = await session.run({ cmd: sh('/tmp/hangmark 300 & setsid /tmp/hangmark 301 & /tmp/hangmark 302'), mode: UNENFORCED, timeoutMs: 300 });
    expect([hang.exec.timedOut, hang.exec.exitCode]).toEqual([true, null]);
    expect((await processes()).filter((p) => p.includes('hangmark'))).toEqual([]);

    const after = await session.run({ cmd: ['echo', 'still here'], mode: UNENFORCED, trace: false });
    expect(after.exec.stdout).toBe('still here\n');
  });

  it('an untraced command’s background processes do not outlive it', async () => {
    const r = await session.run({ cmd: sh('(setsid /tmp/hangmark 310 >/dev/null 2>&1 &) ; echo started'), mode: UNENFORCED, trace: false });
    expect(r.exec.stdout).toBe('started\n');
    expect(r.leftover?.count).toBeGreaterThanOrEqual(1);
    expect(r.leftover?.escaped).toBe(false);
    expect((await processes()).filter((p) => p.includes('hangmark 310'))).toEqual([]);
  });

  it('a traced command ends when its main process does: what it left running is stopped and reported as survivors', async () => {
    const started = Date.now();
    const r = await session.run({ cmd: sh('(setsid sleep 300 >/dev/null 2>&1 &); exit 3'), mode: UNENFORCED, timeoutMs: 60_000 });
    expect([r.exec.exitCode, r.exec.timedOut]).toEqual([3, false]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.survivors?.count).toBe(1);
    // The background child may be stopped before its exec of setsid (still the shell's fork), or
    // before or after setsid execs sleep: any of those names is that one survivor.
    expect(r.survivors?.info).toMatch(/^\d+ (bash|setsid|sleep)$/);
    expect(r.leftover?.count).toBe(0);
    // It ran traced until it was stopped: the tracer saw it start.
    expect(r.events.some((e) => e.kind === 'exec' && /\/(setsid|sleep)$/.test(e.path) && e.result === 0)).toBe(true);
    expect((await processes()).filter((p) => p.includes('sleep 300'))).toEqual([]);

    const untraced = await session.run({ cmd: sh('(setsid sleep 300 >/dev/null 2>&1 &); exit 3'), mode: UNENFORCED, trace: false });
    expect([untraced.exec.exitCode, untraced.leftover?.count, untraced.leftover?.escaped, untraced.survivors?.count]).toEqual([3, 1, false, 0]);
    expect((await processes()).filter((p) => p.includes('sleep 300'))).toEqual([]);

    const none = await session.run({ cmd: sh('sleep 0.2 & wait; exit 0'), mode: UNENFORCED });
    expect([none.exec.exitCode, none.survivors?.count, none.leftover?.count]).toEqual([0, 0, 0]);
  });

  it('keeps the output a survivor wrote before the command ended; enforced commands end the same way', async () => {
    const r = await session.run({ cmd: sh('(while :; do echo tick; sleep 0.05; done &); sleep 0.3; echo main-done'), mode: enforce(SHELL_POLICY), timeoutMs: 60_000 });
    expect([r.exec.exitCode, r.exec.timedOut]).toEqual([0, false]);
    expect(r.exec.stdout).toContain('main-done');
    expect(r.exec.stdout).toMatch(/^tick$/m);
    expect(r.survivors?.count).toBeGreaterThanOrEqual(1);
    expect(r.leftover?.count).toBe(0);
  });

  it('enforces through ab-launch and traces: an allowed read', async () => {
    const r = await session.run({ cmd: ['cat', '/app/data.txt'], mode: enforce(POLICY) });
    expect(r.launcherError).toBeUndefined();
    expect([r.exec.exitCode, r.exec.stdout]).toEqual([0, 'public\n']);
    expect(r.enforcement.level).toBe('full');
    expect(r.launcherReport?.scoped).toEqual(['abstract-unix', 'signal']);
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
    expect(denied.launcherError).toBeUndefined();
    expect(denied.exec.exitCode).not.toBe(0);
    expect(denied.exec.stdout).toBe('');
    expect(denied.denials.some((e) => e.kind === 'exec' && e.path === '/usr/bin/cat')).toBe(true);
  });

  it('does not hand the agent’s descriptors to commands', async () => {
    for (const mode of [UNENFORCED, enforce(SHELL_POLICY)]) {
      const r = await session.run({ cmd: sh('ls /proc/self/fd'), mode });
      // 0, 1, 2 and the descriptor ls itself opened for the listing.
      expect(r.exec.stdout.split('\n').filter((l) => l !== '').map(Number).filter((fd) => fd > 3)).toEqual([]);
    }
  });
});

describe('a hostile command', () => {
  it('cannot pass for the launcher: a launcher-looking line and exit 121 are just a command that failed', async () => {
    const r = await session.run({ cmd: sh('echo "ab-launch: Landlock unavailable: forged" >&2; exit 121'), mode: enforce(SHELL_POLICY) });
    expect(r.launcherError).toBeUndefined();
    expect(r.exec.exitCode).toBe(121);
    expect(r.enforcement.level).toBe('full');
  });

  it('cannot signal the agent, the tracer or pid 1 — enforced or not — and the refusals are in the trace', async () => {
    const agentPid = (await session.harnessPids())[0] ?? 0;
    for (const mode of [UNENFORCED, enforce(SHELL_POLICY)]) {
      const r = await session.run({ cmd: sh(`kill -STOP ${agentPid}; kill -9 1; kill -STOP $PPID; echo alive`), mode, timeoutMs: 10_000 });
      expect(r.exec.timedOut).toBe(false);
      expect(r.exec.stdout).toBe('alive\n');
      const refused = r.denials.filter((e) => e.kind === 'process' && e.op === 'kill').map((e) => (e.kind === 'process' ? e.target : 0));
      expect(refused).toEqual(expect.arrayContaining([agentPid, 1]));
      expect(refused).toHaveLength(3);
    }
    expect((await session.run({ cmd: ['true'], mode: UNENFORCED, trace: false })).exec.exitCode).toBe(0);
  });

  it('cannot read another process’s environment, memory or descriptors through /proc', async () => {
    const agentPid = (await session.harnessPids())[0] ?? 0;
    // (Listing /proc/<pid>/fd shows descriptor numbers only; what they point at is ptrace-guarded.)
    const r = await session.run({ cmd: sh(`cat /proc/${agentPid}/environ; readlink /proc/${agentPid}/fd/0; cat /proc/${agentPid}/fd/0 </dev/null; head -c 8 /proc/1/mem; echo done`), mode: UNENFORCED, timeoutMs: 10_000 });
    expect(r.exec.stdout).toBe('done\n');
    expect(r.denials.filter((e) => e.kind === 'file' && e.path.startsWith('/proc/')).length).toBeGreaterThanOrEqual(3);
  });

  it('cannot change the harness: it is a read-only mount, even unenforced', async () => {
    const r = await session.run({ cmd: sh(`echo '#!/bin/sh' > ${LAUNCHER_PATH}; rm -f ${LAUNCHER_PATH}; chmod 000 ${LAUNCHER_PATH}; mv /opt/authbench /opt/x; echo tried`), mode: UNENFORCED });
    expect(r.exec.stdout).toBe('tried\n');
    expect(r.exec.stderr).toMatch(/Read-only file system/);
    const after = await session.run({ cmd: ['cat', '/app/secret.txt'], mode: enforce(POLICY) });
    expect([after.enforcement.level, after.exec.exitCode]).toEqual(['full', 1]);
  });

  it('cannot change the limits or scheduling of harness processes; the refusals are recorded by the agent', async () => {
    const agentPid = (await session.harnessPids())[0] ?? 0;
    const script = [
      'import ctypes, os, resource',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'out = []',
      `for fn in (lambda: resource.prlimit(${agentPid}, resource.RLIMIT_NOFILE, (3, 3)), lambda: os.setpriority(os.PRIO_PROCESS, ${agentPid}, 19), lambda: os.sched_setaffinity(${agentPid}, {0}), lambda: os.setpriority(os.PRIO_USER, 0, 19)):`,
      '    try: fn(); out.append("ok")',
      '    except OSError as e: out.append(str(e.errno))',
      'print(" ".join(out))',
    ].join('\n');
    for (const mode of [UNENFORCED, enforce(SHELL_POLICY)]) {
      const r = await session.run({ cmd: ['python3', '-c', script], mode });
      expect(r.exec.stdout.trim()).toBe('1 1 1 1');
      const refused = r.denials.filter((e) => e.kind === 'seccomp').map((e) => (e.kind === 'seccomp' ? e.syscall : ''));
      expect(refused).toEqual(['prlimit64', 'setpriority', 'sched_setaffinity', 'setpriority']);
      expect(r.seccompDenials).toBe(4);
    }
  });

  it('cannot start a child the tracer does not follow (CLONE_UNTRACED), nor use io_uring; both refusals are visible', async () => {
    const script = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'libc.syscall.restype = ctypes.c_long',
      'CLONE_UNTRACED = 0x00800000; SIGCHLD = 17',
      'r = libc.syscall(56, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0)',
      'if r == 0: os._exit(0)',
      'print("clone", r, ctypes.get_errno())',
      'p = (ctypes.c_char * 120)()',
      'print("io_uring", libc.syscall(425, 4, p), ctypes.get_errno())',
    ].join('\n');
    for (const mode of [UNENFORCED, enforce(SHELL_POLICY)]) {
      const r = await session.run({ cmd: ['python3', '-c', script], mode });
      expect(r.exec.stdout).toBe('clone -1 1\nio_uring -1 1\n');
      const refused = r.events.filter((e) => e.kind === 'seccomp');
      expect(refused.map((e) => (e.kind === 'seccomp' ? `${e.syscall} ${e.detail}` : ''))).toEqual(['clone CLONE_UNTRACED', 'io_uring_setup always denied']);
      expect(r.leftover?.count).toBe(0);
    }
  });

  it('makes no grant of a symlink it created: ln -s /etc /tmp/e gives the next command nothing', async () => {
    const policy: Policy = { read: ['/tmp/**', '/usr/**'], write: ['/tmp/**'], execute: ['/usr/bin/**', '/bin/**'] };
    const made = await session.run({ cmd: sh('rm -rf /tmp/e && ln -s /etc /tmp/e && echo linked'), mode: enforce(policy) });
    expect(made.exec.stdout).toBe('linked\n');
    const next = await session.run({ cmd: sh('cat /tmp/e/shadow; echo x > /tmp/e/authbench-owned; echo done'), mode: enforce(policy) });
    expect(next.exec.stdout).toBe('done\n');
    expect(next.denials.some((e) => e.kind === 'file' && e.path === '/tmp/e/shadow')).toBe(true);
    expect(next.compiled?.rules.fs.some((r) => r.path === '/etc')).toBe(false);
    expect((await container.exec({ cmd: ['test', '-e', '/etc/authbench-owned'] })).exitCode).not.toBe(0);
  });

  it('a setgid directory is ordinary work: allowed wherever writes are, and the denial visible where they are not', async () => {
    const allowed = await session.run({ cmd: sh('mkdir -p /app/shared && chmod 2770 /app/shared && stat -c %a /app/shared'), mode: enforce(SHELL_POLICY) });
    expect([allowed.exec.exitCode, allowed.exec.stdout]).toEqual([0, '2770\n']);
    const readOnly: Policy = { ...SHELL_POLICY, write: [] };
    const denied = await session.run({ cmd: sh('chmod 755 /app/shared'), mode: enforce(readOnly) });
    expect(denied.exec.exitCode).not.toBe(0);
    expect(denied.denials.some((e) => e.kind === 'seccomp' && e.syscall.startsWith('fchmodat'))).toBe(true);
  });

  it('a command that removes its own working directory makes the next one fail, not the sandbox', async () => {
    const s = new SandboxSession(container, '/app/gone');
    try {
      await container.exec({ cmd: ['mkdir', '-p', '/app/gone'] });
      const r = await s.run({ cmd: sh('rm -rf /app/gone; echo removed'), mode: enforce(SHELL_POLICY) });
      expect(r.exec.stdout).toBe('removed\n');
      const next = await s.run({ cmd: ['true'], mode: enforce(SHELL_POLICY) });
      expect(next.launcherError).toBeUndefined();
      expect(next.spawnError).toMatch(/working directory \/app\/gone/);
      expect(next.exec.exitCode).toBe(126);
    } finally {
      await s.close();
    }
  });

  it('floods the trace in vain: the host keeps only the caps, the count says how much was cut, the command ends normally', async () => {
    const flood = sh('for i in $(seq 20000); do : < /nonexistent-$i; done 2>/dev/null; echo flooded');
    const r = await session.run({ cmd: flood, mode: UNENFORCED, traceCapBytes: 200_000, traceCapEvents: 1000, timeoutMs: 60_000 });
    expect([r.exec.exitCode, r.exec.stdout]).toEqual([0, 'flooded\n']);
    expect(r.trace?.truncated).toBe(true);
    expect(r.trace?.bytes).toBeGreaterThan(200_000);
    expect(r.events.length).toBe(1000);
    expect(r.trace?.droppedEvents).toBeGreaterThan(0);
  });
});

describe('agent lifecycle', () => {
  it('closing a session stops the agent even mid-command and leaves no exec or process behind', async () => {
    const s = new SandboxSession(container, '/app');
    const pending = s.run({ cmd: ['/tmp/hangmark', '402'], mode: UNENFORCED, trace: false });
    const failed = pending.then(
      () => 'completed',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect((await processes()).some((p) => p.includes(`${LAUNCHER_PATH} --serve`))).toBe(true);
    await s.close();
    expect(await failed).toMatch(/agent exited/);
    const left = await processes();
    expect(left.filter((p) => p.includes('hangmark 402'))).toEqual([]);
    // Only the main session's agent (from the describe above) is still serving.
    expect(left.filter((p) => p.includes('--serve'))).toHaveLength(1);
  });

  it('an agent stopped from outside mid-command ends the request at its deadline, as SANDBOX_BROKEN, not a hang', async () => {
    const client = await AgentClient.start(container);
    const stop = setTimeout(() => void container.exec({ cmd: ['kill', '-STOP', String(client.hello.pid)] }), 200);
    const started = performance.now();
    const error = await client
      .request({ argv: ['/tmp/hangmark', '1'], outputCapBytes: 10, timeoutMs: 1000 }, 3000)
      .then(() => undefined)
      .catch((e: unknown) => e as Error & { code?: string });
    clearTimeout(stop);
    expect(error?.code).toBe('SANDBOX_BROKEN');
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(client.alive).toBe(false);
    expect((await processes()).filter((p) => p.includes('hangmark 1'))).toEqual([]);
  });

  it('the main session’s close leaves nothing running', async () => {
    await session.close();
    expect((await processes()).filter((p) => p.includes('--serve') || p.includes('hangmark'))).toEqual([]);
    expect(await runningExecs()).toEqual([]);
    // A later run starts a fresh agent.
    const r = await session.run({ cmd: ['echo', 'again'], mode: UNENFORCED, trace: false });
    expect(r.exec.stdout).toBe('again\n');
    await session.close();
    expect(await runningExecs()).toEqual([]);
  });

  it('--stop-serve stops an agent by pid', async () => {
    const client = await AgentClient.start(container);
    expect(client.alive).toBe(true);
    const stop = await container.exec({ cmd: [LAUNCHER_PATH, '--stop-serve', String(client.hello.pid)] });
    expect(stop.exitCode).toBe(0);
    await expect(client.request({ argv: ['true'], outputCapBytes: 10 }, 5000)).rejects.toThrow(/agent exited|cannot reach/);
    expect(client.alive).toBe(false);
    await client.close();
    expect(await runningExecs()).toEqual([]);
  });

  it('refuses to start without the harness mount, naming the launcher', async () => {
    const engine = await connectDocker();
    await using plain = await engine.startContainer({ image: BASE_IMAGE_REF, labels: { 'authbench.run': `sandbox-agent-test-${process.pid}` } });
    const s = new SandboxSession(plain, '/');
    await expect(s.run({ cmd: ['true'], mode: UNENFORCED })).rejects.toThrow(/agent did not start/);
  });
});
