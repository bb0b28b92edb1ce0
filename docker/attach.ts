/**
 * A long-lived exec with its stdin held open: one hijacked connection carries
 * requests in (stdin) and demuxed output back, so a process inside the
 * container can answer many requests for the price of one exec.
 *
 * The container's main process can be attached the same way (MainProcessStream), before
 * the container starts: a session agent below it then costs no exec at all.
 *
 * Cleanup matters more than speed here. The socket is unref'd while idle (an
 * open attach never keeps Node alive on its own); close() half-closes stdin,
 * waits for the process to end, runs the caller's kill command through a
 * normal exec if it does not, and destroys the socket.
 */
import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { AuthbenchError } from '../core/index.ts';
import { apiError } from './api-error.ts';
import { Demuxer } from './demux.ts';
import { exitCodeOf, runExec } from './exec.ts';
import type { AttachedExec, AttachOptions, MainAttachOptions } from './types.ts';

/** How long close() waits for the process to end after stdin closes, and again after the kill command. */
export const DEFAULT_CLOSE_GRACE_MS = 2_000;

interface RefSocket {
  ref?: () => void;
  unref?: () => void;
}

export async function attachExec(container: Dockerode.Container, options: AttachOptions): Promise<AttachedExec> {
  if (options.cmd.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'attach: empty command');
  let exec: Dockerode.Exec;
  let stream: Duplex;
  try {
    exec = await container.exec({
      Cmd: [...options.cmd],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      ...(options.user === undefined ? {} : { User: options.user }),
      ...(options.workdir === undefined ? {} : { WorkingDir: options.workdir }),
      ...(options.env === undefined ? {} : { Env: Object.entries(options.env).map(([k, v]) => `${k}=${v}`) }),
    });
    stream = await exec.start({ hijack: true, stdin: true });
  } catch (e) {
    throw apiError(`attach ${JSON.stringify(options.cmd[0])} in container ${container.id.slice(0, 12)}`, e);
  }
  const demux = new Demuxer((kind, payload) => (kind === 'stdout' ? options.onStdout(payload) : options.onStderr?.(payload)));
  stream.on('data', (chunk: Buffer) => demux.push(chunk));
  // The daemon may already have forgotten the exec (container removed): the code is then unknown.
  const ended = streamEnd(stream).then(async () => ({ exitCode: await exitCodeOf(exec).catch(() => null) }));
  return new DockerAttachedExec(container, stream, ended, options);
}

/**
 * The container's main process's stream, attached (hijacked, stdin open) before the container
 * started, so its first output is kept until it is claimed. Claimed once: the claimer's handlers
 * get what was kept, then everything after. The claimed process ends when the stream does (the
 * container stopped) or when a stderr line says so (`endedLine`): docker-init holds the
 * container's stdio, so a child of the main process can end without the stream ending.
 */
export class MainProcessStream {
  private readonly container: Dockerode.Container;
  private readonly stream: Duplex;
  private readonly streamEnded: Promise<void>;
  private kept: { kind: 'stdout' | 'stderr'; payload: Buffer }[] | undefined = [];
  private deliver: ((kind: 'stdout' | 'stderr', payload: Buffer) => void) | undefined;

  static async attach(container: Dockerode.Container): Promise<MainProcessStream> {
    try {
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
      return MainProcessStream.over(container, stream);
    } catch (e) {
      throw apiError(`attach to the main process of container ${container.id.slice(0, 12)}`, e);
    }
  }

  /** Over a stream already attached (Docker's multiplexed framing). */
  static over(container: Dockerode.Container, stream: Duplex): MainProcessStream {
    return new MainProcessStream(container, stream);
  }

  private constructor(container: Dockerode.Container, stream: Duplex) {
    this.container = container;
    this.stream = stream;
    const demux = new Demuxer((kind, payload) => (this.deliver === undefined ? this.kept?.push({ kind, payload }) : this.deliver(kind, payload)));
    stream.on('data', (chunk: Buffer) => demux.push(chunk));
    this.streamEnded = streamEnd(stream);
    (stream as RefSocket).unref?.();
  }

  get claimed(): boolean {
    return this.kept === undefined;
  }

  claim(options: MainAttachOptions): AttachedExec | undefined {
    const kept = this.kept;
    if (kept === undefined) return undefined;
    this.kept = undefined;
    let endedBy: (code: number) => void = () => undefined;
    const byLine = new Promise<{ exitCode: number | null }>((resolve) => (endedBy = (exitCode) => resolve({ exitCode })));
    let partial = '';
    this.deliver = (kind, payload) => {
      if (kind === 'stdout') return options.onStdout(payload);
      options.onStderr?.(payload);
      const lines = (partial + payload.toString('utf8')).split('\n');
      partial = (lines.pop() ?? '').slice(-4096);
      for (const line of lines) {
        const code = options.endedLine(line);
        if (code !== undefined) endedBy(code);
      }
    };
    for (const { kind, payload } of kept) this.deliver(kind, payload);
    const ended = Promise.race([byLine, this.streamEnded.then(() => ({ exitCode: null }))]);
    return new DockerAttachedExec(this.container, this.stream, ended, options);
  }

  /** Unclaimed: let go of the stream (the container's removal ends it anyway). */
  release(): void {
    if (this.kept === undefined) return;
    this.kept = undefined;
    this.stream.destroy();
  }
}

/** Settles when the stream ends, closes or fails (EPIPE/ECONNRESET: the process or the container is gone). */
function streamEnd(stream: Duplex): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
  });
}

class DockerAttachedExec implements AttachedExec {
  readonly ended: Promise<{ exitCode: number | null }>;
  private readonly container: Dockerode.Container;
  private readonly stream: Duplex;
  private readonly options: Pick<AttachOptions, 'killCommand' | 'closeGraceMs'>;
  private isOpen = true;
  private closing: Promise<void> | undefined;

  constructor(container: Dockerode.Container, stream: Duplex, ended: Promise<{ exitCode: number | null }>, options: Pick<AttachOptions, 'killCommand' | 'closeGraceMs'>) {
    this.container = container;
    this.stream = stream;
    this.options = options;
    this.ended = ended.then((result) => {
      this.isOpen = false;
      stream.destroy();
      return result;
    });
    this.unref();
  }

  get open(): boolean {
    return this.isOpen;
  }

  write(data: Uint8Array): Promise<void> {
    if (!this.isOpen) return Promise.reject(new AuthbenchError('DOCKER_API', 'attached exec: the stream is closed'));
    return new Promise((resolve, reject) => {
      this.stream.write(data, (e) => (e ? reject(apiError('write to attached exec', e)) : resolve()));
    });
  }

  ref(): void {
    (this.stream as RefSocket).ref?.();
  }

  unref(): void {
    (this.stream as RefSocket).unref?.();
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async shutDown(): Promise<void> {
    const grace = this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.ref(); // the close itself must finish before Node may exit
    try {
      if (this.isOpen) this.stream.end(); // half-close: the daemon closes the process's stdin
      if (await settlesWithin(this.ended, grace)) return;
      const kill = this.options.killCommand?.();
      if (kill !== undefined && kill.length > 0) {
        await runExec(this.container, { cmd: kill, timeoutMs: 2 * grace }).catch(() => undefined);
        if (await settlesWithin(this.ended, grace)) return;
      }
      // Still running: stop listening; removing the container reaps whatever is left.
    } finally {
      this.isOpen = false;
      this.stream.destroy();
    }
  }
}

async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
