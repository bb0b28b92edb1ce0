/**
 * The relay tunnel's frames (`ab-launch --forward PORT`, ab-forward.c, which mirrors the constants
 * here). Pure. A frame is  [u8 type][u32 BE connection id][u32 BE length][payload]  both ways:
 *   container → host: L listening (payload: the forwarder's pid), F could not listen (the reason),
 *     O accepted, D bytes from the client, E the client shut its sending side, K connection gone;
 *   host → container: D bytes for the client, E the relay finished its side, K drop it.
 */
import { AuthbenchError } from '../../core/index.ts';
import { LAUNCHER_PATH } from './argv.ts';

export const FORWARD_HEADER_BYTES = 9;
/** Payload per frame the host sends (the forwarder refuses frames past FORWARD_MAX_FRAME). */
export const FORWARD_CHUNK_BYTES = 65536;
export const FORWARD_MAX_FRAME = 1 << 20;

export const FORWARD_FRAME = {
  listening: 'L',
  failed: 'F',
  open: 'O',
  data: 'D',
  eof: 'E',
  kill: 'K',
} as const;

export type ForwardFrameType = (typeof FORWARD_FRAME)[keyof typeof FORWARD_FRAME];

export interface ForwardFrame {
  type: ForwardFrameType;
  id: number;
  payload: Buffer;
}

const TYPES: ReadonlySet<string> = new Set(Object.values(FORWARD_FRAME));

/** argv of the forwarder for one loopback port in the container. */
export function forwardArgv(port: number, launcher: string = LAUNCHER_PATH): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AuthbenchError('INVALID_ARGUMENT', `relay port ${String(port)} is not a TCP port (1-65535)`);
  }
  return [launcher, '--forward', String(port)];
}

export function encodeForwardFrame(type: ForwardFrameType, id: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  if (payload.length > FORWARD_MAX_FRAME) throw new AuthbenchError('INTERNAL', `relay tunnel frame of ${payload.length} bytes (most ${FORWARD_MAX_FRAME})`);
  const head = Buffer.alloc(FORWARD_HEADER_BYTES);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(id >>> 0, 1);
  head.writeUInt32BE(payload.length, 5);
  return Buffer.concat([head, payload]);
}

/** Data frames for any number of bytes, each at most FORWARD_CHUNK_BYTES. */
export function encodeForwardData(id: number, data: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += FORWARD_CHUNK_BYTES) out.push(encodeForwardFrame(FORWARD_FRAME.data, id, data.subarray(at, at + FORWARD_CHUNK_BYTES)));
  return out;
}

/**
 * Frames out of a byte stream cut anywhere: push each chunk, get the frames it completed. A frame
 * of an unknown type or past the size limit means the stream is not the forwarder's (Docker prints
 * "exec failed" as text on stdout): it throws, and the reader stays failed.
 */
export class ForwardFrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private failed: AuthbenchError | undefined;

  push(chunk: Buffer): ForwardFrame[] {
    if (this.failed !== undefined) throw this.failed;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: ForwardFrame[] = [];
    let at = 0;
    while (this.pending.length - at >= FORWARD_HEADER_BYTES) {
      const type = String.fromCharCode(this.pending[at] ?? 0);
      const id = this.pending.readUInt32BE(at + 1);
      const length = this.pending.readUInt32BE(at + 5);
      if (!TYPES.has(type) || length > FORWARD_MAX_FRAME) {
        this.failed = new AuthbenchError('RELAY_FORWARD_FAILED', 'the relay forwarder sent something that is not a frame', {
          details: [`its output began: ${this.pending.subarray(at, at + 80).toString('latin1').replace(/[^\x20-\x7e]+/g, ' ').trim()}`],
        });
        throw this.failed;
      }
      if (this.pending.length - at < FORWARD_HEADER_BYTES + length) break;
      frames.push({ type: type as ForwardFrameType, id, payload: Buffer.from(this.pending.subarray(at + FORWARD_HEADER_BYTES, at + FORWARD_HEADER_BYTES + length)) });
      at += FORWARD_HEADER_BYTES + length;
    }
    this.pending = this.pending.subarray(at);
    return frames;
  }
}
