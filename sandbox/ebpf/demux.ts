/**
 * A hub's output (native/ab-ebpf.c, `--hub`) split by cgroup. Pure: bytes
 * in, routed records out. The stream interleaves:
 * - `G ID`: the records after it, up to the next G, are cgroup ID's;
 * - `K <op>ID VALUE`: a command's acknowledgement (op `+`, `-`, `?` or `!`);
 * - `Y ts RING`: a readiness marker, of no cgroup (the host's own open), as
 *   it came through one of the hub's ring buffers (each gets a copy);
 * - every other record: the current cgroup's, as the single-container
 *   tracer prints it, so each cgroup's share is parsed by parse.ts as is.
 *
 * Every record starts with RS nonce US, and the container never learns the
 * nonce, so its bytes (paths, argv) cannot start a record. They can hold
 * `US \n` though, so a record is complete only once the next record starts —
 * except the demultiplexer's own G, K and Y records, whose type letter the
 * container cannot choose and whose fields are digits: one of those is
 * complete at its `US \n`, so a take that ends at a readiness marker gets
 * every record before it.
 */
import { FIELD_SEP, RECORD_START } from './program.ts';

export interface HubAck {
  op: '+' | '-' | '?' | '!';
  cgroupId: bigint;
  /** `-` and `?`: the events the ring buffer lost for the cgroup so far; `!`: the errno; `+`: the ring its records go to. */
  value: number;
}

export interface DemuxSink {
  /** `records` of a traced cgroup in a row, each whole, its RS nonce US start included. */
  record(cgroupId: bigint, bytes: Buffer, records: number): void;
  ack(ack: HubAck): void;
  /** A readiness marker: its kernel time, and the ring buffer its copy came through (0 without one). */
  ready(ns: bigint, ring: number): void;
  /** A record the demultiplexer could not read (kept for the report; never routed). */
  garbled(bytes: Buffer): void;
}

const SELF_RECORD = /^([GKY])\x1f([+!?-]?)(\d+)\x1f(?:(-?\d+)\x1f)?\n$/;
/** The type letters of the demultiplexer's own records (G, K, Y): any other record is a cgroup's. */
const OWN_TYPES = new Set([0x47, 0x4b, 0x59]);

export class HubDemux {
  readonly #marker: Buffer;
  readonly #sink: DemuxSink;
  #carry: Buffer = Buffer.alloc(0);
  /** The cgroup of the records now coming (undefined before the first G). */
  #current: bigint | undefined;

  constructor(nonce: string, sink: DemuxSink) {
    this.#marker = Buffer.from(`${RECORD_START}${nonce}${FIELD_SEP}`, 'latin1');
    this.#sink = sink;
  }

  push(chunk: Buffer): void {
    const data = this.#carry.length === 0 ? chunk : Buffer.concat([this.#carry, chunk]);
    let start = data.indexOf(this.#marker);
    if (start === -1) {
      // No record start yet: keep the tail that may be a marker's beginning.
      this.#carry = data.subarray(Math.max(0, data.length - this.#marker.length + 1));
      return;
    }
    if (start > 0) this.#sink.garbled(data.subarray(0, start));
    // The current cgroup's records in a row, handed over as one copy (a record at a time cost an
    // allocation and a string each: most of the hub's host CPU on a syscall-heavy command).
    let run = -1;
    let runRecords = 0;
    const flush = (end: number): void => {
      if (run === -1) return;
      if (this.#current !== undefined) this.#sink.record(this.#current, Buffer.from(data.subarray(run, end)), runRecords);
      run = -1;
      runRecords = 0;
    };
    for (;;) {
      const next = data.indexOf(this.#marker, start + this.#marker.length);
      if (next === -1) break;
      if (this.#current !== undefined && !OWN_TYPES.has(data[start + this.#marker.length] ?? 0)) {
        if (run === -1) run = start;
        runRecords++;
      } else {
        flush(start);
        this.#route(data.subarray(start, next));
      }
      start = next;
    }
    flush(start);
    const tail = data.subarray(start);
    if (this.#selfRecord(tail)) {
      this.#route(tail);
      this.#carry = Buffer.alloc(0);
    } else {
      this.#carry = Buffer.from(tail);
    }
  }

  /** The output ended: what is left is the last record. */
  end(): void {
    if (this.#carry.length > 0 && this.#carry.subarray(0, this.#marker.length).equals(this.#marker)) this.#route(this.#carry);
    else if (this.#carry.length > 0) this.#sink.garbled(this.#carry);
    this.#carry = Buffer.alloc(0);
  }

  #selfRecord(record: Buffer): boolean {
    return SELF_RECORD.test(record.subarray(this.#marker.length).toString('latin1'));
  }

  #route(record: Buffer): void {
    const body = record.subarray(this.#marker.length).toString('latin1');
    const self = SELF_RECORD.exec(body);
    if (self === null) {
      if (this.#current === undefined) this.#sink.garbled(record);
      else this.#sink.record(this.#current, Buffer.from(record), 1);
      return;
    }
    const [, type, op = '', digits = '0', value] = self;
    if (type === 'G' && op === '' && value === undefined) {
      this.#current = BigInt(digits);
    } else if (type === 'K' && op !== '' && value !== undefined) {
      this.#sink.ack({ op: op as HubAck['op'], cgroupId: BigInt(digits), value: Number(value) });
    } else if (type === 'Y' && op === '' && (value === undefined || /^\d+$/.test(value))) {
      this.#sink.ready(BigInt(digits), value === undefined ? 0 : Number(value));
    } else {
      this.#sink.garbled(record);
    }
  }
}
