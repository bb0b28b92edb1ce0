/**
 * Docker's multiplexed attach stream (no TTY): frames of an 8-byte header
 * [stream type, 0, 0, 0, uint32 BE length] followed by the payload.
 * Type 1 is stdout, 2 is stderr. Chunks may cut frames anywhere.
 *
 * Our own demuxer rather than docker-modem's demuxStream: it has no end-of-stream
 * semantics to work around and can be tested without a daemon.
 */
export type StreamKind = 'stdout' | 'stderr';

export class Demuxer {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly onFrame: (kind: StreamKind, payload: Buffer) => void;

  constructor(onFrame: (kind: StreamKind, payload: Buffer) => void) {
    this.onFrame = onFrame;
  }

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 8) {
      const type = this.buffer.readUInt8(0);
      const length = this.buffer.readUInt32BE(4);
      if (this.buffer.length < 8 + length) return;
      const payload = this.buffer.subarray(8, 8 + length);
      this.buffer = this.buffer.subarray(8 + length);
      // Type 0 (stdin echo) never carries process output; drop it.
      if (type === 1) this.onFrame('stdout', payload);
      else if (type === 2) this.onFrame('stderr', payload);
    }
  }

  /** Bytes of an incomplete frame left at end of stream (0 for a well-formed stream). */
  get pendingBytes(): number {
    return this.buffer.length;
  }
}

/** Collects one stream's bytes up to a cap, remembering whether anything was dropped. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly cap: number;
  truncated = false;

  constructor(cap: number) {
    this.cap = cap;
  }

  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (chunk.length > room) {
      this.truncated = true;
      if (room > 0) {
        this.chunks.push(chunk.subarray(0, room));
        this.size += room;
      }
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  toString(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
