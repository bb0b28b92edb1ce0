/**
 * (c): what one command costs end to end from the host. The baseline is a
 * bare dockerode exec of `true` (create, start, wait, inspect); against it:
 * authbench's Container.exec, and SandboxSession.run of `true` under the
 * launcher — over the transport the session chose (the in-container agent
 * unless it could not start), without and with strace, and over the
 * one-exec-per-step path for comparison.
 *
 * The policy is read-only (execute `true`, read the loader's libraries), so
 * an untraced command cannot change the filesystem and the compiler's
 * snapshot stays valid: the numbers are the per-command cost, not a
 * re-listing of the container.
 *
 * The bare baseline talks to dockerode directly, which nothing outside docker/
 * otherwise does: measuring the wrapper against the raw client is the point.
 */
import Dockerode from 'dockerode';
import { AuthbenchError, ENV, readEnv } from '../../core/index.ts';
import { parseDockerHost, type Container } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import { SandboxSession, type RunOptions, type TransportKind } from '../../sandbox/run/index.ts';
import { summarize, type Summary } from './stats.ts';
import type { Rounds } from './plan.ts';
import { SCRATCH_DIR } from './workloads.ts';

export interface RoundTrips {
  rawExec: Summary;
  containerExec: Summary;
  /** SandboxSession.run of `true` under the launcher, no strace, over the chosen transport. */
  session: Summary;
  /** The same with strace. */
  sessionTraced: Summary;
  /** The same as `session` over the exec path (transport: 'exec'). */
  sessionExecPath: Summary;
  /** The host-side policy compile inside each SandboxSession.run (filesystem listing cached). */
  compile: Summary;
  transport: TransportKind;
  /** Why the session is not on the agent, when it is not. */
  fallbackReason?: string;
  /** Docker API calls one SandboxSession.run makes, per transport. */
  dockerCalls: { chosen: number; execPath: number };
  /** The session's first command also starts the agent, probes the Landlock ABI and lists the filesystem. */
  sessionFirstMs: number;
}

/** What `true` needs on Debian and nothing that could change the tree. */
const TRUE_POLICY: Policy = { read: [], write: [], execute: ['/usr/bin/true'] };
const TRUE_RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache'],
  write: [],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};

/** Wraps a container, counting the operations that each cost a Docker API round trip (an attach counts once). */
export function countingContainer(inner: Container): { container: Container; count: () => number; reset: () => void } {
  let n = 0;
  const tick = <T>(p: Promise<T>): Promise<T> => {
    n += 1;
    return p;
  };
  const attach = inner.attach?.bind(inner);
  const container: Container = {
    get id() {
      return inner.id;
    },
    get image() {
      return inner.image;
    },
    exec: (o) => tick(inner.exec(o)),
    ...(attach === undefined ? {} : { attach: (o: Parameters<typeof attach>[0]) => tick(attach(o)) }),
    copyIn: (h, d) => tick(inner.copyIn(h, d)),
    putFiles: (d, f, m) => tick(inner.putFiles(d, f, m)),
    readFile: (p) => tick(inner.readFile(p)),
    copyOut: (p, h) => tick(inner.copyOut(p, h)),
    remove: () => inner.remove(),
    [Symbol.asyncDispose]: () => inner[Symbol.asyncDispose](),
  };
  return { container, count: () => n, reset: () => (n = 0) };
}

async function rawExecTrue(docker: Dockerode, containerId: string): Promise<number> {
  const started = performance.now();
  const exec = await docker.getContainer(containerId).exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', reject);
    stream.resume();
  });
  const info = await exec.inspect();
  const elapsed = performance.now() - started;
  if (info.ExitCode !== 0) throw new AuthbenchError('INTERNAL', `raw exec of true exited ${String(info.ExitCode)}`);
  return elapsed;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function runTrue(session: SandboxSession, trace: boolean): () => Promise<void> {
  const options: RunOptions = { cmd: ['true'], mode: { kind: 'enforce', policy: TRUE_POLICY, implicit: TRUE_RUNTIME }, trace };
  return async () => {
    const r = await session.run(options);
    if (r.launcherError !== undefined || r.exec.exitCode !== 0) {
      throw new AuthbenchError('INTERNAL', `SandboxSession.run of true failed: ${r.launcherError ?? `exit ${String(r.exec.exitCode)}`}`, {
        details: r.exec.stderr.trim().split('\n').slice(-5),
      });
    }
  };
}

/** Every path, interleaved round by round so load changes hit them alike. */
export async function measureRoundTrips(container: Container, rounds: Rounds): Promise<RoundTrips> {
  const docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  const counted = countingContainer(container);
  const chosen = new SandboxSession(counted.container, SCRATCH_DIR);
  const execPath = new SandboxSession(counted.container, SCRATCH_DIR, { transport: 'exec' });
  try {
    const sessionFirstMs = await timed(runTrue(chosen, false));
    await runTrue(execPath, false)();
    const info = await chosen.transportInfo();
    const callsPerRun = async (session: SandboxSession): Promise<number> => {
      counted.reset();
      await runTrue(session, false)();
      return counted.count();
    };
    const dockerCalls = { chosen: await callsPerRun(chosen), execPath: await callsPerRun(execPath) };

    const paths = {
      raw: (): Promise<number> => rawExecTrue(docker, container.id),
      exec: (): Promise<number> =>
        timed(async () => {
          const r = await container.exec({ cmd: ['true'] });
          if (r.exitCode !== 0) throw new AuthbenchError('INTERNAL', `Container.exec of true exited ${String(r.exitCode)}`);
        }),
      session: (): Promise<number> => timed(runTrue(chosen, false)),
      traced: (): Promise<number> => timed(runTrue(chosen, true)),
      execPath: (): Promise<number> => timed(runTrue(execPath, false)),
      compile: (): Promise<number> => timed(async () => void (await chosen.compile(TRUE_POLICY, TRUE_RUNTIME))),
    };
    const names = Object.keys(paths) as (keyof typeof paths)[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<keyof typeof paths, number[]>;
    for (let round = 0; round < rounds.warmup + rounds.reps; round++) {
      // Rotate the order so no path always follows the same one.
      const k = round % names.length;
      for (const name of [...names.slice(k), ...names.slice(0, k)]) {
        const ms = await paths[name]();
        if (round >= rounds.warmup) samples[name].push(ms);
      }
    }
    return {
      rawExec: summarize(samples.raw),
      containerExec: summarize(samples.exec),
      session: summarize(samples.session),
      sessionTraced: summarize(samples.traced),
      sessionExecPath: summarize(samples.execPath),
      compile: summarize(samples.compile),
      transport: info.kind,
      ...(info.fallbackReason === undefined ? {} : { fallbackReason: info.fallbackReason }),
      dockerCalls,
      sessionFirstMs,
    };
  } finally {
    await chosen.close();
    await execPath.close();
  }
}
