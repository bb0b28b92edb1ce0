/**
 * The host end of the relay tunnel against a scripted forwarder (no Docker): what it makes of the
 * forwarder's first frame, and that connections are carried both ways with half-closes.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AttachedExec, AttachOptions, Container } from '../docker/index.ts';
import { encodeForwardFrame, FORWARD_FRAME, ForwardFrameReader, type ForwardFrame } from '../sandbox/launcher/index.ts';
import { openRelayForward } from './relay-forward.ts';

interface FakeForwarder {
  container: Container;
  /** Frames the host wrote to the forwarder's stdin. */
  received: ForwardFrame[];
  /** Write bytes as the forwarder's stdout. */
  emit(bytes: Buffer): void;
  attached?: AttachOptions;
  closed: boolean;
}

/** A container whose attach is a forwarder that says `first` as soon as it starts. */
function fakeForwarder(first: Buffer): FakeForwarder {
  const reader = new ForwardFrameReader();
  const fake: FakeForwarder = { container: undefined as unknown as Container, received: [], emit: () => undefined, closed: false };
  let end: (v: { exitCode: number | null }) => void = () => undefined;
  const ended = new Promise<{ exitCode: number | null }>((resolve) => (end = resolve));
  const attach = (options: AttachOptions): Promise<AttachedExec> => {
    fake.attached = options;
    fake.emit = (bytes) => options.onStdout(bytes);
    setImmediate(() => options.onStdout(first));
    return Promise.resolve({
      write: (data: Uint8Array) => {
        fake.received.push(...reader.push(Buffer.from(data)));
        return Promise.resolve();
      },
      ended,
      get open() {
        return !fake.closed;
      },
      ref: () => undefined,
      unref: () => undefined,
      close: () => {
        fake.closed = true;
        end({ exitCode: 0 });
        return Promise.resolve();
      },
      [Symbol.asyncDispose]: () => Promise.resolve(),
    });
  };
  fake.container = { id: 'c0ffee000000', attach } as unknown as Container;
  return fake;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

describe('openRelayForward', () => {
  it('names the port when the forwarder cannot listen, and closes the exec', async () => {
    const fake = fakeForwarder(encodeForwardFrame(FORWARD_FRAME.failed, 0, Buffer.from('in use 127.0.0.1:7861: Address already in use')));
    await expect(openRelayForward(fake.container, { port: 1, socketPath: null }, { port: 7861 })).rejects.toMatchObject({
      code: 'RELAY_FORWARD_FAILED',
      message: expect.stringContaining('port 7861') as unknown,
      hint: expect.stringContaining('127.0.0.1:7861') as unknown,
    });
    expect(fake.closed).toBe(true);
    expect(fake.attached?.cmd).toEqual(['/opt/authbench/bin/ab-launch', '--forward', '7861']);
    expect(fake.attached?.user).toBe('0:0');
  });

  it('refuses output that is not the forwarder\'s', async () => {
    const fake = fakeForwarder(Buffer.from('OCI runtime exec failed: exec failed: unable to start container process'));
    await expect(openRelayForward(fake.container, { port: 1, socketPath: null }, { port: 7861 })).rejects.toThrow(/not a frame/);
    expect(fake.closed).toBe(true);
  });

  it('gives up on a forwarder that never says it listens', async () => {
    const fake = fakeForwarder(Buffer.alloc(0));
    await expect(openRelayForward(fake.container, { port: 1, socketPath: null }, { port: 7861, startTimeoutMs: 50 })).rejects.toThrow(/did not start listening within 50 ms/);
  });

  it('carries a connection to the relay and back, half-closes included, even when it follows the greeting in one chunk', async () => {
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      const got: Buffer[] = [];
      socket.on('data', (c: Buffer) => got.push(c));
      // Answers once the client finished sending, then finishes its own side.
      socket.on('end', () => socket.end(`echo:${Buffer.concat(got).toString()}`));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const greeting = Buffer.concat([
      encodeForwardFrame(FORWARD_FRAME.listening, 0, Buffer.from('42')),
      encodeForwardFrame(FORWARD_FRAME.open, 5),
      encodeForwardFrame(FORWARD_FRAME.data, 5, Buffer.from('hello')),
    ]);
    const fake = fakeForwarder(greeting);
    const forward = await openRelayForward(fake.container, { port, socketPath: null }, { port: 7861 });
    expect(forward.url).toBe('http://127.0.0.1:7861');
    fake.emit(encodeForwardFrame(FORWARD_FRAME.eof, 5));
    await until(() => fake.received.some((f) => f.type === FORWARD_FRAME.eof));
    expect(fake.received.map((f) => [f.type, f.id, f.payload.toString()])).toEqual([
      ['D', 5, 'echo:hello'],
      ['E', 5, ''],
    ]);
    expect(forward.stats()).toEqual({ connections: 1, relayUnreachable: 0 });
    expect(fake.attached?.killCommand?.()).toEqual(['/opt/authbench/bin/ab-launch', '--stop-serve', '42']);
    await forward.close();
    expect(fake.closed).toBe(true);
  });

  it('tells the forwarder to drop a connection the relay refuses', async () => {
    const fake = fakeForwarder(Buffer.concat([encodeForwardFrame(FORWARD_FRAME.listening, 0, Buffer.from('42')), encodeForwardFrame(FORWARD_FRAME.open, 9)]));
    const forward = await openRelayForward(fake.container, { port: null, socketPath: '/nonexistent/relay.sock' }, { port: 7861 });
    await until(() => fake.received.length > 0);
    expect(fake.received.map((f) => [f.type, f.id])).toEqual([['K', 9]]);
    expect(forward.stats()).toEqual({ connections: 1, relayUnreachable: 1 });
    await forward.close();
  });
});
