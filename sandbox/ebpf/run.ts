/**
 * Trace one container with eBPF from the host: find its cgroup, start the
 * tracer filtered on it, wait until every probe is attached, and on stop
 * return the parsed events (parse.ts). Two backends print the same records:
 * `native` (default), ab-ebpf (native.ts: libbpf, a ring buffer drained on a
 * timer), and `bpftrace`, the program program.ts builds.
 *
 * Attachment: bpftrace prints `Attaching N probes...` BEFORE it attaches, so
 * that line proves nothing. Both backends start draining their buffers only
 * after attaching every probe, so a record printed by a probe of ours proves
 * all are in place: this process opens a path only it knows (the readiness
 * probe matches its pid and that path) until the Y record comes back. A
 * command started after start() resolved is traced from its first syscall.
 * Stopping does the same once more, so every record written before stop()
 * was called has been drained before the tracer is interrupted.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import type { Engine } from '../../docker/index.ts';
import { ensureEbpfTracer, nativeArgs, NATIVE_STRING_LIMIT, readTracepointFormats } from './native.ts';
import { raiseTracerPriority } from './priority.ts';
import { buildProgram, FIELD_SEP, RECORD_START } from './program.ts';
import { parseEbpf, type EbpfParse } from './parse.ts';
import { STRING_LIMIT } from './syscalls.ts';

export interface EbpfTraceOptions {
  /** Full Docker container id. */
  containerId: string;
  /** Where cgroup v2 is mounted (probe.ts: judgeEbpf's verdict). */
  cgroup2Mount: string;
  /** Which tracer (default native: ab-ebpf). */
  backend?: EbpfBackend;
  /** native: the ab-ebpf binary (ensureEbpfTracer's path); without it, built through `engine`. */
  abEbpf?: string;
  /** native without `abEbpf`: the engine that builds ab-ebpf. */
  engine?: Engine;
  /** The bpftrace binary (default: `bpftrace` on PATH). */
  bpftrace?: string;
  /** How long attaching may take (default 60 s: compiling ~80 probes on a loaded 2-core host takes seconds). */
  attachTimeoutMs?: number;
}

export const EBPF_BACKENDS = ['native', 'bpftrace'] as const;
export type EbpfBackend = (typeof EBPF_BACKENDS)[number];

export interface EbpfTraceResult extends EbpfParse {
  /** The tracer's raw output (records and its own notices). */
  raw: Buffer;
  /** The tracer's stderr (warnings, lost-event counts), for a report. */
  stderr: string;
}

export interface EbpfTrace extends AsyncDisposable {
  readonly cgroupId: bigint;
  /** Stop tracing: drain, interrupt bpftrace, parse. */
  stop(): Promise<EbpfTraceResult>;
}

/** Perf buffer pages per CPU (4 KiB each): `find /usr` emits tens of thousands of records in a second. */
const PERF_RB_PAGES = 4096;
const POLL_MS = 25;
const DRAIN_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 10_000;

/**
 * Where a container's cgroup directory can be under the cgroup2 mount: the
 * cgroupfs driver puts it at `docker/<id>` (also on hybrid v1 hosts, under
 * the unified mount), the systemd driver at `system.slice/docker-<id>.scope`. Pure.
 */
export function cgroupCandidates(cgroup2Mount: string, containerId: string): string[] {
  if (!/^[0-9a-f]{64}$/.test(containerId)) throw new RangeError(`cgroupCandidates: not a full container id: ${containerId}`);
  return [join(cgroup2Mount, 'docker', containerId), join(cgroup2Mount, 'system.slice', `docker-${containerId}.scope`)];
}

/** The cgroup id bpftrace's `cgroup` builtin reports: the inode number of the cgroup's directory in cgroup2. */
export async function containerCgroupId(cgroup2Mount: string, containerId: string): Promise<bigint> {
  return (await containerCgroupDir(cgroup2Mount, containerId)).id;
}

/**
 * The level of a process's pid namespace, from its /proc status's NSpid line (one pid per level,
 * the host's first). Pure.
 */
export function pidLevelOf(status: string): number | undefined {
  const line = /^NSpid:\s*(.*)$/m.exec(status)?.[1];
  const pids = line?.trim().split(/\s+/).filter((p) => /^\d+$/.test(p)) ?? [];
  return pids.length === 0 ? undefined : pids.length - 1;
}

/**
 * A running container's cgroup id and its pid namespace's level (the native tracer prints pids as
 * that namespace numbers them, as strace in the container does). The level is the smallest of its
 * processes' — the container's own; a process in a namespace made below it has a deeper one.
 */
export async function containerCgroup(cgroup2Mount: string, containerId: string): Promise<{ id: bigint; pidLevel: number }> {
  const { id, dir } = await containerCgroupDir(cgroup2Mount, containerId);
  const procs = (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter((p) => /^\d+$/.test(p));
  const levels = await Promise.all(procs.map(async (pid) => pidLevelOf(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))));
  const known = levels.filter((l): l is number => l !== undefined);
  if (known.length === 0) {
    throw new AuthbenchError('TRACER_UNAVAILABLE', `no process of container ${containerId.slice(0, 12)} shows its pid namespace`, { details: [`looked at ${join(dir, 'cgroup.procs')}`] });
  }
  return { id, pidLevel: Math.min(...known) };
}

async function containerCgroupDir(cgroup2Mount: string, containerId: string): Promise<{ id: bigint; dir: string }> {
  const candidates = cgroupCandidates(cgroup2Mount, containerId);
  for (const dir of candidates) {
    const s = await stat(dir, { bigint: true }).catch(() => undefined);
    if (s?.isDirectory() === true) return { id: s.ino, dir };
  }
  throw new AuthbenchError('TRACER_UNAVAILABLE', `no cgroup v2 directory for container ${containerId.slice(0, 12)}`, {
    details: candidates.map((c) => `looked at ${c}`),
    hint: 'is the container running, and does Docker use this kernel (not a VM)?',
  });
}

async function touch(path: string): Promise<void> {
  // The open is the signal (the readiness probe sees it); the path never exists.
  await open(path, 'r').then(
    (h) => h.close(),
    () => undefined,
  );
}

export async function startEbpfTrace(options: EbpfTraceOptions): Promise<EbpfTrace> {
  const cgroup = await containerCgroup(options.cgroup2Mount, options.containerId);
  const cgroupId = cgroup.id;
  const nonce = randomBytes(12).toString('hex');
  const readyPath = join(tmpdir(), `authbench-ebpf-ready-${nonce}`);
  const backend = options.backend ?? 'native';
  const ready = { cgroupId: cgroup, nonce, readyPid: process.pid, readyPath };
  let command: string;
  let args: string[];
  let env: NodeJS.ProcessEnv;
  if (backend === 'native') {
    const abEbpf = options.abEbpf ?? (options.engine === undefined ? undefined : (await ensureEbpfTracer(options.engine)).path);
    if (abEbpf === undefined) throw new RangeError('startEbpfTrace: the native backend needs abEbpf or engine');
    command = abEbpf;
    args = nativeArgs({ ...ready, ...(await readTracepointFormats()) });
    // Nothing of this process's environment: ab-ebpf runs as root and needs none.
    env = {};
  } else {
    command = options.bpftrace ?? 'bpftrace';
    args = ['-e', buildProgram({ ...ready, cgroupId })];
    env = { ...process.env, BPFTRACE_STRLEN: String(STRING_LIMIT), BPFTRACE_PERF_RB_PAGES: String(PERF_RB_PAGES) };
  }
  const stringLimit = backend === 'native' ? NATIVE_STRING_LIMIT : STRING_LIMIT;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // The reader outranks the tracee (priority.ts); refused, records it drops are still counted.
  raiseTracerPriority(child.pid);
  const stdout: Buffer[] = [];
  let stderr = '';
  const readyMarker = Buffer.from(`${RECORD_START}${nonce}${FIELD_SEP}Y`, 'latin1');
  let readySeen = 0;
  let carry = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    // Count markers across chunk boundaries: keep the last bytes of the previous chunk.
    const window = Buffer.concat([carry, chunk]);
    for (let i = window.indexOf(readyMarker); i !== -1; i = window.indexOf(readyMarker, i + 1)) readySeen++;
    carry = window.subarray(Math.max(0, window.length - readyMarker.length + 1));
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) => {
    child.on('close', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
    child.on('error', (error) => {
      stderr += `\n${error.message}`;
      exited = { code: null, signal: null };
      resolve();
    });
  });
  // ab-ebpf closes its output once it has drained and counted what was lost, then detaches its
  // ~90 probes (each tracepoint's detach waits out an RCU grace period: seconds in all); the
  // trace is complete at that point, so stopping waits for the output, not for the exit.
  const outputClosed = Promise.all([new Promise((r) => child.stdout.on('close', r)), new Promise((r) => child.stderr.on('close', r))]);
  const failure = (what: string) =>
    new AuthbenchError('TRACER_UNAVAILABLE', `${backend === 'native' ? 'ab-ebpf' : 'bpftrace'} ${what}`, { details: stderr.trim().split('\n').slice(-15) });

  /** Open the ready path until more than `seen` markers came back. */
  const waitMarker = async (seen: number, timeoutMs: number): Promise<number> => {
    const deadline = Date.now() + timeoutMs;
    while (readySeen <= seen) {
      if (exited !== undefined) throw failure(`exited (${exited.code ?? exited.signal ?? 'spawn failed'}) before it attached`);
      if (Date.now() > deadline) throw failure(`did not attach within ${timeoutMs} ms`);
      await touch(readyPath);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return Date.now();
  };

  const kill = async () => {
    if (exited !== undefined) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
    // Kept until the exit (a tracer stuck detaching is still killed), without holding this process up.
    timer.unref();
    void exit.then(() => clearTimeout(timer));
    await Promise.race([exit, outputClosed]);
  };

  let readyWallMs: number;
  try {
    readyWallMs = await waitMarker(0, options.attachTimeoutMs ?? 60_000);
  } catch (error) {
    await kill();
    throw error;
  }
  let stopped: Promise<EbpfTraceResult> | undefined;
  const stop = (): Promise<EbpfTraceResult> => {
    stopped ??= (async () => {
      try {
        await waitMarker(readySeen, DRAIN_TIMEOUT_MS);
      } finally {
        await kill();
      }
      const raw = Buffer.concat(stdout);
      const parsed = parseEbpf(raw, { nonce, stringLimit });
      // The first marker's kernel time against when it was seen: ms-accurate, and ts is informational.
      const offset = parsed.readyNs === undefined ? 0 : readyWallMs / 1000 - Number(parsed.readyNs) / 1e9;
      const events = parsed.events.map((e) => (e.ts === undefined ? e : { ...e, ts: e.ts + offset }));
      // bpftrace writes its lost-event notices to stdout (counted by the parser), ab-ebpf to stderr.
      const lostOnStderr = [...stderr.matchAll(/Lost (\d+) events/g)].reduce((n, m) => n + Number(m[1]), 0);
      return { ...parsed, lost: parsed.lost + lostOnStderr, events, raw, stderr };
    })();
    return stopped;
  };
  return {
    cgroupId,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop().catch(() => undefined);
    },
  };
}
