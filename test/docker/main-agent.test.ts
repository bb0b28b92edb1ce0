/**
 * The first session's agent below the container's main process (`ab-launch --idle
 * --serve-stdin`, attached before the start: what every task container of a session gets), against
 * the real daemon: reached with no Docker exec at all, gone when the session closes while the
 * container idles on for the validators, and replaced by an exec'd agent after it ends — closed,
 * or killed mid-command. A container nobody claims goes as any other.
 */
import Dockerode from 'dockerode';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, parseDockerHost, type Container, type Engine } from '../../docker/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import { SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';
import { harnessContainer } from './harness.ts';

const UNENFORCED: RunOptions['mode'] = { kind: 'unenforced' };
const READ_APP: RunOptions['mode'] = {
  kind: 'enforce',
  policy: { read: ['/app/**'], write: [], execute: ['/usr/bin/cat'] },
  implicit: { read: ['/usr/lib/**', '/etc/ld.so.cache'], write: [], execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'] },
};

let docker: Dockerode;
let engine: Engine;
const made: Container[] = [];

beforeAll(async () => {
  docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  engine = await connectDocker();
});

afterEach(async () => {
  for (const c of made.splice(0)) await c.remove();
});

async function mainAgentContainer(): Promise<Container> {
  const c = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', run: `main-agent-test-${process.pid}`, mainAgent: true });
  made.push(c);
  return c;
}

/** Every exec the daemon made in the container, running or not. */
async function execIds(c: Container): Promise<string[]> {
  return (await docker.getContainer(c.id).inspect()).ExecIDs ?? [];
}

/** `pid ppid args…` of every process, read through a plain exec (call it after counting execs). */
async function processes(c: Container): Promise<{ pid: number; ppid: number; args: string }[]> {
  const r = await c.exec({ cmd: ['sh', '-c', 'for p in /proc/[0-9]*; do printf "%s %s " ${p#/proc/} "$(sed -n "s/^PPid:\\t//p" $p/status)"; tr "\\0" " " < $p/cmdline; echo; done'] });
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [pid, ppid, ...args] = l.trim().split(' ');
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ').trim() };
    })
    .filter((p) => !p.args.startsWith('sh -c for p in') && !p.args.startsWith('sed ') && !p.args.startsWith('tr '));
}

describe('the main process’s agent', () => {
  it('is the first session’s: a child of the idle main process, reached and enforcing with no exec', async () => {
    const c = await mainAgentContainer();
    const before = await execIds(c);
    const session = new SandboxSession(c, '/');
    const r = await session.run({ cmd: ['cat', '/etc/hostname'], mode: READ_APP });
    expect(r.enforcement.level).toBe('full');
    expect(r.exec.exitCode).not.toBe(0); // /etc is outside the policy: refused by the kernel
    expect(r.denials.length).toBeGreaterThan(0);
    const ok = await session.run({ cmd: ['echo', 'fine'], mode: UNENFORCED });
    expect(ok.exec.stdout).toBe('fine\n');
    expect(await execIds(c)).toEqual(before);
    const [agentPid, ...harness] = await session.harnessPids();
    const procs = await processes(c);
    const idle = procs.find((p) => p.args === `${LAUNCHER_PATH} --idle --serve-stdin`);
    expect(idle?.ppid).toBe(1);
    expect(procs.find((p) => p.pid === agentPid)).toMatchObject({ ppid: idle?.pid, args: `${LAUNCHER_PATH} --serve --wake` });
    // What was there before the agent is the harness's: pid 1 and the idle process.
    expect(harness).toEqual(expect.arrayContaining([1, idle?.pid]));
    await session.close();
  });

  it('closing the session ends it, told by the main process: no kill exec, the container idles on, and the next agent is an exec', async () => {
    const c = await mainAgentContainer();
    const session = new SandboxSession(c, '/');
    await session.start();
    const before = await execIds(c);
    await session.close();
    // The close was answered by the main process's line: no `--stop-serve` exec was needed.
    expect(await execIds(c)).toEqual(before);
    expect((await c.state?.())?.status).toBe('running');
    expect((await processes(c)).map((p) => p.args).sort()).toEqual([`${LAUNCHER_PATH} --idle --serve-stdin`, `/sbin/docker-init -- ${LAUNCHER_PATH} --idle --serve-stdin`].sort());
    const counted = (await execIds(c)).length;
    const again = await session.run({ cmd: ['echo', 'again'], mode: UNENFORCED });
    expect(again.exec.stdout).toBe('again\n');
    expect((await execIds(c)).length).toBe(counted + 1);
    await session.close();
  });

  it('killed mid-command: the command fails as SANDBOX_BROKEN, the container lives, the next command runs in an exec’d agent', async () => {
    const c = await mainAgentContainer();
    const session = new SandboxSession(c, '/');
    const [agentPid] = await session.harnessPids();
    const failed = session.run({ cmd: ['sleep', '30'], mode: UNENFORCED, trace: false, timeoutMs: 60_000 }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    await new Promise((r) => setTimeout(r, 300));
    const kill = await c.exec({ cmd: ['kill', '-9', String(agentPid)] });
    expect(kill.exitCode).toBe(0);
    const error = await failed;
    expect(error?.code).toBe('SANDBOX_BROKEN');
    expect(error?.message).toMatch(/agent exited \(exit 137\)/);
    expect((await c.state?.())?.status).toBe('running');
    const next = await session.run({ cmd: ['echo', 'next'], mode: UNENFORCED });
    expect(next.exec.stdout).toBe('next\n');
    const [replacement] = await session.harnessPids();
    expect(replacement).not.toBe(agentPid);
    await session.close();
  });

  it('a container nobody claims keeps its agent waiting, silent, and is removed as any other', async () => {
    const c = await mainAgentContainer();
    const procs = await processes(c);
    expect(procs.filter((p) => p.args.includes('--serve --wake'))).toHaveLength(1);
    await c.remove();
    expect((await c.state?.())?.status).toBe('gone');
  });
});
