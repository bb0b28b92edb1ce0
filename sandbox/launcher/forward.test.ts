import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  encodeForwardData,
  encodeForwardFrame,
  FORWARD_CHUNK_BYTES,
  FORWARD_FRAME,
  FORWARD_HEADER_BYTES,
  FORWARD_MAX_FRAME,
  forwardArgv,
  ForwardFrameReader,
} from './forward.ts';

describe('relay tunnel frames', () => {
  it('encodes type, big-endian id and length, then the payload', () => {
    const frame = encodeForwardFrame(FORWARD_FRAME.data, 0x01020304, Buffer.from('hi'));
    expect([...frame]).toEqual([0x44, 1, 2, 3, 4, 0, 0, 0, 2, 0x68, 0x69]);
  });

  it('reads frames back from a stream cut at every byte', () => {
    const frames = [
      encodeForwardFrame(FORWARD_FRAME.listening, 0, Buffer.from('42')),
      encodeForwardFrame(FORWARD_FRAME.open, 7),
      encodeForwardFrame(FORWARD_FRAME.data, 7, Buffer.from('POST / HTTP/1.1\r\n')),
      encodeForwardFrame(FORWARD_FRAME.eof, 7),
      encodeForwardFrame(FORWARD_FRAME.kill, 0xffffffff),
    ];
    const stream = Buffer.concat(frames);
    for (const cut of [1, 2, 5, FORWARD_HEADER_BYTES, 13]) {
      const reader = new ForwardFrameReader();
      const got = [];
      for (let at = 0; at < stream.length; at += cut) got.push(...reader.push(stream.subarray(at, at + cut)));
      expect(got.map((f) => [f.type, f.id, f.payload.toString()])).toEqual([
        ['L', 0, '42'],
        ['O', 7, ''],
        ['D', 7, 'POST / HTTP/1.1\r\n'],
        ['E', 7, ''],
        ['K', 0xffffffff, ''],
      ]);
    }
  });

  it('splits data into chunks the forwarder accepts', () => {
    const data = Buffer.alloc(FORWARD_CHUNK_BYTES * 2 + 5, 0x61);
    const frames = encodeForwardData(3, data);
    expect(frames.map((f) => f.length - FORWARD_HEADER_BYTES)).toEqual([FORWARD_CHUNK_BYTES, FORWARD_CHUNK_BYTES, 5]);
    const reader = new ForwardFrameReader();
    expect(Buffer.concat(reader.push(Buffer.concat(frames)).map((f) => f.payload)).equals(data)).toBe(true);
    expect(encodeForwardData(3, Buffer.alloc(0))).toEqual([]);
  });

  it('refuses a stream that is not the forwarder\'s, and stays refused', () => {
    const reader = new ForwardFrameReader();
    const text = Buffer.from('OCI runtime exec failed: exec failed: no such file or directory');
    expect(() => reader.push(text)).toThrow(/not a frame/);
    expect(() => reader.push(encodeForwardFrame(FORWARD_FRAME.open, 1))).toThrow(/not a frame/);
    const oversized = Buffer.alloc(FORWARD_HEADER_BYTES);
    oversized.write('D', 0, 'latin1');
    oversized.writeUInt32BE(FORWARD_MAX_FRAME + 1, 5);
    expect(() => new ForwardFrameReader().push(oversized)).toThrow(expect.objectContaining({ code: 'RELAY_FORWARD_FAILED' }));
  });

  it('builds the forwarder argv only for a TCP port', () => {
    expect(forwardArgv(7861, '/x/ab-launch')).toEqual(['/x/ab-launch', '--forward', '7861']);
    for (const bad of [0, 65536, 1.5, -1, Number.NaN]) expect(() => forwardArgv(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('matches the constants of ab-forward.c', () => {
    const source = readFileSync(new URL('./ab-forward.c', import.meta.url), 'utf8');
    const define = (name: string): string | undefined => new RegExp(`#define ${name} (.+)`).exec(source)?.[1]?.trim();
    expect(define('HEADER_BYTES')).toBe(String(FORWARD_HEADER_BYTES));
    expect(define('CHUNK')).toBe(String(FORWARD_CHUNK_BYTES));
    expect(define('MAX_FRAME')).toBe('(1u << 20)');
    expect(FORWARD_MAX_FRAME).toBe(1 << 20);
    for (const type of Object.values(FORWARD_FRAME)) expect(source).toContain(`'${type}'`);
  });
});
