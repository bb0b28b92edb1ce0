/**
 * The in-container primitives of the storage guard, against the real kernel and the real launcher:
 * fallocate refused to every command (glibc's posix_fallocate falls back to writing), the
 * file-size limit (`fileSizeMax`, ab-launch --fsize-max) on the agent's commands and not on the
 * harness's own, and the host's cut (`SandboxSession.cut`, ab-launch --cut-serve), which stops
 * everything of the agent's: a running command (as on its timeout, traced to the end), kept
 * background commands and the persistent shell. A SIGUSR1 from below the agent cuts nothing.
 * All of it twice: traced by strace in the container, and by eBPF from the host (skipped, with
 * the probe's reason, where eBPF cannot run).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it as baseIt } from 'vitest';
import { BASE_IMAGE_REF, connectDocker, LABELS, type Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import type { HubTrace } from '../../sandbox/ebpf/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import { SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';
import { StorageGuard } from '../../taskenv/index.ts';
import { harnessContainer } from './harness.ts';
import { hostTraceFor, stopHub, TRACERS } from './host-tracers.ts';

const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};
/** Shell tools and python, /app/data.txt and /dev/zero readable, /app/out readable and writable. */
const POLICY: Policy = { read: ['/app/data.txt', '/usr/**', '/etc/**', '/dev/zero', '/app/out/**'], write: ['/app/out/**'], execute: ['/usr/bin/**', '/bin/**'] };
const ENFORCED: RunOptions['mode'] = { kind: 'enforce', policy: POLICY, implicit: RUNTIME };
const UNENFORCED: RunOptions['mode'] = { kind: 'unenforced' };
const sh = (script: string): string[] => ['bash', '-c', script];
const MiB = 1024 * 1024;
/** A command the cut must end: long enough that only the cut can. */
const LONG_MS = 600_000;

const engine = await connectDocker();

afterAll(stopHub);

describe.each(TRACERS)('the storage guard, traced by %s%s', (name, skip) => {
  const it = skip === '' ? baseIt : baseIt.skip;

  let container: Container | undefined;
  let hostTrace: HubTrace | undefined;
  /** Every command under a 1 MiB file-size limit. */
  let limited: SandboxSession;
  /** No limit: the cut's. */
  let plain: SandboxSession;

  const box = (): Container => {
    if (container === undefined) throw new Error('no container');
    return container;
  };
  const inBox = async (script: string): Promise<string> => {
    const r = await box().exec({ cmd: ['sh', '-c', script] });
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  /** Command lines of the container's live processes. */
  const processes = async (): Promise<string[]> =>
    (await inBox('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done')).split('\n').filter((l) => l.trim() !== '');
  /** Wait (bounded) until `path` exists in the container; false when it never did. */
  const appeared = async (path: string): Promise<boolean> => {
    for (let i = 0; i < 300; i++) {
      if ((await box().exec({ cmd: ['test', '-e', path] })).exitCode === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  };

  beforeAll(async () => {
    if (skip !== '') return;
    container = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/app', run: `storage-guard-test-${name}-${process.pid}`, pidsLimit: 512 });
    await inBox('mkdir -p /app/out && echo public > /app/data.txt');
    hostTrace = await hostTraceFor(engine, name, container);
    const traced = hostTrace === undefined ? {} : { hostTrace };
    limited = new SandboxSession(container, '/app', { ...traced, fileSizeMax: MiB });
    plain = new SandboxSession(container, '/app', traced);
  }, 120_000);

  afterAll(async () => {
    await limited?.close();
    await plain?.close();
    await hostTrace?.close();
    await container?.remove();
  });

  it.each([
    ['unenforced', UNENFORCED, '/tmp'],
    ['enforced', ENFORCED, '/app/out'],
  ] as const)('refuses fallocate as unsupported (%s), and posix_fallocate still works by writing', async (_mode, mode, dir) => {
    const r = await plain.run({ cmd: sh(`fallocate -l 1G ${dir}/falloc; echo "rc=$?"`), mode, timeoutMs: 60_000 });
    expect(r.launcherError).toBeUndefined();
    expect(r.exec.stdout).toBe('rc=1\n');
    expect(r.exec.stderr).toContain('Operation not supported');
    // Not a policy denial: nothing recorded as one.
    expect(r.seccompDenials).toBe(0);
    // The file was created, but no block was reserved.
    expect(await inBox(`stat -c '%s %b' ${dir}/falloc`)).toBe('0 0\n');

    const py = `import os\nfd = os.open('${dir}/pf', os.O_CREAT | os.O_WRONLY, 0o644)\nos.posix_fallocate(fd, 0, 65536)\nprint(os.fstat(fd).st_size)`;
    const p = await plain.run({ cmd: ['python3', '-c', py], mode, timeoutMs: 60_000 });
    expect([p.exec.exitCode, p.exec.stdout, p.exec.stderr]).toEqual([0, '65536\n', '']);
    expect(Number(await inBox(`stat -c %b ${dir}/pf`))).toBeGreaterThan(0);
  });

  it('limits the size of every file a command writes, which it cannot raise; the harness’s own steps are not limited', async () => {
    const r = await limited.run({ cmd: sh('head -c 2M /dev/zero > /app/out/big; echo "head=$?"; ulimit -H -f unlimited; echo "raise=$?"; ulimit -f'), mode: ENFORCED, timeoutMs: 60_000 });
    expect(r.launcherError).toBeUndefined();
    expect(r.enforcement.level).toBe('full');
    expect(r.launcherReport?.fsize_max).toBe(MiB);
    // SIGXFSZ (128 + 25): the write past the limit ended head; the shell could not raise the hard limit.
    expect(r.exec.stdout).toBe(`head=153\nraise=1\n${MiB / 1024}\n`);
    expect(Number(await inBox('stat -c %s /app/out/big'))).toBe(MiB);

    // Without the limit, the same write is whole (the limit is the session's, not the launcher's default).
    const free = await plain.run({ cmd: sh('head -c 2M /dev/zero > /app/out/big2; echo "head=$?"'), mode: ENFORCED, timeoutMs: 60_000 });
    expect(free.exec.stdout).toBe('head=0\n');
    expect(free.launcherReport).toBeDefined();
    expect(free.launcherReport).not.toHaveProperty('fsize_max');

    // The harness's own work (validators) through the same agent: no limit.
    const harness = await limited.runHarness(['sh', '-c', 'head -c 2M /dev/zero > /tmp/validator-out && stat -c %s /tmp/validator-out']);
    expect([harness.exitCode, harness.stdout]).toEqual([0, `${2 * MiB}\n`]);
  });

  it('limits the persistent shell and what it starts', async () => {
    const r = await limited.runShell({ command: 'head -c 2M /dev/zero > /app/out/shell-big; echo "head=$?"', mode: ENFORCED, timeoutMs: 60_000 });
    expect(r.exec.stdout).toBe('head=153\n');
    expect(r.launcherReport?.fsize_max).toBe(MiB);
    expect(Number(await inBox('stat -c %s /app/out/shell-big'))).toBe(MiB);
    await limited.stopBackground();
  });

  it('cuts a running command as on its timeout, traced to the end, and the next command runs normally', async () => {
    await inBox('rm -f /app/out/cut-mark');
    const running = plain.run({ cmd: sh('echo up > /app/out/cut-mark; while :; do echo x >> /app/out/z; done'), mode: ENFORCED, timeoutMs: LONG_MS });
    expect(await appeared('/app/out/cut-mark')).toBe(true);
    expect(await plain.cut()).toBe(true);
    const r = await running;
    expect(r.cut).toBe(true);
    expect([r.exec.timedOut, r.exec.exitCode]).toEqual([true, null]);
    expect(r.launcherError).toBeUndefined();
    // Its processes are gone, and what it did until the cut is in its events.
    expect((await processes()).filter((p) => p.includes('/app/out/z'))).toEqual([]);
    expect(r.events.some((e) => e.kind === 'file' && e.path === '/app/out/z')).toBe(true);
    expect(r.leftover?.count).toBe(0);

    // The cut was consumed: the next command (and the harness's own step) runs normally.
    const next = await plain.run({ cmd: ['cat', '/app/data.txt'], mode: ENFORCED, timeoutMs: 60_000 });
    expect([next.exec.exitCode, next.exec.stdout, next.exec.timedOut]).toEqual([0, 'public\n', false]);
    expect(next.cut).toBeUndefined();
    const harness = await plain.runHarness(['sh', '-c', 'sleep 0.5; echo validated']);
    expect([harness.exitCode, harness.stdout, harness.timedOut]).toEqual([0, 'validated\n', false]);

    // With nothing running a cut is a no-op that is still acknowledged, and it leaves nothing pending.
    expect(await plain.cut()).toBe(true);
    const after = await plain.run({ cmd: sh('sleep 0.5; echo after'), mode: ENFORCED, timeoutMs: 60_000 });
    expect([after.exec.exitCode, after.exec.stdout, after.cut]).toEqual([0, 'after\n', undefined]);
  });

  it('cuts from the host, starting nothing in the container: no Docker exec to wait for', async () => {
    // The same container, its Docker exec of the cut refused: only the host's signal can cut.
    const noExecCut = new Proxy(box(), {
      get: (target, key) =>
        key === 'exec'
          ? (o: Parameters<Container['exec']>[0]) => (o.cmd.includes('--cut-serve') ? Promise.reject(new Error('no exec for the cut')) : target.exec(o))
          : (Reflect.get(target, key) as unknown),
    });
    const direct = new SandboxSession(noExecCut, '/app', hostTrace === undefined ? {} : { hostTrace });
    try {
      await inBox('rm -f /app/out/host-mark');
      const running = direct.run({ cmd: sh('echo up > /app/out/host-mark; while :; do echo x >> /app/out/h; done'), mode: ENFORCED, timeoutMs: LONG_MS });
      expect(await appeared('/app/out/host-mark')).toBe(true);
      expect(await direct.cut()).toBe(true);
      const r = await running;
      expect([r.cut, r.exec.timedOut, r.exec.exitCode]).toEqual([true, true, null]);
      expect((await processes()).filter((p) => p.includes('/app/out/h;'))).toEqual([]);
      const next = await direct.run({ cmd: ['cat', '/app/data.txt'], mode: ENFORCED, timeoutMs: 60_000 });
      expect([next.exec.stdout, next.cut]).toEqual(['public\n', undefined]);
    } finally {
      await direct.close();
    }
  });

  it('cuts through ab-launch --cut-serve (a Docker exec) where the host cannot signal the agent', async () => {
    // The same container seen through an engine whose processes this host cannot reach (a remote one).
    const remote = new Proxy(box(), { get: (target, key) => (key === 'signalFromHost' ? undefined : (Reflect.get(target, key) as unknown)) });
    const viaExec = new SandboxSession(remote, '/app', hostTrace === undefined ? {} : { hostTrace });
    try {
      await inBox('rm -f /app/out/exec-mark');
      const running = viaExec.run({ cmd: sh('echo up > /app/out/exec-mark; while :; do echo x >> /app/out/e; done'), mode: ENFORCED, timeoutMs: LONG_MS });
      expect(await appeared('/app/out/exec-mark')).toBe(true);
      expect(await viaExec.cut()).toBe(true);
      const r = await running;
      expect([r.cut, r.exec.timedOut]).toEqual([true, true]);
      const next = await viaExec.run({ cmd: ['cat', '/app/data.txt'], mode: ENFORCED, timeoutMs: 60_000 });
      expect([next.exec.stdout, next.cut]).toEqual(['public\n', undefined]);
    } finally {
      await viaExec.close();
    }
  });

  it('ignores a SIGUSR1 from below the agent: refused to a sandboxed command, ignored from the harness’s own', async () => {
    const [agent] = await plain.harnessPids();
    expect(agent).toBeGreaterThan(1);
    // Landlock's signal scope refuses it to a command, enforced or not.
    for (const mode of [ENFORCED, UNENFORCED]) {
      const r = await plain.run({ cmd: sh(`kill -USR1 ${agent}; echo "kill=$?"; sleep 0.5; echo done`), mode, timeoutMs: 60_000 });
      expect([r.exec.exitCode, r.exec.stdout, r.exec.timedOut, r.cut]).toEqual([0, 'kill=1\ndone\n', false, undefined]);
    }
    // A process below the agent outside any sandbox (a harness step) does signal it: the agent ignores it.
    const harness = await plain.runHarness(['sh', '-c', `kill -USR1 ${agent} && echo sent; sleep 1; echo done`]);
    expect([harness.exitCode, harness.stdout, harness.timedOut]).toEqual([0, 'sent\ndone\n', false]);
    const next = await plain.run({ cmd: sh('sleep 0.5; echo next'), mode: ENFORCED, timeoutMs: 60_000 });
    expect([next.exec.exitCode, next.exec.stdout, next.cut]).toEqual([0, 'next\n', undefined]);
  });

  it('cuts a kept background command between commands, and the stop still answers for it', async () => {
    const r = await plain.run({
      cmd: sh("(setsid bash -c 'echo up > /app/out/bg-up; exec -a cutmark-bg sleep 300' >/dev/null 2>&1 &); exit 0"),
      mode: ENFORCED,
      timeoutMs: 60_000,
      keepBackground: true,
    });
    expect(r.background?.job).toBeGreaterThan(0);
    expect(await appeared('/app/out/bg-up')).toBe(true);
    expect((await processes()).some((p) => p.includes('cutmark-bg'))).toBe(true);
    expect(await plain.cut()).toBe(true);
    expect((await processes()).filter((p) => p.includes('cutmark-bg'))).toEqual([]);

    const stop = await plain.stopBackground();
    expect(stop.leftover.count).toBe(0);
    const mine = stop.commands.find((c) => c.job === r.background?.job);
    expect(mine).toBeDefined();
    // What it was running when the cut stopped it.
    expect(mine?.stopped.count).toBeGreaterThanOrEqual(1);
    expect(mine?.stopped.info).toContain('sleep');
    expect(plain.backgroundCount).toBe(0);
  });

  it('cuts the persistent shell, mid-call and between calls; the next call starts a new one and says why', async () => {
    const first = await plain.runShell({ command: 'cd /app/out && echo ready', mode: ENFORCED, timeoutMs: 60_000 });
    expect(first.exec.stdout).toBe('ready\n');

    await inBox('rm -f /app/out/shell-mark');
    const running = plain.runShell({ command: 'echo up > /app/out/shell-mark; while :; do echo x >> /app/out/sz; done', mode: ENFORCED, timeoutMs: LONG_MS });
    expect(await appeared('/app/out/shell-mark')).toBe(true);
    expect(await plain.cut()).toBe(true);
    const cutCall = await running;
    expect(cutCall.cut).toBe(true);
    expect(cutCall.exec.timedOut).toBe(true);
    expect(cutCall.shell.ended).toMatch(/cut/);
    expect(cutCall.events.some((e) => e.kind === 'file' && e.path === '/app/out/sz')).toBe(true);
    expect((await processes()).filter((p) => p.includes('/app/out/sz'))).toEqual([]);

    // A new shell; cut between calls: the next call runs in a fresh one, which says the cut ended the last.
    const again = await plain.runShell({ command: 'echo again', mode: ENFORCED, timeoutMs: 60_000 });
    expect([again.exec.stdout, again.shell.started, again.cut]).toEqual(['again\n', true, undefined]);
    expect(await plain.cut()).toBe(true);
    const fresh = await plain.runShell({ command: 'echo fresh', mode: ENFORCED, timeoutMs: 60_000 });
    expect([fresh.exec.stdout, fresh.shell.started, fresh.cut]).toEqual(['fresh\n', true, undefined]);
    expect(fresh.shell.restarted).toMatch(/cut/);
    await plain.stopBackground();
  });

  it('says false, without throwing, for a session with no agent or one that has ended', async () => {
    const unstarted = new SandboxSession(box(), '/app');
    expect(await unstarted.cut()).toBe(false);
    const ended = new SandboxSession(box(), '/app');
    try {
      await ended.start();
      const [agent] = await ended.harnessPids();
      // Until its parent reaps it, a killed agent is a zombie: there, but nothing to cut.
      await inBox(`kill -KILL ${agent}; while [ -e /proc/${agent} ] && ! grep -qE '^State:\\s+[ZX]' /proc/${agent}/status 2>/dev/null; do sleep 0.02; done`);
      expect(await ended.cut()).toBe(false);
    } finally {
      await ended.close();
    }
    const closed = new SandboxSession(box(), '/app');
    await closed.start();
    await closed.close();
    expect(await closed.cut()).toBe(false);
  });
});

describe("a signal from the host (Container.signalFromHost, the cut's fast path)", () => {
  baseIt('reaches a live process by its pid in the container, and refuses an exited, unreaped one and an unknown pid', async () => {
    const box = await harnessContainer(engine, { image: BASE_IMAGE_REF, workdir: '/', run: `signal-from-host-test-${process.pid}` });
    try {
      const inBox = async (script: string): Promise<string> => {
        const r = await box.exec({ cmd: ['sh', '-c', script] });
        expect(r.exitCode, r.stderr).toBe(0);
        return r.stdout.trim();
      };
      // A parent that never reaps: its child stays a zombie while it sleeps.
      await inBox("setsid sh -c 'sleep 0 & exec sleep 60' > /dev/null 2>&1 < /dev/null &");
      const find = async (): Promise<{ parent: number; zombie: number }> => {
        for (let i = 0; i < 100; i++) {
          const out = await inBox('for s in /proc/[0-9]*/status; do grep -qE "^State:\\s+Z" $s 2>/dev/null && sed -n "s/^\\(Pid\\|PPid\\):\\s*//p" $s | tr "\\n" " "; done; true');
          const [zombie, parent] = out.split(/\s+/).map(Number);
          if (zombie !== undefined && parent !== undefined && zombie > 0) return { parent, zombie };
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error('no zombie appeared');
      };
      const { parent, zombie } = await find();
      expect(await box.signalFromHost?.(zombie, 'SIGTERM')).toBe(false);
      expect(await box.signalFromHost?.(999_999, 'SIGTERM')).toBe(false);
      expect(await box.signalFromHost?.(parent, 'SIGTERM')).toBe(true);
      // The parent took it (sleep dies of SIGTERM), and its zombie went with it.
      for (let i = 0; i < 100 && (await box.exec({ cmd: ['test', '-e', `/proc/${parent}`] })).exitCode === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await box.exec({ cmd: ['test', '-e', `/proc/${parent}`] })).exitCode).not.toBe(0);
    } finally {
      await box.remove();
    }
  }, 60_000);
});

describe("an image's VOLUME (an anonymous volume the layer's measures do not see)", () => {
  baseIt('counts against the storage limit with the layer', async () => {
    const context = await mkdtemp(join(tmpdir(), 'ab-volume-image-'));
    const labels = { [LABELS.run]: `storage-volume-test-${process.pid}` };
    await writeFile(join(context, 'Dockerfile'), `FROM ${BASE_IMAGE_REF}\nVOLUME /data\n`);
    const image = await engine.buildImage({ repository: 'authbench/storage-volume-test', kind: 'task-image', contextDir: context, labels });
    const box = await engine.startContainer({ image: image.tag, labels });
    try {
      const volumes = await box.writableVolumes?.();
      expect(volumes?.map((v) => v.target)).toEqual(['/data']);
      expect(volumes?.[0]?.dir).toMatch(/\/_data$/);
      let cut = 0;
      const guard = await StorageGuard.start(box, { bytes: 4 * MiB, files: 1000 }, { intervalMs: 60_000, onExceeded: () => Promise.resolve(cut++) });
      expect(guard.method).toBe('layer-walk');
      expect(await guard.check()).toBeUndefined();
      expect((await box.exec({ cmd: ['sh', '-c', 'head -c 8M /dev/zero > /data/fill'] })).exitCode).toBe(0);
      expect(await guard.check()).toBeDefined();
      expect(cut).toBe(1);
      const record = await guard.stop();
      expect(record).toMatchObject({ method: 'layer-walk', exceeded: true });
      expect(record.unmeasured).toBeUndefined();
      expect(record.peak_mb).toBeGreaterThanOrEqual(8);
    } finally {
      await box.remove();
      await engine.removeImage(image.tag);
      await rm(context, { recursive: true, force: true });
    }
  }, 120_000);
});
