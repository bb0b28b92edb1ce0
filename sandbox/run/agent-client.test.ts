/**
 * The host end of the agent against a scripted in-memory agent: frames cut
 * into small chunks, serialised requests, and an agent that dies mid-request.
 */
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import type { AttachedExec, AttachOptions, Container, MainAttachOptions } from '../../docker/index.ts';
import { AGENT_PROTOCOL_VERSION, AGENT_WAKE_BYTE, encodeFrame, FRAME_TYPE, FrameDecoder, TAG, type Field, type Frame } from '../launcher/index.ts';
import { AgentClient } from './agent-client.ts';
import { execResultOf } from './session.ts';

const u32 = (n: number): Buffer => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
const u64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n), 0);
  return b;
};
const f = (tag: number, value: Buffer | string): Field => ({ tag, value: Buffer.from(value) });

type Script = (request: Frame, reply: (frame: Frame) => void, die: () => void) => void;

/** A Container whose attach() runs `script` for each request frame, replying in 3-byte chunks. */
function fakeContainer(script: Script, hello = true): { container: Container; requests: Frame[]; closed: () => boolean } {
  const requests: Frame[] = [];
  let closed = false;
  const container = {
    id: 'fake',
    image: 'fake',
    attach(options: AttachOptions): Promise<AttachedExec> {
      let endIt: (v: { exitCode: number | null }) => void = () => undefined;
      const ended = new Promise<{ exitCode: number | null }>((r) => (endIt = r));
      let open = true;
      const send = (frame: Frame): void => {
        const bytes = encodeFrame(frame);
        for (let i = 0; i < bytes.length; i += 3) options.onStdout(bytes.subarray(i, i + 3));
      };
      const die = (): void => {
        options.onStderr?.(Buffer.from('ab-agent: something broke\n'));
        open = false;
        endIt({ exitCode: 1 });
      };
      const decoder = new FrameDecoder();
      const attached: AttachedExec = {
        ended,
        get open() {
          return open;
        },
        write: (data) => {
          for (const frame of decoder.push(Buffer.from(data))) {
            requests.push(frame);
            setImmediate(() => script(frame, send, die));
          }
          return Promise.resolve();
        },
        ref: () => undefined,
        unref: () => undefined,
        close: () => {
          closed = true;
          open = false;
          endIt({ exitCode: 0 });
          return Promise.resolve();
        },
        [Symbol.asyncDispose]: () => Promise.resolve(),
      };
      if (hello) setImmediate(() => send({ type: FRAME_TYPE.hello, fields: [f(TAG.version, u32(AGENT_PROTOCOL_VERSION)), f(TAG.pid, u32(4242)), f(TAG.pids, u32(1)), f(TAG.pids, u32(7))] }));
      else setImmediate(die);
      return Promise.resolve(attached);
    },
  } as unknown as Container;
  return { container, requests, closed: () => closed };
}

/**
 * The same container with a main process's agent to claim (once): it says hello (pid 777) only
 * after the wake byte, or, `dies`, writes its end line before that and is gone.
 */
function withMainAgent(fake: ReturnType<typeof fakeContainer>, behaviour: 'hello-after-wake' | 'dies'): { container: Container; wakes: number[]; claims: () => number } {
  const wakes: number[] = [];
  let claims = 0;
  let claimed = false;
  const claimMain = (options: MainAttachOptions): AttachedExec | undefined => {
    if (claimed) return undefined;
    claimed = true;
    claims++;
    let endIt: (v: { exitCode: number | null }) => void = () => undefined;
    const ended = new Promise<{ exitCode: number | null }>((r) => (endIt = r));
    let open = true;
    let awake = false;
    const decoder = new FrameDecoder();
    const send = (frame: Frame): void => options.onStdout(encodeFrame(frame));
    const attached: AttachedExec = {
      ended,
      get open() {
        return open;
      },
      write: (data) => {
        let bytes = Buffer.from(data);
        if (!awake) {
          wakes.push(bytes[0] ?? -1);
          awake = true;
          bytes = bytes.subarray(1);
          setImmediate(() => send({ type: FRAME_TYPE.hello, fields: [f(TAG.version, u32(AGENT_PROTOCOL_VERSION)), f(TAG.pid, u32(777)), f(TAG.pids, u32(1)), f(TAG.pids, u32(6))] }));
        }
        for (const frame of decoder.push(bytes)) setImmediate(() => echo(frame, send, () => undefined));
        return Promise.resolve();
      },
      ref: () => undefined,
      unref: () => undefined,
      close: () => {
        open = false;
        endIt({ exitCode: 0 });
        return Promise.resolve();
      },
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
    if (behaviour === 'dies') {
      const line = 'ab-launch --idle: the session agent ended (exit 127)\n';
      options.onStderr?.(Buffer.from(line));
      const code = options.endedLine(line.trim());
      open = false;
      endIt({ exitCode: code ?? null });
    }
    return attached;
  };
  return { container: { ...fake.container, attach: fake.container.attach?.bind(fake.container), claimMain } as Container, wakes, claims: () => claims };
}

const argvOf = (frame: Frame): string[] => frame.fields.filter((x) => x.tag === TAG.argv).map((x) => x.value.toString());

/** Echoes argv[1] on stdout and exits with argv.length; collects one file per COLLECT. */
const echo: Script = (request, reply) => {
  const argv = argvOf(request);
  const out = argv[1] ?? '';
  const collects = request.fields.filter((x) => x.tag === TAG.collect);
  reply({
    type: FRAME_TYPE.done,
    fields: [
      f(TAG.exit, u32(argv.length)),
      f(TAG.stdout, out),
      f(TAG.stdoutBytes, u64(Buffer.byteLength(out) + 10)),
      f(TAG.stderr, ''),
      f(TAG.stderrBytes, u64(0)),
      f(TAG.durationUs, u64(2600)),
      ...collects.map((c, i) => f(TAG.file, i === 0 ? Buffer.concat([Buffer.from([1]), c.value]) : Buffer.from('\0missing'))),
    ],
  });
};

const DEADLINE = 5_000;

describe('AgentClient', () => {
  it('says hello, then answers requests in order', async () => {
    const { container, requests } = fakeContainer(echo);
    const client = await AgentClient.start(container);
    expect(client.hello).toEqual({ version: AGENT_PROTOCOL_VERSION, pid: 4242, harnessPids: [1, 7] });
    expect(client.harnessPids).toEqual([4242, 1, 7]);
    const [a, b] = await Promise.all([
      client.request({ argv: ['echo', 'first'], outputCapBytes: 100 }, DEADLINE),
      client.request({ argv: ['echo', 'second', 'x'], outputCapBytes: 100 }, DEADLINE),
    ]);
    expect([a.stdout.toString(), a.outcome]).toEqual(['first', { kind: 'exited', code: 2 }]);
    expect([b.stdout.toString(), b.outcome]).toEqual(['second', { kind: 'exited', code: 3 }]);
    expect(requests.map(argvOf)).toEqual([
      ['echo', 'first'],
      ['echo', 'second', 'x'],
    ]);
  });

  it('calls an agent that dies during a request SANDBOX_BROKEN, with its stderr', async () => {
    const { container } = fakeContainer((_req, _reply, die) => die());
    const client = await AgentClient.start(container);
    const error = await client.request({ argv: ['true'], outputCapBytes: 1 }, DEADLINE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).code).toBe('SANDBOX_BROKEN');
    expect((error as AuthbenchError).message).toMatch(/agent exited \(exit 1\)/);
    expect((error as AuthbenchError).details).toContain('ab-agent: something broke');
    expect(client.alive).toBe(false);
  });

  it('ends a request the agent never answers at its deadline, as SANDBOX_BROKEN, and closes the attach', async () => {
    const fake = fakeContainer(() => undefined);
    const client = await AgentClient.start(fake.container);
    const started = performance.now();
    const error = await client.request({ argv: ['sleep', '1000'], outputCapBytes: 1 }, 50).catch((e: unknown) => e);
    expect((error as AuthbenchError).code).toBe('SANDBOX_BROKEN');
    expect((error as AuthbenchError).message).toMatch(/did not answer within 50 ms/);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(fake.closed()).toBe(true);
    expect(client.alive).toBe(false);
  });

  it('passes an error frame through as it is (the request was refused; nothing ran, the agent lives)', async () => {
    const { container } = fakeContainer((_req, reply) => reply({ type: FRAME_TYPE.error, fields: [f(TAG.message, 'command setup: Too many open files')] }));
    const client = await AgentClient.start(container);
    const error = await client.request({ argv: ['true'], outputCapBytes: 1 }, DEADLINE).catch((e: unknown) => e);
    expect((error as AuthbenchError).code).toBe('SANDBOX_UNAVAILABLE');
    expect(client.alive).toBe(true);
  });

  it('asks for a listing with a list frame and returns its bytes', async () => {
    const listed: Script = (request, reply) =>
      reply({
        type: FRAME_TYPE.done,
        fields: [f(TAG.exit, u32(0)), f(TAG.stdout, argvOf(request).join(' ')), f(TAG.stdoutBytes, u64(6)), f(TAG.stderr, ''), f(TAG.stderrBytes, u64(0)), f(TAG.durationUs, u64(1))],
      });
    const { container, requests } = fakeContainer(listed);
    const client = await AgentClient.start(container);
    const listing = await client.list(['/', '/dev'], DEADLINE);
    expect(requests[0]?.type).toBe(FRAME_TYPE.list);
    expect(argvOf(requests[0] as Frame)).toEqual(['/', '/dev']);
    expect(listing.toString()).toBe('/ /dev');
  });

  it('stops the background commands with a stop frame and returns each one’s report', async () => {
    const stopped: Script = (request, reply) =>
      reply({
        type: FRAME_TYPE.background,
        fields: request.type === FRAME_TYPE.stop ? [f(TAG.job, u32(3)), f(TAG.trace, 'x'), f(TAG.traceBytes, u64(1)), f(TAG.survivors, u32(1)), f(TAG.survivorInfo, '41 nginx')] : [],
      });
    const { container, requests } = fakeContainer(stopped);
    const client = await AgentClient.start(container);
    const report = await client.stopBackground(DEADLINE);
    expect(requests.map((r) => r.type)).toEqual([FRAME_TYPE.stop]);
    expect(report.jobs.map((j) => [j.job, j.trace.kept.toString(), j.stopped, j.stoppedInfo])).toEqual([[3, 'x', 1, '41 nginx']]);
    expect(client.alive).toBe(true);
  });

  it('fails to start when the agent exits before its hello, and closes the attach', async () => {
    const fake = fakeContainer(echo, false);
    await expect(AgentClient.start(fake.container)).rejects.toThrow(/did not start: the sandbox agent exited/);
    expect(fake.closed()).toBe(true);
  });

  it('takes the main process’s agent first: wakes it with the wake byte, and makes no exec', async () => {
    const fake = fakeContainer(echo);
    let execs = 0;
    const counted = { ...fake.container, attach: (o: AttachOptions) => (execs++, fake.container.attach?.(o)) } as unknown as Container;
    const { container, wakes, claims } = withMainAgent({ ...fake, container: counted }, 'hello-after-wake');
    const client = await AgentClient.start(container);
    expect(wakes).toEqual([AGENT_WAKE_BYTE]);
    expect(client.hello.pid).toBe(777);
    expect(client.harnessPids).toEqual([777, 1, 6]);
    const r = await client.request({ argv: ['echo', 'main'], outputCapBytes: 100 }, DEADLINE);
    expect(r.stdout.toString()).toBe('main');
    expect(execs).toBe(0);
    // Claimed once: the next agent (after this one ends) is an exec.
    await client.close();
    const next = await AgentClient.start(container);
    expect(next.hello.pid).toBe(4242);
    expect(claims()).toBe(1);
    expect(execs).toBe(1);
  });

  it('falls back to an exec when the main process’s agent ended before its hello', async () => {
    const { container, claims } = withMainAgent(fakeContainer(echo), 'dies');
    const client = await AgentClient.start(container);
    expect(claims()).toBe(1);
    expect(client.hello.pid).toBe(4242);
    const r = await client.request({ argv: ['echo', 'exec'], outputCapBytes: 100 }, DEADLINE);
    expect(r.stdout.toString()).toBe('exec');
  });

  it('refuses a container without attach', async () => {
    const container = { id: 'x', image: 'x' } as unknown as Container;
    await expect(AgentClient.start(container)).rejects.toThrow(/no attached exec/);
  });
});

describe('execResultOf', () => {
  const base = {
    stdout: Buffer.from(''),
    stderr: Buffer.from(''),
    stdoutBytes: 0,
    stderrBytes: 0,
    durationUs: 0,
    files: [],
    channelMessages: [],
    denials: [],
    denialsTotal: 0,
    leftover: 0,
    leftoverInfo: '',
    survivors: 0,
    survivorInfo: '',
  };
  it('reports a signal death as 128 + signal and a timeout without an exit code', () => {
    expect(execResultOf({ ...base, outcome: { kind: 'signaled', signal: 9 } }).exitCode).toBe(137);
    const t = execResultOf({ ...base, outcome: { kind: 'timedOut' } });
    expect([t.exitCode, t.timedOut]).toEqual([null, true]);
  });
});
