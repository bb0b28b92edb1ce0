/**
 * MainProcessStream without a daemon: a PassThrough stands in for the hijacked socket (Docker's
 * multiplexed framing written into it by hand); the container handle is never called here.
 */
import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { MainProcessStream } from './attach.ts';

function frame(type: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

const NO_CONTAINER = { id: 'c0ffee' } as unknown as Dockerode.Container;
const ENDED = /^agent ended (\d+)$/;
const endedLine = (line: string): number | undefined => {
  const m = ENDED.exec(line);
  return m === null ? undefined : Number(m[1]);
};
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function claimed(main: MainProcessStream): { out: string[]; err: string[]; attached: ReturnType<MainProcessStream['claim']> } {
  const out: string[] = [];
  const err: string[] = [];
  const attached = main.claim({ onStdout: (c) => out.push(c.toString()), onStderr: (c) => err.push(c.toString()), endedLine });
  return { out, err, attached };
}

describe('MainProcessStream', () => {
  it('keeps what the process wrote before the claim and hands it over, then the rest; a second claim gets nothing', async () => {
    const socket = new PassThrough();
    const main = MainProcessStream.over(NO_CONTAINER, socket);
    socket.write(frame(1, 'hello'));
    await tick();
    const { out, attached } = claimed(main);
    expect(attached).toBeDefined();
    expect(out).toEqual(['hello']);
    socket.write(frame(1, 'more'));
    await tick();
    expect(out).toEqual(['hello', 'more']);
    expect(main.claimed).toBe(true);
    expect(main.claim({ onStdout: () => undefined, endedLine })).toBeUndefined();
  });

  it('ends the claimed process on its end line, even cut across frames, with its code; the stream is let go', async () => {
    const socket = new PassThrough();
    const main = MainProcessStream.over(NO_CONTAINER, socket);
    const { err, attached } = claimed(main);
    socket.write(frame(2, 'agent ended 9 is not at line start: agent ended 3\nagent en'));
    await tick();
    expect(attached?.open).toBe(true);
    socket.write(frame(2, 'ded 7\n'));
    await expect(attached?.ended).resolves.toEqual({ exitCode: 7 });
    expect(attached?.open).toBe(false);
    expect(err.join('')).toContain('agent ended 7');
    expect(socket.destroyed).toBe(true);
  });

  it('an end line written before the claim ends it at the claim', async () => {
    const socket = new PassThrough();
    const main = MainProcessStream.over(NO_CONTAINER, socket);
    socket.write(frame(2, 'agent ended 1\n'));
    await tick();
    const { attached } = claimed(main);
    await expect(attached?.ended).resolves.toEqual({ exitCode: 1 });
  });

  it('the stream ending (the container stopped) ends the claimed process with no code', async () => {
    const socket = new PassThrough();
    const main = MainProcessStream.over(NO_CONTAINER, socket);
    const { attached } = claimed(main);
    socket.end();
    socket.resume();
    await expect(attached?.ended).resolves.toEqual({ exitCode: null });
  });

  it('release lets an unclaimed stream go, and nothing can claim it after', () => {
    const socket = new PassThrough();
    const main = MainProcessStream.over(NO_CONTAINER, socket);
    main.release();
    expect(socket.destroyed).toBe(true);
    expect(main.claim({ onStdout: () => undefined, endedLine })).toBeUndefined();
  });
});
