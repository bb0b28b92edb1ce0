/**
 * How far two traces of one run agree, over the events gold derivation reads
 * (gold/derive.ts): file ops on the read and write axes, execs, and inet,
 * inet6 and unix connect/bind/sendto — each that succeeded, or was refused
 * (derive lists denials). Probes that failed (ENOENT along a search path) are
 * no need and are left out, as derive leaves them out. Pure.
 *
 * Normalised: an event is its kind, op, path(s) — a file event's real_path
 * too, which gold derivation reads (a read through a symlink is a read of its
 * target) — (or address and port) and outcome; pids, timestamps, order, flags spelling and argv are not compared
 * (strace cuts argv at 4096 bytes per string, the eBPF program at 199 and 24
 * arguments). The traces are compared as multisets: agreement is the matched
 * events over the events in either (Σ min ÷ Σ max of the per-key counts), and
 * every key whose counts differ is a difference, with both counts.
 */
import { FILE_OP_AXIS, renderEvent, type TraceEvent } from '../trace/index.ts';

export interface AgreementDifference {
  key: string;
  /** How often each trace has it. */
  a: number;
  b: number;
  /** One of the events, rendered, from the trace that has more. */
  example: string;
}

export interface Agreement {
  /** Σ min(a, b) ÷ Σ max(a, b) over the keys; 1 when both are empty. */
  rate: number;
  matched: number;
  /** Gold-relevant events in each trace. */
  totalA: number;
  totalB: number;
  differences: AgreementDifference[];
}

const NET_FAMILIES: ReadonlySet<string> = new Set(['inet', 'inet6', 'unix']);

function outcomeOf(e: { result: number | null; errno?: string | undefined }): string {
  return e.errno ?? (e.result === null ? '?' : 'ok');
}

function needs(e: { result: number | null; denied: boolean }): boolean {
  return e.result !== -1 || e.denied;
}

/** The normalised key of a gold-relevant event; undefined for every other event. */
export function goldRelevant(e: TraceEvent): string | undefined {
  switch (e.kind) {
    case 'file': {
      if (FILE_OP_AXIS[e.op] === undefined || !needs(e)) return undefined;
      return ['file', e.op, e.path, e.path2 ?? '', e.real_path ?? '', outcomeOf(e)].join(' ');
    }
    case 'exec':
      return needs(e) ? ['exec', e.path, outcomeOf(e)].join(' ') : undefined;
    case 'network':
      if (!NET_FAMILIES.has(e.family) || !needs(e)) return undefined;
      // An IP socket is gold (network.ip_sockets); a unix one is not (its connect is).
      if (e.op === 'socket') return e.family === 'inet' || e.family === 'inet6' ? ['network', 'socket', e.family, outcomeOf(e)].join(' ') : undefined;
      return ['network', e.op, e.family, e.address ?? '', e.port ?? '', outcomeOf(e)].join(' ');
    case 'process':
    case 'seccomp':
    case 'unparsed':
      return undefined;
  }
}

function tally(events: readonly TraceEvent[]): Map<string, { n: number; example: TraceEvent }> {
  const out = new Map<string, { n: number; example: TraceEvent }>();
  for (const e of events) {
    const key = goldRelevant(e);
    if (key === undefined) continue;
    const t = out.get(key);
    if (t === undefined) out.set(key, { n: 1, example: e });
    else t.n++;
  }
  return out;
}

export function compareTraces(a: readonly TraceEvent[], b: readonly TraceEvent[]): Agreement {
  const ta = tally(a);
  const tb = tally(b);
  let matched = 0;
  let union = 0;
  let totalA = 0;
  let totalB = 0;
  const differences: AgreementDifference[] = [];
  for (const key of new Set([...ta.keys(), ...tb.keys()])) {
    const x = ta.get(key);
    const y = tb.get(key);
    const na = x?.n ?? 0;
    const nb = y?.n ?? 0;
    totalA += na;
    totalB += nb;
    matched += Math.min(na, nb);
    union += Math.max(na, nb);
    if (na !== nb) {
      const example = (na > nb ? x : y)?.example;
      differences.push({ key, a: na, b: nb, example: example === undefined ? key : renderEvent(example) });
    }
  }
  differences.sort((p, q) => (p.key < q.key ? -1 : p.key > q.key ? 1 : 0));
  return { rate: union === 0 ? 1 : matched / union, matched, totalA, totalB, differences };
}
