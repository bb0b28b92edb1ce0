import { describe, expect, it } from 'vitest';
import { HubDemux, type HubAck } from './demux.ts';

const NONCE = 'abcdef0123456789';
const RS = '\x1e';
const US = '\x1f';
const MARKER = `${RS}${NONCE}${US}`;
const rec = (body: string) => `${MARKER}${body}${US}\n`;

function run(chunks: readonly Buffer[]) {
  const records: [string, string][] = [];
  const acks: HubAck[] = [];
  const ready: bigint[] = [];
  const rings: number[] = [];
  const garbled: string[] = [];
  const demux = new HubDemux(NONCE, {
    // A run of records arrives as one buffer: split back into records (no record's bytes hold the marker).
    record: (cg, bytes, count) => {
      const parts = bytes.toString('latin1').split(MARKER).slice(1);
      expect(bytes.toString('latin1').startsWith(MARKER)).toBe(true);
      expect(parts).toHaveLength(count);
      for (const p of parts) records.push([cg.toString(), MARKER + p]);
    },
    ack: (a) => acks.push(a),
    ready: (ns, ring) => {
      ready.push(ns);
      rings.push(ring);
    },
    garbled: (b) => garbled.push(b.toString('latin1')),
  });
  for (const c of chunks) demux.push(c);
  const beforeEnd = records.length;
  demux.end();
  return { records, acks, ready, rings, garbled, beforeEnd };
}

// A container's path may hold US \n and a lone RS: neither starts or ends a record.
const hostilePath = `/tmp/x${US}\ny${RS}z`;
const STREAM = [
  rec(`K${US}+41${US}0`),
  rec(`G${US}41`),
  rec(`S${US}100${US}7${US}7${US}openat${US}-100${US}0${US}0${US}${hostilePath}`),
  rec(`R${US}101${US}7${US}7${US}openat${US}3`),
  rec(`G${US}42`),
  rec(`S${US}102${US}8${US}8${US}unlink${US}/b`),
  rec(`Y${US}103`),
  rec(`Y${US}103${US}5`),
  rec(`G${US}41`),
  rec(`F${US}104${US}7${US}7${US}9`),
  rec(`K${US}?41${US}3`),
  rec(`K${US}-41${US}5`),
  rec(`K${US}!42${US}2`),
].join('');

describe('HubDemux', () => {
  it('routes records by the last G, and reads acknowledgements and markers of no cgroup', () => {
    const r = run([Buffer.from(STREAM, 'latin1')]);
    expect(r.records.map(([cg, body]) => `${cg}:${body.slice(NONCE.length + 2, NONCE.length + 3)}`)).toEqual(['41:S', '41:R', '42:S', '41:F']);
    expect(r.records[0]?.[1]).toContain(hostilePath);
    expect(r.acks).toEqual([
      { op: '+', cgroupId: 41n, value: 0 },
      { op: '?', cgroupId: 41n, value: 3 },
      { op: '-', cgroupId: 41n, value: 5 },
      { op: '!', cgroupId: 42n, value: 2 },
    ]);
    // A single container's marker has no ring (0); a hub's copy says which ring it came through.
    expect(r.ready).toEqual([103n, 103n]);
    expect(r.rings).toEqual([0, 5]);
    expect(r.garbled).toEqual([]);
  });

  it('gives the same result however the output is cut into chunks', () => {
    const bytes = Buffer.from(STREAM, 'latin1');
    const whole = run([bytes]);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(run([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(whole);
    }
    expect(run([...bytes].map((b) => Buffer.from([b])))).toEqual(whole);
  });

  it('hands a marker over as soon as it is whole, with every record before it', () => {
    const upToMarker = [rec(`G${US}41`), rec(`S${US}1${US}7${US}7${US}unlink${US}/a${US}\n`), rec(`Y${US}2`)].join('');
    const r = run([Buffer.from(upToMarker, 'latin1')]);
    expect(r.ready).toEqual([2n]);
    expect(r.beforeEnd).toBe(1);
  });

  it('keeps a container record open until the next record starts (its bytes may end in US \\n)', () => {
    const r = run([Buffer.from(rec(`G${US}41`) + rec(`S${US}1${US}7${US}7${US}unlink${US}/a`), 'latin1')]);
    expect(r.beforeEnd).toBe(0);
    expect(r.records).toHaveLength(1);
  });

  it('never routes what it cannot attribute: bytes before any record, records before any G, a malformed own record', () => {
    const r = run([Buffer.from(`noise${rec(`S${US}1${US}7${US}7${US}unlink${US}/a`)}${rec(`K${US}41${US}0`)}${rec(`G${US}41`)}`, 'latin1')]);
    expect(r.records).toEqual([]);
    expect(r.garbled).toHaveLength(3);
  });

  it("hands a cgroup's records in a row over as one run, broken by every record of its own", () => {
    const runs: [bigint, number][] = [];
    const demux = new HubDemux(NONCE, { record: (cg, _b, count) => runs.push([cg, count]), ack: () => undefined, ready: () => undefined, garbled: () => undefined });
    const unlink = (n: number) => rec(`S${US}${n}${US}7${US}7${US}unlink${US}/a${n}`);
    demux.push(Buffer.from([rec(`G${US}41`), unlink(1), unlink(2), unlink(3), rec(`K${US}?41${US}0`), unlink(4), rec(`G${US}42`), unlink(5), unlink(6), rec(`Y${US}9`)].join(''), 'latin1'));
    // 1-3 before the ack, 4 before the G, 5-6 before the marker (complete at once: the marker ends the chunk).
    expect(runs).toEqual([
      [41n, 3],
      [41n, 1],
      [42n, 2],
    ]);
  });
});

