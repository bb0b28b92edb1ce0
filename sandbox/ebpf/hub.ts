/**
 * One eBPF tracer for many containers: eval's `--tracer ebpf`. Starting
 * ab-ebpf per container costs seconds (attaching ~90 tracepoints, and each
 * detach waits out an RCU grace period: a second tracer waits ~3 s for the
 * previous one's), so an eval starts one hub (ab-ebpf `--hub`) and each
 * rollout adds its container's cgroup to it and removes it at the end —
 * a map update each way.
 *
 * Completeness works as in run.ts, with the hub's own readiness marker: this
 * process opens a path only it knows until a marker record comes back, and
 * the ring buffer orders records by when they were written, so once the
 * marker is read every record written before the open is read too. A
 * trace's take() does that and returns the events since its previous take;
 * calls still in flight stay in its parser until their return comes.
 *
 * The hub is shared by concurrent rollouts, and their containers are
 * hostile: what one container can do to another's trace is fill the ring
 * buffer. The kernel side counts what it lost per cgroup, and a trace's
 * close() returns its own count, so a flooded rollout's trace says it is
 * incomplete rather than looking complete.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import { HubDemux, type HubAck } from './demux.ts';
import { nativeArgs, NATIVE_STRING_LIMIT, readTracepointFormats } from './native.ts';
import { EbpfParser, type EbpfParse } from './parse.ts';
import { raiseTracerPriority, TRACER_NICE } from './priority.ts';
import { containerCgroup } from './run.ts';

/**
 * Record bytes a container's share holds between two takes (as strace's per-command trace cap):
 * beyond it records are dropped and counted as lost (the demultiplexer's run of records that would
 * cross it whole), so a container that floods cannot grow this
 * process without bound.
 */
export const HUB_SHARE_CAP_BYTES = 32 * 1024 * 1024;

export interface EbpfHubOptions {
  /** The ab-ebpf binary (ensureEbpfTracer's path). */
  abEbpf: string;
  /** Where cgroup v2 is mounted (judgeEbpf's verdict). */
  cgroup2Mount: string;
  /** How long attaching may take (default 60 s). */
  attachTimeoutMs?: number;
  /** Record bytes a share holds between takes (default HUB_SHARE_CAP_BYTES). */
  shareCapBytes?: number;
  /** The nice ab-ebpf reads at (default TRACER_NICE; null: leave it at this process's, as the bench's comparison does). */
  readerNice?: number | null;
}

/** One container's share of the hub. */
export interface HubTrace {
  readonly cgroupId: bigint;
  /**
   * The events written since the previous take (all of them: it waits for a readiness marker);
   * `lost`: events the ring buffer dropped for this container since the previous take (the
   * events are incomplete when > 0). `pause`: stop tracing first (as pause()), in the same round
   * trip that reads the loss count — what the session does after a command when nothing of the
   * agent's runs on.
   */
  take(options?: { pause?: boolean }): Promise<HubTake>;
  /**
   * Stop tracing the container for now (nothing of a command's runs in it: the session agent's
   * listings and the validators need no trace), and start again. The share and its parse stay.
   */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Take the rest and stop tracing the cgroup. */
  close(): Promise<HubTake>;
  /**
   * What every take so far read: its record bytes (kept only when traced with `keepRaw`; the
   * gold's raw trace artifact) and the events lost over all of them.
   */
  taken(): { raw: Buffer; lost: number };
}

/** A take: its events, what was lost since the previous one, and the record bytes it read. */
export type HubTake = EbpfParse & { bytes: number };

const POLL_MS = 10;
const DRAIN_TIMEOUT_MS = 10_000;
const ACK_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 10_000;

interface Share {
  chunks: Buffer[];
  /** Bytes in chunks; records beyond the cap are counted in `dropped`, not kept. */
  bytes: number;
  dropped: number;
  parser: EbpfParser;
}

async function touch(path: string): Promise<void> {
  // The open is the signal (the kernel side sees it); the path never exists.
  await open(path, 'r').then(
    (h) => h.close(),
    () => undefined,
  );
}

/** What ab-ebpf says on stderr when the kernel refused its resolved-path walk (native/ab-ebpf.c). */
const UNRESOLVED_PATHS = 'ab-ebpf: resolved paths are not recorded';

export class EbpfHub implements AsyncDisposable {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #nonce: string;
  readonly #readyPath: string;
  readonly #shares = new Map<bigint, Share>();
  /** Waiters for acknowledgements: ab-ebpf runs commands in order and acknowledges each in turn. */
  readonly #acks: ((ack: HubAck) => void)[] = [];
  /**
   * Per ring buffer, the kernel time (CLOCK_MONOTONIC, bpf_ktime_get_ns) of the latest marker copy
   * read through it; absent before the first. A take accepts only a marker made after it began: a
   * marker of an earlier take's extra open (its first one was slow, so it opened again) proves
   * nothing about records written since.
   */
  readonly #markerNs = new Map<number, bigint>();
  #markersSeen = false;
  /** Takes waiting for the next marker: woken as it is read, not on the next poll. */
  readonly #readyWaiters = new Set<() => void>();
  /** Unix seconds minus kernel boot seconds, from the first marker (events carry kernel time). */
  #offsetS = 0;
  #stderr = '';
  #exited: string | undefined;
  readonly #outputClosed: Promise<unknown>;
  readonly #exit: Promise<void>;
  /** Garbled output (should never happen: kept for the error that reports it). */
  #garbled = 0;
  #stopping: Promise<string> | undefined;
  readonly #shareCap: number;
  #readerNice: number | undefined;
  readonly #cgroup2Mount: string;

  private constructor(child: ChildProcessWithoutNullStreams, nonce: string, readyPath: string, shareCap: number, cgroup2Mount: string) {
    this.#child = child;
    this.#cgroup2Mount = cgroup2Mount;
    this.#shareCap = shareCap;
    this.#nonce = nonce;
    this.#readyPath = readyPath;
    const demux = new HubDemux(nonce, {
      record: (cgroupId, bytes, records) => {
        const share = this.#shares.get(cgroupId);
        if (share === undefined) return;
        // A run of records that would cross the cap is dropped whole (at most one pipe read's
        // worth), each of its records counted.
        if (share.bytes + bytes.length > this.#shareCap) {
          share.dropped += records;
          return;
        }
        share.bytes += bytes.length;
        share.chunks.push(bytes);
      },
      ack: (ack) => this.#acks.shift()?.(ack),
      ready: (ns, ring) => {
        if (!this.#markersSeen) this.#offsetS = Date.now() / 1000 - Number(ns) / 1e9;
        this.#markersSeen = true;
        if (ns > (this.#markerNs.get(ring) ?? -1n)) this.#markerNs.set(ring, ns);
        for (const wake of [...this.#readyWaiters]) wake();
      },
      garbled: () => void this.#garbled++,
    });
    child.stdout.on('data', (chunk: Buffer) => demux.push(chunk));
    child.stdout.on('end', () => demux.end());
    // A write after ab-ebpf died: the waiting command fails on the exit instead.
    child.stdin.on('error', () => undefined);
    child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr += chunk.toString('utf8');
    });
    this.#exit = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.#exited = String(code ?? signal);
        resolve();
      });
      child.on('error', (error) => {
        this.#stderr += `\n${error.message}`;
        this.#exited = 'spawn failed';
        resolve();
      });
    });
    this.#outputClosed = Promise.all([new Promise((r) => child.stdout.on('close', r)), new Promise((r) => child.stderr.on('close', r))]);
  }

  /** Start ab-ebpf as a hub and wait until every probe is attached. */
  static async start(options: EbpfHubOptions): Promise<EbpfHub> {
    const nonce = randomBytes(12).toString('hex');
    const readyPath = join(tmpdir(), `authbench-ebpf-hub-${nonce}`);
    const args = nativeArgs({ cgroupId: 'hub', nonce, readyPid: process.pid, readyPath, ...(await readTracepointFormats()) });
    // Nothing of this process's environment: ab-ebpf runs as root and needs none.
    const child = spawn(options.abEbpf, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
    const hub = new EbpfHub(child, nonce, readyPath, options.shareCapBytes ?? HUB_SHARE_CAP_BYTES, options.cgroup2Mount);
    // Raised before its probes attach: from the first traced record on, the reader outranks the tracees.
    if (options.readerNice !== null) hub.#readerNice = raiseTracerPriority(child.pid, options.readerNice ?? TRACER_NICE);
    try {
      await hub.#waitMarker(0n, options.attachTimeoutMs ?? 60_000, 'attached', [0]);
    } catch (error) {
      await hub.stop();
      throw error;
    }
    return hub;
  }

  #failure(what: string): AuthbenchError {
    return new AuthbenchError('TRACER_UNAVAILABLE', `the eBPF hub (ab-ebpf) ${what}`, { details: this.#stderr.trim().split('\n').slice(-15) });
  }

  /**
   * Open the readiness path until a marker made at or after kernel time `since` came back through
   * each of `rings` (the same clock as process.hrtime: an open after `since` makes a marker
   * stamped after it). Each ring's copy comes after every record written to that ring before the
   * open; a ring a flood keeps full delays only the takes of the cgroups writing to it.
   */
  async #waitMarker(since: bigint, timeoutMs: number, what: string, rings: readonly number[]): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (rings.some((ring) => (this.#markerNs.get(ring) ?? -1n) < since)) {
      if (this.#exited !== undefined) throw this.#failure(`exited (${this.#exited}) before it ${what}`);
      if (Date.now() > deadline) throw this.#failure(`had not ${what} after ${timeoutMs} ms`);
      // Back as soon as a marker is read (a take costs a round trip, not a poll period); the
      // period only re-opens the path when a marker never came (the open was not seen). The
      // waiter is in place before the open, so a marker read meanwhile still wakes it.
      const woken = new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.#readyWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, POLL_MS);
        this.#readyWaiters.add(wake);
      });
      await touch(this.#readyPath);
      await woken;
    }
  }

  /** `+ID:LEVEL` (pidLevel given), `-ID` or `?ID`. */
  async #command(op: '+' | '-' | '?', cgroupId: bigint, pidLevel?: number): Promise<HubAck> {
    if (this.#exited !== undefined || this.#stopping !== undefined) throw this.#failure(`is gone (${this.#exited ?? 'stopping'})`);
    const ack = new Promise<HubAck>((resolve, reject) => {
      let settled = false;
      const settle = (run: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        run();
      };
      // A missed acknowledgement would shift every later one onto the wrong waiter: the hub is broken then.
      const timer = setTimeout(
        () =>
          settle(() => {
            this.#child.kill('SIGKILL');
            reject(this.#failure(`did not acknowledge ${op}${cgroupId} within ${ACK_TIMEOUT_MS} ms (stopped: a late one would answer the next command)`));
          }),
        ACK_TIMEOUT_MS,
      );
      this.#acks.push((a) =>
        settle(() => (a.cgroupId === cgroupId ? resolve(a) : reject(new AuthbenchError('INTERNAL', `eBPF hub: acknowledgement for cgroup ${a.cgroupId} where ${op}${cgroupId} was waiting`)))),
      );
      void this.#exit.then(() => settle(() => reject(this.#failure(`exited (${this.#exited}) before it acknowledged ${op}${cgroupId}`))));
    });
    this.#child.stdin.write(`${op}${cgroupId}${pidLevel === undefined ? '' : `:${pidLevel}`}\n`);
    return ack;
  }

  /**
   * Trace a running container from now on: its first syscall after this resolves is in the trace.
   * `paused`: join without tracing yet (resume() starts it). `keepRaw`: keep every take's record
   * bytes for taken() (gen-gold stores them as the gold's raw trace).
   */
  async trace(containerId: string, options: { paused?: boolean; keepRaw?: boolean } = {}): Promise<HubTrace> {
    const { id: cgroupId, pidLevel } = await containerCgroup(this.#cgroup2Mount, containerId);
    if (this.#shares.has(cgroupId)) throw new AuthbenchError('INTERNAL', `eBPF hub: container ${containerId.slice(0, 12)} is traced already`);
    const share: Share = { chunks: [], bytes: 0, dropped: 0, parser: new EbpfParser({ nonce: this.#nonce, stringLimit: NATIVE_STRING_LIMIT }) };
    this.#shares.set(cgroupId, share);
    const lostOf = (ack: HubAck): number => {
      if (ack.op === '!') throw this.#failure(`refused ${cgroupId}'s command (errno ${ack.value})`);
      return ack.value;
    };
    /** Whether the kernel traces it now, and what it lost in earlier traced stretches (each starts at 0). */
    let active = false;
    let lostBefore = 0;
    /** The ring its records go to while traced, and every ring they went to since the last take. */
    let ring = 0;
    let ringsSinceTake = new Set<number>();
    const resume = async (): Promise<void> => {
      if (active) return;
      const added = await this.#command('+', cgroupId, pidLevel);
      lostOf(added);
      ring = added.value;
      ringsSinceTake.add(ring);
      active = true;
    };
    const pause = async (): Promise<void> => {
      if (!active) return;
      active = false;
      lostBefore += lostOf(await this.#command('-', cgroupId));
    };
    if (options.paused !== true) {
      await resume().catch((error: unknown) => {
        this.#shares.delete(cgroupId);
        throw error;
      });
    }
    let closed = false;
    let lostSoFar = 0;
    const raw: Buffer[] = [];
    let lostTaken = 0;
    /** The cgroup's loss so far over every traced stretch (a stretch's count read once the marker is in: never too few). */
    const lostNow = async (): Promise<number> => lostBefore + (active ? lostOf(await this.#command('?', cgroupId)) : 0);
    const take = async (final: boolean): Promise<HubTake> => {
      // Paused first (its acknowledgement carries the stretch's loss, so no `?` is needed): the
      // marker below still comes after every record the cgroup wrote before the removal.
      if (final) await pause();
      // Not traced since the last take: nothing of it can be in a ring.
      const rings = [...ringsSinceTake];
      if (rings.length > 0) await this.#waitMarker(process.hrtime.bigint(), DRAIN_TIMEOUT_MS, 'drained', rings);
      ringsSinceTake = active ? new Set([ring]) : new Set();
      const lost = await lostNow();
      const bytes = Buffer.concat(share.chunks);
      const dropped = share.dropped;
      share.chunks = [];
      share.bytes = 0;
      share.dropped = 0;
      const parsed = share.parser.parse(bytes, { final });
      const events = parsed.events.map((e) => (e.ts === undefined ? e : { ...e, ts: e.ts + this.#offsetS }));
      const fresh = Math.max(0, lost - lostSoFar);
      lostSoFar = Math.max(lostSoFar, lost);
      if (options.keepRaw === true) raw.push(bytes);
      lostTaken += fresh + dropped;
      // A record dropped here is lost as surely as one the kernel could not write.
      return { events, lost: fresh + dropped, bytes: bytes.length };
    };
    const open = (what: string): void => {
      if (closed) throw new AuthbenchError('INTERNAL', `eBPF hub: ${what} after close()`);
    };
    return {
      cgroupId,
      take: async (options) => {
        open('take()');
        if (options?.pause === true) await pause();
        return take(false);
      },
      pause: () => {
        open('pause()');
        return pause();
      },
      resume: () => {
        open('resume()');
        return resume();
      },
      close: async () => {
        open('close()');
        closed = true;
        try {
          // Records the cgroup wrote before its removal came before the marker (take pauses first).
          return await take(true);
        } finally {
          this.#shares.delete(cgroupId);
        }
      },
      taken: () => ({ raw: Buffer.concat(raw), lost: lostTaken }),
    };
  }

  /** The nice ab-ebpf reads at, when raised (priority.ts); undefined: left as it was, or the kernel refused. */
  get readerNice(): number | undefined {
    return this.#readerNice;
  }

  /**
   * Whether the kernel took ab-ebpf's resolved-path walk (real_path of opens, as strace's `-y`):
   * false when it refused it and ab-ebpf loaded without it, saying so on stderr before attaching.
   */
  get resolvesPaths(): boolean {
    return !this.#stderr.includes(UNRESOLVED_PATHS);
  }

  /** The tracer's pid (a test stops it to fill its buffer). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Kill the tracer now (an aborted run): every open trace fails as the tracer's failure. */
  kill(): void {
    this.#child.kill('SIGKILL');
  }

  /** Traces now open (rollouts in flight). */
  get open(): number {
    return this.#shares.size;
  }

  /** End the hub: its stdin closes, it drains and detaches. Resolves with its stderr. */
  stop(): Promise<string> {
    this.#stopping ??= (async () => {
      if (this.#exited === undefined) {
        this.#child.stdin.end();
        const timer = setTimeout(() => this.#child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
        timer.unref();
        void this.#exit.then(() => clearTimeout(timer));
        // The trace is complete once the output closes; detaching (seconds) need not be waited for.
        await Promise.race([this.#exit, this.#outputClosed]);
      }
      return this.#stderr;
    })();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
