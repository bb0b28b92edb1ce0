/**
 * (c): what one command costs end to end from the host. The baseline is a
 * bare dockerode exec of `true` (create, start, wait, inspect); against it:
 * authbench's Container.exec, and SandboxSession.run of `true` under the
 * launcher, without and with strace — one request to the session's
 * in-container agent, over the attached exec it started once. Beside them,
 * the parts a command can include: the host-side policy compile, and the
 * agent's own filesystem listing that the compiler's snapshot comes from.
 *
 * The snapshot is refreshed and compiled against (untimed) before every
 * timed command: an untraced command always invalidates it (the session
 * cannot see what it changed), so the command after one pays a listing and
 * then a first compile that indexes the new listing. Both are measured on
 * their own rows rather than smeared into whichever path came next. A traced
 * `true` patches the snapshot from its trace and keeps it valid, as a traced
 * command in a rollout does.
 *
 * The bare baseline talks to dockerode directly, which nothing outside docker/
 * otherwise does: measuring the wrapper against the raw client is the point.
 */
import Dockerode from 'dockerode';
import { AuthbenchError, ENV, readEnv } from '../../core/index.ts';
import { parseDockerHost, type Container } from '../../docker/index.ts';
import { compilePolicy, type PatternSet } from '../../sandbox/compile/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import { applyFileEvents, SandboxSession, type RunOptions } from '../../sandbox/run/index.ts';
import { TraceEventSchema, type TraceEvent } from '../../sandbox/trace/index.ts';
import { summarize, type Summary } from './stats.ts';
import type { Rounds } from './plan.ts';
import { SCRATCH_DIR } from './workloads.ts';

export interface RoundTrips {
  rawExec: Summary;
  containerExec: Summary;
  /** SandboxSession.run of `true` under the launcher, no strace (snapshot fresh). */
  session: Summary;
  /** The same with strace. */
  sessionTraced: Summary;
  /** The host-side policy compile inside each enforced SandboxSession.run (snapshot current and indexed). */
  compile: Summary;
  /** The agent listing the filesystem for the compiler (`fsSnapshot()` after `invalidateSnapshot()`), parsed. */
  listing: Summary;
  /** The first compile against a new listing: it also indexes the snapshot (views, trusted links). */
  compileAfterListing: Summary;
  /**
   * Host CPU of a command that created one file: patching the snapshot from its trace and the
   * compile against the patched snapshot (what the next enforced command pays), one file more each time.
   */
  patchCompile: Summary;
  /** Entries in that listing. */
  listingEntries: number;
  /** Docker API calls one SandboxSession.run makes, untraced and traced. */
  dockerCalls: { session: number; traced: number };
  /** The session's first (traced) command also starts the agent, probes the Landlock ABI and lists the filesystem. */
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
  const archive = inner.archive?.bind(inner);
  const extractArchive = inner.extractArchive?.bind(inner);
  const state = inner.state?.bind(inner);
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
    ...(archive === undefined ? {} : { archive: (p: string) => tick(archive(p)) }),
    ...(extractArchive === undefined ? {} : { extractArchive: (d: string, t: Uint8Array) => tick(extractArchive(d, t)) }),
    ...(state === undefined ? {} : { state: () => tick(state()) }),
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

/** The trace event of an `open(O_CREAT|O_EXCL)` that made `path`. */
function createdFile(path: string): TraceEvent {
  return TraceEventSchema.parse({ kind: 'file', schema_version: 1, pid: 1, ts: 0, syscall: 'openat', result: 3, denied: false, op: 'create', path, flags: ['O_WRONLY', 'O_CREAT', 'O_EXCL'] });
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
    if (r.launcherError !== undefined || r.spawnError !== undefined || r.exec.exitCode !== 0) {
      throw new AuthbenchError('INTERNAL', `SandboxSession.run of true failed: ${r.launcherError ?? r.spawnError ?? `exit ${String(r.exec.exitCode)}`}`, {
        details: r.exec.stderr.trim().split('\n').slice(-5),
      });
    }
    if (r.enforcement.level !== 'full' || !r.enforcement.seccomp) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `SandboxSession.run of true ran under ${r.enforcement.level} enforcement; its cost would be meaningless`);
    }
    if (trace && r.events.length === 0) throw new AuthbenchError('INTERNAL', 'SandboxSession.run of true was traced but returned no events');
  };
}

export interface RoundTripOptions {
  /** The session's SessionOptions.pinCpu (the agent pins the tracer and command there). */
  pinCpu?: number;
}

/** Every path, interleaved round by round so load changes hit them alike. */
export async function measureRoundTrips(container: Container, rounds: Rounds, options: RoundTripOptions = {}): Promise<RoundTrips> {
  const docker = new Dockerode(parseDockerHost(readEnv(ENV.DOCKER_HOST)).options);
  const counted = countingContainer(container);
  const session = new SandboxSession(counted.container, SCRATCH_DIR, options.pinCpu === undefined ? {} : { pinCpu: options.pinCpu });
  try {
    const sessionFirstMs = await timed(runTrue(session, true));
    const callsPerRun = async (trace: boolean): Promise<number> => {
      await session.compile(TRUE_POLICY, TRUE_RUNTIME);
      counted.reset();
      await runTrue(session, trace)();
      return counted.count();
    };
    const dockerCalls = { session: await callsPerRun(false), traced: await callsPerRun(true) };
    let listingEntries = 0;

    // Untimed: the snapshot the next timed command compiles against is current and indexed (see the header).
    const fresh = async (): Promise<void> => void (await session.compile(TRUE_POLICY, TRUE_RUNTIME));
    const paths = {
      raw: (): Promise<number> => rawExecTrue(docker, container.id),
      exec: (): Promise<number> =>
        timed(async () => {
          const r = await container.exec({ cmd: ['true'] });
          if (r.exitCode !== 0) throw new AuthbenchError('INTERNAL', `Container.exec of true exited ${String(r.exitCode)}`);
        }),
      session: async (): Promise<number> => (await fresh(), timed(runTrue(session, false))),
      traced: async (): Promise<number> => (await fresh(), timed(runTrue(session, true))),
      compile: async (): Promise<number> => (await fresh(), timed(async () => void (await session.compile(TRUE_POLICY, TRUE_RUNTIME)))),
      listing: (): Promise<number> => {
        session.invalidateSnapshot();
        return timed(async () => {
          listingEntries = (await session.fsSnapshot()).entries.length;
        });
      },
      compileAfterListing: async (): Promise<number> => {
        session.invalidateSnapshot();
        await session.fsSnapshot();
        return timed(async () => void (await session.compile(TRUE_POLICY, TRUE_RUNTIME)));
      },
    };
    // A chain of snapshots as a session makes them: each patched from the last, then compiled.
    const abi = await session.landlockAbi();
    const baseline = await session.baselineSnapshot();
    let patched = baseline;
    let created = 0;
    compilePolicy(TRUE_POLICY, patched, { implicit: TRUE_RUNTIME, abi, baseline });
    const patchCompile = (): Promise<number> => {
      created += 1;
      const started = performance.now();
      patched = applyFileEvents(patched, [createdFile(`${SCRATCH_DIR}/bench-created-${created}`)]);
      compilePolicy(TRUE_POLICY, patched, { implicit: TRUE_RUNTIME, abi, baseline });
      return Promise.resolve(performance.now() - started);
    };
    const names = [...(Object.keys(paths) as (keyof typeof paths)[]), 'patchCompile' as const];
    const run = { ...paths, patchCompile };
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<(typeof names)[number], number[]>;
    for (let round = 0; round < rounds.warmup + rounds.reps; round++) {
      // Rotate the order so no path always follows the same one.
      const k = round % names.length;
      for (const name of [...names.slice(k), ...names.slice(0, k)]) {
        const ms = await run[name]();
        if (round >= rounds.warmup) samples[name].push(ms);
      }
    }
    return {
      rawExec: summarize(samples.raw),
      containerExec: summarize(samples.exec),
      session: summarize(samples.session),
      sessionTraced: summarize(samples.traced),
      compile: summarize(samples.compile),
      listing: summarize(samples.listing),
      compileAfterListing: summarize(samples.compileAfterListing),
      patchCompile: summarize(samples.patchCompile),
      listingEntries,
      dockerCalls,
      sessionFirstMs,
    };
  } finally {
    await session.close();
  }
}
