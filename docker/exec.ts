import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { AuthbenchError } from '../core/index.ts';
import { apiError } from './api-error.ts';
import { CappedBuffer, Demuxer } from './demux.ts';
import type { ExecOptions, ExecResult } from './types.ts';

export const DEFAULT_OUTPUT_CAP_BYTES = 1024 * 1024;

/** 128 + SIGKILL: what Docker reports for a process (here: `timeout` itself) killed by signal 9. */
const KILLED_EXIT_CODE = 137;

/**
 * If the attach stream has not ended this long after the in-container timeout
 * fired, something escaped the process group and still holds stdout open
 * (e.g. a `setsid` daemon). We stop waiting; container removal reaps it.
 */
const BACKSTOP_GRACE_MS = 10_000;

/**
 * The argv actually executed. With a timeout the command runs under coreutils
 * `timeout -s KILL`: it puts itself and the command in a new process group and
 * on expiry SIGKILLs the whole group (including itself), so shells, their
 * children and background jobs all die inside the container, with no extra
 * exec round trip from the host (exec calls are serialised by the daemon).
 * Chosen over a pid-recording wrapper because it needs nothing but coreutils,
 * which every supported base image has. A process that leaves the group
 * (setsid) survives until the container is removed.
 */
export function execArgv(cmd: readonly string[], timeoutMs: number | undefined): string[] {
  if (timeoutMs === undefined) return [...cmd];
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new AuthbenchError('INVALID_ARGUMENT', `exec timeout must be a positive number of ms, got ${timeoutMs}`);
  }
  // `timeout 0` would mean "no timeout"; never round down to it.
  const seconds = Math.max(timeoutMs, 1) / 1000;
  return ['timeout', '-s', 'KILL', '--', String(seconds), ...cmd];
}

/**
 * A KILL exit is attributed to the timeout only when the timeout could have
 * fired: the host's clock started before the container's, so a fired timeout
 * always shows host elapsed ≥ timeoutMs.
 */
export function isTimeout(exitCode: number | null, elapsedMs: number, timeoutMs: number | undefined): boolean {
  return timeoutMs !== undefined && exitCode === KILLED_EXIT_CODE && elapsedMs >= timeoutMs;
}

export async function runExec(container: Dockerode.Container, options: ExecOptions): Promise<ExecResult> {
  if (options.cmd.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'exec: empty command');
  const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
  const hasStdin = options.stdin !== undefined;
  const started = performance.now();

  let exec: Dockerode.Exec;
  let stream: Duplex;
  try {
    exec = await container.exec({
      Cmd: execArgv(options.cmd, options.timeoutMs),
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: hasStdin,
      Tty: false,
      ...(options.user === undefined ? {} : { User: options.user }),
      ...(options.workdir === undefined ? {} : { WorkingDir: options.workdir }),
      ...(options.env === undefined ? {} : { Env: Object.entries(options.env).map(([k, v]) => `${k}=${v}`) }),
    });
    stream = await exec.start({ hijack: true, stdin: hasStdin });
  } catch (e) {
    throw apiError(`exec ${JSON.stringify(options.cmd[0])} in container ${container.id.slice(0, 12)}`, e);
  }

  const stdout = new CappedBuffer(cap);
  const stderr = new CappedBuffer(cap);
  const demux = new Demuxer((kind, payload) => (kind === 'stdout' ? stdout : stderr).push(payload));
  const backstopMs = options.timeoutMs === undefined ? undefined : options.timeoutMs + BACKSTOP_GRACE_MS;
  const finished = drain(stream, demux, backstopMs);
  if (hasStdin) {
    const input = options.stdin;
    // end() half-closes the socket; the daemon then closes the process's stdin.
    stream.end(typeof input === 'string' ? Buffer.from(input) : input);
  }
  const how = await finished;
  stream.destroy();

  const exitCode = how === 'backstop' ? null : await exitCodeOf(exec);
  const durationMs = performance.now() - started;
  const timedOut = how === 'backstop' || isTimeout(exitCode, durationMs, options.timeoutMs);
  return {
    exitCode: timedOut ? null : exitCode,
    timedOut,
    stdout: stdout.toString(),
    stderr: stderr.toString(),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    durationMs: Math.round(durationMs),
  };
}

/**
 * Resolve when the attach stream is over. A socket error (EPIPE when the
 * process exits without reading its stdin, ECONNRESET) also ends the output;
 * whether the exec really finished is decided by inspecting it afterwards.
 */
function drain(stream: Duplex, demux: Demuxer, backstopMs: number | undefined): Promise<'ended' | 'backstop'> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (how: 'ended' | 'backstop'): void => {
      if (timer !== undefined) clearTimeout(timer);
      resolve(how);
    };
    stream.on('data', (chunk: Buffer) => demux.push(chunk));
    stream.once('end', () => done('ended'));
    stream.once('close', () => done('ended'));
    stream.once('error', () => done('ended'));
    if (backstopMs !== undefined) timer = setTimeout(() => done('backstop'), backstopMs);
  });
}

/** The stream can end a moment before the daemon marks the exec finished; poll briefly. */
export async function exitCodeOf(exec: Dockerode.Exec): Promise<number | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    let info: Dockerode.ExecInspectInfo;
    try {
      info = await exec.inspect();
    } catch (e) {
      throw apiError('inspect exec', e);
    }
    if (!info.Running) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new AuthbenchError('DOCKER_API', 'exec output ended but the daemon still reports the process running');
}
