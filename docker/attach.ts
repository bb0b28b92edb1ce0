/**
 * A long-lived exec with its stdin held open: one hijacked connection carries
 * requests in (stdin) and demuxed output back, so a process inside the
 * container can answer many requests for the price of one exec.
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
import type { AttachedExec, AttachOptions } from './types.ts';

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
  return new DockerAttachedExec(container, exec, stream, options);
}

class DockerAttachedExec implements AttachedExec {
  readonly ended: Promise<{ exitCode: number | null }>;
  private readonly container: Dockerode.Container;
  private readonly stream: Duplex;
  private readonly options: AttachOptions;
  private isOpen = true;
  private closing: Promise<void> | undefined;

  constructor(container: Dockerode.Container, exec: Dockerode.Exec, stream: Duplex, options: AttachOptions) {
    this.container = container;
    this.stream = stream;
    this.options = options;
    const demux = new Demuxer((kind, payload) => (kind === 'stdout' ? options.onStdout(payload) : options.onStderr?.(payload)));
    const streamEnded = new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => demux.push(chunk));
      stream.once('end', () => resolve());
      stream.once('close', () => resolve());
      // EPIPE/ECONNRESET: the process or the container is gone; the stream is over either way.
      stream.once('error', () => resolve());
    });
    this.ended = streamEnded.then(async () => {
      this.isOpen = false;
      stream.destroy();
      // The daemon may already have forgotten the exec (container removed): the code is then unknown.
      const exitCode = await exitCodeOf(exec).catch(() => null);
      return { exitCode };
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
