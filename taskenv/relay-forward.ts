/**
 * The host end of the model relay tunnel: one loopback port in a task container (network `none`)
 * that reaches the relay on the host, and nothing else.
 *
 * The container end is the harness's `ab-launch --forward PORT` (sandbox/launcher/ab-forward.c),
 * started here as its own attached exec, outside every command's Landlock domain. Each connection
 * a process in the container opens to 127.0.0.1:PORT arrives as frames on that exec's stdout and
 * is connected here to the relay (TCP on 127.0.0.1 or its unix socket); the relay's bytes go back
 * the same way. No host path is mounted and no key crosses: the relay adds the key on the host.
 */
import { connect, type Socket } from 'node:net';
import { AuthbenchError } from '../core/index.ts';
import type { AttachedExec, Container } from '../docker/index.ts';
import {
  encodeForwardData,
  encodeForwardFrame,
  FORWARD_FRAME,
  forwardArgv,
  ForwardFrameReader,
  LAUNCHER_PATH,
  type ForwardFrame,
} from '../sandbox/launcher/index.ts';

/** Where the relay listens on the host: what `startRelay` returns (`models/relay`) has this shape. */
export interface RelayEndpoint {
  readonly port: number | null;
  readonly socketPath: string | null;
}

export interface RelayForwardOptions {
  /** The TCP port on 127.0.0.1 inside the container; a sandboxed command's policy must grant it (withRelayGrant). */
  port: number;
  /** How long the forwarder may take to start listening (default 10 s). */
  startTimeoutMs?: number;
}

export interface RelayForward {
  readonly port: number;
  /** Base URL for clients inside the container. */
  readonly url: string;
  /** Connections the container opened so far, and how many of them could not reach the relay. */
  stats(): { connections: number; relayUnreachable: number };
  /** Drops every connection and stops the forwarder. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 10_000;

/** Start the forwarder in the container and wait until it listens; a port already taken there is an error naming it. */
export async function openRelayForward(container: Container, relay: RelayEndpoint, options: RelayForwardOptions): Promise<RelayForward> {
  const argv = forwardArgv(options.port);
  const target = relayTarget(relay);
  if (container.attach === undefined) throw new AuthbenchError('RELAY_FORWARD_FAILED', 'this container offers no attached exec for the relay forwarder');
  const reader = new ForwardFrameReader();
  const sockets = new Map<number, Socket>();
  /** Connections the forwarder dropped itself: nothing to tell it when their relay side closes. */
  const dropped = new Set<number>();
  const stats = { connections: 0, relayUnreachable: 0 };
  let pid: number | undefined;
  let greeted = false;
  let started: ((frame: ForwardFrame) => void) | undefined;
  let failed: ((e: unknown) => void) | undefined;
  const first = new Promise<ForwardFrame>((resolve, reject) => ((started = resolve), (failed = reject)));
  // Settled from stream callbacks, possibly before anything awaits it.
  first.catch(() => undefined);
  // Set once the exec is attached; frames may only be sent from callbacks that run after that.
  const link: { exec?: AttachedExec } = {};
  const stderr: Buffer[] = [];

  const send = (frame: Buffer): void => {
    // Writes are queued in order on one socket; once the tunnel is gone there is no one left to tell.
    if (link.exec?.open === true) link.exec.write(frame).catch(() => undefined);
  };

  const openToRelay = (id: number): void => {
    stats.connections++;
    let reached = false;
    const socket = connect({ ...target, allowHalfOpen: true });
    sockets.set(id, socket);
    socket.on('connect', () => (reached = true));
    socket.on('data', (chunk: Buffer) => encodeForwardData(id, chunk).forEach(send));
    socket.on('end', () => send(encodeForwardFrame(FORWARD_FRAME.eof, id)));
    socket.on('error', () => {
      if (!reached) stats.relayUnreachable++;
    });
    socket.on('close', () => {
      sockets.delete(id);
      // Both sides finished cleanly: the forwarder closes the client by itself.
      const clean = socket.readableEnded && socket.writableFinished;
      if (!dropped.delete(id) && !clean) send(encodeForwardFrame(FORWARD_FRAME.kill, id));
    });
  };

  const onFrame = (frame: ForwardFrame): void => {
    // The first frame says whether it listens; connections may follow in the same chunk.
    if (!greeted) {
      greeted = true;
      started?.(frame);
      return;
    }
    const socket = sockets.get(frame.id);
    switch (frame.type) {
      case FORWARD_FRAME.open:
        openToRelay(frame.id);
        break;
      case FORWARD_FRAME.data:
        socket?.write(frame.payload);
        break;
      case FORWARD_FRAME.eof:
        socket?.end();
        break;
      case FORWARD_FRAME.kill:
        if (socket !== undefined) dropped.add(frame.id);
        socket?.destroy();
        break;
      case FORWARD_FRAME.listening:
      case FORWARD_FRAME.failed:
        break;
    }
  };

  const tunnel = await container.attach({
    cmd: argv,
    // The harness helpers' identity: nothing the image set up (its USER, its workdir) applies to it.
    user: '0:0',
    workdir: '/',
    onStdout: (chunk) => {
      try {
        reader.push(chunk).forEach(onFrame);
      } catch (e) {
        // Not the forwarder's stream (any more): nothing more from it can be trusted as frames.
        failed?.(e);
        for (const s of sockets.values()) s.destroy();
        void link.exec?.close();
      }
    },
    onStderr: (chunk) => void stderr.push(chunk),
    killCommand: () => (pid === undefined ? undefined : [LAUNCHER_PATH, '--stop-serve', String(pid)]),
  });
  link.exec = tunnel;
  void tunnel.ended.then(({ exitCode }) => {
    for (const s of sockets.values()) s.destroy();
    failed?.(
      new AuthbenchError('RELAY_FORWARD_FAILED', `the relay forwarder for port ${options.port} exited before it listened (exit ${String(exitCode)})`, {
        details: Buffer.concat(stderr).toString('utf8').trim().split('\n').filter((l) => l !== '').slice(-3),
      }),
    );
  });

  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AuthbenchError('RELAY_FORWARD_FAILED', `the relay forwarder for port ${options.port} did not start listening within ${options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms`)), options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    });
    const hello = await Promise.race([first, timeout]);
    if (hello.type === FORWARD_FRAME.failed) {
      const reason = hello.payload.toString('utf8');
      throw new AuthbenchError('RELAY_FORWARD_FAILED', `cannot forward the model relay to port ${options.port} in container ${container.id.slice(0, 12)}: ${reason}`, {
        ...(reason.startsWith('in use') ? { hint: `something in the task already listens on 127.0.0.1:${options.port}: pick another relay port` } : {}),
      });
    }
    const listened = Number(hello.payload.toString('latin1'));
    if (hello.type !== FORWARD_FRAME.listening || !Number.isInteger(listened) || listened < 2) {
      throw new AuthbenchError('RELAY_FORWARD_FAILED', `the relay forwarder for port ${options.port} began with a ${hello.type} frame, not listening`);
    }
    pid = listened;
  } catch (e) {
    await tunnel.close();
    throw e;
  } finally {
    clearTimeout(timer);
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const s of sockets.values()) s.destroy();
      await tunnel.close();
    })();
    return closing;
  };
  return {
    port: options.port,
    url: `http://127.0.0.1:${options.port}`,
    stats: () => ({ ...stats }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function relayTarget(relay: RelayEndpoint): { path: string } | { host: string; port: number } {
  if (relay.socketPath !== null) return { path: relay.socketPath };
  if (relay.port !== null) return { host: '127.0.0.1', port: relay.port };
  throw new AuthbenchError('INVALID_ARGUMENT', 'the model relay has neither a port nor a socket path to forward to');
}
