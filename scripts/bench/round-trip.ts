/**
 * (c): what one command costs end to end from the host — a bare dockerode
 * exec (the floor: create, start, wait, inspect), authbench's Container.exec,
 * and SandboxSession.run with enforcement and tracing (compile, rules upload,
 * exec, report and trace read back).
 *
 * The bare baseline talks to dockerode directly, which nothing outside docker/
 * otherwise does: measuring the wrapper against the raw client is the point.
 */
import Dockerode from 'dockerode';
import { AuthbenchError, ENV, readEnv } from '../../core/index.ts';
import { parseDockerHost, type Container } from '../../docker/index.ts';
import { defaultImplicit } from '../../gold/index.ts';
import { allowAllPolicy } from '../../sandbox/policy/index.ts';
import { SandboxSession } from '../../sandbox/run/index.ts';
import { summarize, type Summary } from './stats.ts';
import type { Rounds } from './plan.ts';
import { SCRATCH_DIR } from './workloads.ts';

export interface RoundTrips {
  rawExec: Summary;
  containerExec: Summary;
  session: Summary;
  /** The host-side policy compile inside each SandboxSession.run (filesystem listing cached). */
  compile: Summary;
  /** Container operations (exec, putFiles, readFile, …) one SandboxSession.run makes. */
  sessionOps: number;
  /** The session's first command also probes the Landlock ABI and lists the filesystem for the compiler. */
  sessionFirstMs: number;
}

/** Wraps a container, counting the operations that each cost a Docker API round trip. */
export function countingContainer(inner: Container): { container: Container; count: () => number; reset: () => void } {
  let n = 0;
  const tick = <T>(p: Promise<T>): Promise<T> => {
    n += 1;
    return p;
  };
  const container: Container = {
    get id() {
      return inner.id;
    },
    get image() {
      return inner.image;
    },
    exec: (o) => tick(inner.exec(o)),
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

/** The three paths, interleaved round by round so load changes hit them alike. */
export async function measureRoundTrips(container: Container, rounds: Rounds): Promise<RoundTrips> {
  const docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  const counted = countingContainer(container);
  const session = new SandboxSession(counted.container, SCRATCH_DIR);
  const mode = { kind: 'enforce', policy: allowAllPolicy(), implicit: defaultImplicit() } as const;
  const runSession = async (): Promise<void> => {
    const r = await session.run({ cmd: ['true'], mode, trace: true });
    if (r.launcherError !== undefined || r.exec.exitCode !== 0) {
      throw new AuthbenchError('INTERNAL', `SandboxSession.run of true failed: ${r.launcherError ?? `exit ${String(r.exec.exitCode)}`}`, {
        details: r.exec.stderr.trim().split('\n').slice(-5),
      });
    }
  };
  const runExec = async (): Promise<void> => {
    const r = await container.exec({ cmd: ['true'] });
    if (r.exitCode !== 0) throw new AuthbenchError('INTERNAL', `Container.exec of true exited ${String(r.exitCode)}`);
  };

  const sessionFirstMs = await timed(runSession);
  counted.reset();
  await runSession();
  const sessionOps = counted.count();

  const paths = {
    raw: (): Promise<number> => rawExecTrue(docker, container.id),
    exec: (): Promise<number> => timed(runExec),
    session: (): Promise<number> => timed(runSession),
    compile: (): Promise<number> => timed(async () => void (await session.compile(mode.policy, mode.implicit))),
  };
  const names = Object.keys(paths) as (keyof typeof paths)[];
  const samples: Record<keyof typeof paths, number[]> = { raw: [], exec: [], session: [], compile: [] };
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
    compile: summarize(samples.compile),
    sessionOps,
    sessionFirstMs,
  };
}
