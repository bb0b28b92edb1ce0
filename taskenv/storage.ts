/**
 * A task container's storage limit (task.toml `[environment] storage_mb`, Harbor's `storage`),
 * enforced by the harness against an agent that writes until the host's disk is full — which
 * would fail every other rollout on the machine as an infrastructure error the agent caused.
 *
 * Docker's own quota (`--storage-opt size`) needs overlay2 on xfs with project quotas, which
 * neither these machines nor most laptops have, so the host measures the container's writable
 * layer while the agent acts: its overlay2 upper dir, walked from the host (blocks actually
 * allocated, hard links once, every inode counted) when this process can read it — a local
 * engine, run as root — else the daemon's own `SizeRw` (apparent bytes, no inode count). Once
 * the layer is over the limit the guard calls `onExceeded` once (the rollout has the session
 * agent stop everything of the agent's: SandboxSession.cut) and the episode ends
 * `storage_limit`. What a poll cannot catch is kept out in the launcher: `fallocate` is refused
 * (it reserves gigabytes in microseconds; writes are what remain, at the disk's speed) and no
 * file may outgrow the whole limit (RLIMIT_FSIZE). So the overshoot is what the container
 * writes in one poll interval.
 */
import { lstat, opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import type { Container } from '../docker/index.ts';
import type { SandboxSession } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import { taskLimits } from './container.ts';

/** What a task container may hold in its writable layer. */
export interface StorageLimit {
  bytes: number;
  /** Inodes (files, directories, links): millions of empty files exhaust a disk as surely as bytes. */
  files: number;
}

/** The inodes a limit of `mb` allows: far above any build or install a task makes (a large node_modules is ~100k). */
export function storageFilesLimit(mb: number): number {
  return Math.max(100_000, Math.round(mb * 100));
}

export interface StorageUsage {
  bytes: number;
  files: number;
  /** The walk stopped early, past the limit: the counts are a lower bound. */
  partial: boolean;
}

/** How the layer is measured: the host's walk of the upper dir, the daemon's SizeRw, or not at all. */
export type StorageMethod = 'layer-walk' | 'daemon' | 'none';

/** Stat calls in flight per directory (the thread pool has four threads by default). */
const WALK_BATCH = 64;

/**
 * The blocks and inodes under `dir` (lstat: links are not followed; a hard-linked file counts
 * once), stopping as soon as either passes `stopPast`. Entries that vanish mid-walk are skipped;
 * any other error (no permission) throws.
 */
export async function measureLayerDir(dir: string, stopPast: StorageLimit): Promise<StorageUsage> {
  let bytes = 0;
  let files = 0;
  const seen = new Set<bigint>();
  const dirs = [dir];
  const over = (): boolean => bytes > stopPast.bytes || files > stopPast.files;
  while (dirs.length > 0) {
    const current = dirs.pop() as string;
    let handle;
    try {
      handle = await opendir(current, { bufferSize: 256 });
    } catch (e) {
      if (current !== dir && (e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      const stats = await Promise.all(batch.map((p) => lstat(p, { bigint: true }).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)))));
      for (const [i, st] of stats.entries()) {
        if (st === undefined) continue;
        if (st.isDirectory()) dirs.push(batch[i] as string);
        else if (st.nlink > 1n) {
          if (seen.has(st.ino)) continue;
          seen.add(st.ino);
        }
        files += 1;
        bytes += Number(st.blocks) * 512;
      }
      batch = [];
    };
    try {
      for await (const entry of handle) {
        batch.push(join(current, entry.name));
        if (batch.length >= WALK_BATCH) {
          await flush();
          if (over()) return { bytes, files, partial: true };
        }
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await flush();
    if (over()) return { bytes, files, partial: dirs.length > 0 };
  }
  return { bytes, files, partial: false };
}

/**
 * The same counts by `du` in a child process: C, off Node's one thread, about eight times faster
 * (100,000 entries: ~0.25 s a pass here, ~2 s of Node's CPU walked above); it cannot stop early.
 * undefined when there is no `du` on the host.
 */
export async function measureLayerDu(dir: string): Promise<StorageUsage | undefined> {
  // -x: this filesystem only; symlinks are not followed and a hard-linked file counts once (du's defaults).
  const run = (flags: readonly string[]) => execa('du', ['-s', '-x', ...flags, '--', dir], { reject: false, stripFinalNewline: true });
  const [bytes, inodes] = await Promise.all([run(['-B1']), run(['--inodes'])]);
  if ([bytes, inodes].some((r) => (r as { code?: string }).code === 'ENOENT')) return undefined;
  const count = (r: { exitCode?: number; stdout: string; stderr: string }, what: string): number => {
    const n = /^(\d+)\t/.exec(r.stdout)?.[1];
    if (r.exitCode !== 0 || n === undefined) throw new Error(`du ${what} of ${dir}: exit ${String(r.exitCode)}: ${r.stderr.trim() || r.stdout.trim()}`);
    return Number(n);
  };
  // du counts the directory itself; the walk counts what is below it.
  return { bytes: count(bytes, 'bytes'), files: Math.max(0, count(inodes, 'inodes') - 1), partial: false };
}

/** Past this many inodes a layer is measured by du (measureLayerDu) rather than walked in-process. */
export const LARGE_LAYER_FILES = 5000;

export const StorageRecordSchema = z
  .object({
    limit_mb: z.number().positive().describe("The task's storage limit (task.toml storage_mb / storage; default 10240)"),
    limit_files: z.number().int().positive().describe('Inodes the writable layer may hold'),
    method: z
      .enum(['layer-walk', 'daemon', 'none'])
      .describe("layer-walk: the host walked the container's upper dir (blocks, inodes); daemon: Docker's SizeRw (apparent bytes); none: not measured"),
    unmeasured: z.string().optional().describe('What was not measured, and why: the layer (when it could not be walked) or writable volumes the method cannot see'),
    peak_mb: z.number().nonnegative().describe('The most the writable layer held at a measurement'),
    peak_files: z.number().int().nonnegative().nullable().describe('Its inodes then (null: the method cannot count them)'),
    exceeded: z.boolean().describe("The layer went over the limit: the agent's processes were stopped and the episode ended storage_limit"),
  })
  .describe("The container's storage limit and how much of it the rollout used");
export type StorageRecord = z.infer<typeof StorageRecordSchema>;

export interface StorageGuardOptions {
  /** Between measurements, at least (default 200 ms walking, 2 s asking the daemon). */
  intervalMs?: number;
  /** Called once, when a measurement first finds the layer over the limit. */
  onExceeded: (usage: StorageUsage) => Promise<unknown>;
  /** Inodes past which the layer is measured by du (default LARGE_LAYER_FILES). */
  largeLayerFiles?: number;
}

/** What took a measurement: the in-process walk, du, or the daemon. */
export type MeasuredBy = 'walk' | 'du' | 'daemon';
type Meter = (limit: StorageLimit) => Promise<StorageUsage & { by: MeasuredBy }>;

/** One directory's meter: walked in-process while small (a measurement every 200 ms costs ~1 ms), by du once large. */
function dirMeter(dir: string, largeFiles: number): Meter {
  let last = 0;
  let du = true;
  return async (l) => {
    if (du && last > largeFiles) {
      const usage = await measureLayerDu(dir);
      if (usage !== undefined) {
        last = usage.files;
        return { ...usage, by: 'du' };
      }
      du = false; // no du on this host: the walk it is
    }
    const usage = await measureLayerDir(dir, l);
    last = usage.files;
    return { ...usage, by: 'walk' };
  };
}

/**
 * Watches one container's writable layer against its limit: a measurement at `start`, then one
 * every interval (stretched to four times the last measurement's own duration, so a huge layer
 * costs the host at most a fifth of a thread), and one whenever `check` is called (the episode
 * calls it after each command).
 */
export class StorageGuard {
  readonly limit: StorageLimit;
  readonly method: StorageMethod;
  private readonly meter: Meter | undefined;
  private readonly unmeasured: string | undefined;
  private readonly options: StorageGuardOptions;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private peak: { bytes: number; files: number | null } = { bytes: 0, files: 0 };
  private over: StorageUsage | undefined;
  private reaction: Promise<unknown> | undefined;
  /** Measurements that failed (a daemon that did not answer); the next interval tries again. */
  failures = 0;
  /** What took the last measurement. */
  lastMeasuredBy: MeasuredBy | undefined;

  private constructor(limit: StorageLimit, method: StorageMethod, meter: Meter | undefined, unmeasured: string | undefined, options: StorageGuardOptions) {
    this.limit = limit;
    this.method = method;
    this.meter = meter;
    this.unmeasured = unmeasured;
    this.options = options;
    this.intervalMs = options.intervalMs ?? (method === 'daemon' ? 2000 : 200);
    if (method === 'daemon') this.peak = { bytes: 0, files: null };
  }

  /**
   * Picks the method this container allows, measures once and starts polling. The walk counts the
   * container's writable volumes with its layer (an image's `VOLUME` is one a command may fill).
   */
  static async start(container: Pick<Container, 'writableLayerDir' | 'writableLayerBytes' | 'writableVolumes'>, limit: StorageLimit, options: StorageGuardOptions): Promise<StorageGuard> {
    const dir = await container.writableLayerDir?.();
    const volumes = (await container.writableVolumes?.()) ?? [];
    const elsewhere = volumes.filter((v) => v.dir === undefined).map((v) => v.target);
    let why = container.writableLayerBytes === undefined ? 'the engine reports no writable layer' : undefined;
    if (dir !== undefined) {
      const meters = [dir, ...volumes.flatMap((v) => (v.dir === undefined ? [] : [v.dir]))].map((d) => dirMeter(d, options.largeLayerFiles ?? LARGE_LAYER_FILES));
      // The dirs in turn, each against what the others left of the limit, stopping once over it.
      const walk: Meter = async (l) => {
        const total: StorageUsage & { by: MeasuredBy } = { bytes: 0, files: 0, partial: false, by: 'walk' };
        for (const [i, meter] of meters.entries()) {
          const usage = await meter({ bytes: Math.max(0, l.bytes - total.bytes), files: Math.max(0, l.files - total.files) });
          total.bytes += usage.bytes;
          total.files += usage.files;
          if (usage.by === 'du') total.by = 'du';
          if (total.bytes > l.bytes || total.files > l.files) return { ...total, partial: usage.partial || i < meters.length - 1 };
          total.partial ||= usage.partial;
        }
        return total;
      };
      try {
        await walk(limit);
        const unwalked = elsewhere.length === 0 ? undefined : `writable volumes kept off this host's disk (another driver): ${elsewhere.join(', ')}`;
        return await new StorageGuard(limit, 'layer-walk', walk, unwalked, options).begin();
      } catch (e) {
        why = `the layer ${(e as NodeJS.ErrnoException).code ?? 'is unreadable'} here`;
      }
    }
    const bytes = container.writableLayerBytes?.bind(container);
    if (bytes !== undefined) {
      // SizeRw is the layer's alone.
      const unseen = volumes.length === 0 ? why : `${why === undefined ? '' : `${why}; `}the daemon's size leaves out the writable volumes ${volumes.map((v) => v.target).join(', ')}`;
      return new StorageGuard(limit, 'daemon', async () => ({ bytes: await bytes(), files: 0, partial: false, by: 'daemon' }), unseen, options).begin();
    }
    return new StorageGuard(limit, 'none', undefined, why, options);
  }

  private async begin(): Promise<this> {
    await this.check();
    return this;
  }

  /** The usage that crossed the limit, once one did. */
  exceeded(): StorageUsage | undefined {
    return this.over;
  }

  /** Measure now (joins a measurement in flight); after an excess, waits for the reaction to it. */
  async check(): Promise<StorageUsage | undefined> {
    if (this.meter === undefined || this.stopped) return this.over;
    this.running ??= this.measure().finally(() => {
      this.running = undefined;
    });
    await this.running;
    await this.reaction;
    return this.over;
  }

  private async measure(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const meter = this.meter as Meter;
    const began = performance.now();
    let usage: StorageUsage;
    try {
      const measured = await meter(this.limit);
      this.lastMeasuredBy = measured.by;
      usage = { bytes: measured.bytes, files: measured.files, partial: measured.partial };
    } catch (e) {
      // The container went away under it, or the daemon did not answer: try again next interval.
      this.failures += 1;
      if (!this.stopped) this.schedule(this.intervalMs);
      throw e;
    }
    this.peak = { bytes: Math.max(this.peak.bytes, usage.bytes), files: this.peak.files === null ? null : Math.max(this.peak.files, usage.files) };
    const over = usage.bytes > this.limit.bytes || (this.method === 'layer-walk' && usage.files > this.limit.files);
    if (over && this.over === undefined) {
      this.over = usage;
      this.reaction = this.options.onExceeded(usage).catch(() => undefined);
      return; // nothing of the agent's runs after the cut: no further polling
    }
    if (!this.stopped) this.schedule(Math.max(this.intervalMs, 4 * (performance.now() - began)));
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.check().catch(() => undefined), ms);
    this.timer.unref();
  }

  /** Stop polling, with a last measurement (what the episode left), and say how it went. */
  async stop(): Promise<StorageRecord> {
    await this.check().catch(() => undefined);
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    return this.record();
  }

  /** Stops polling without a last measurement (an early end of the rollout). */
  async [Symbol.asyncDispose](): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  record(): StorageRecord {
    return {
      limit_mb: this.limit.bytes / (1024 * 1024),
      limit_files: this.limit.files,
      method: this.method,
      ...(this.unmeasured === undefined ? {} : { unmeasured: this.unmeasured }),
      peak_mb: Math.round((this.peak.bytes / (1024 * 1024)) * 10) / 10,
      peak_files: this.peak.files,
      exceeded: this.over !== undefined,
    };
  }
}

/** The limit a task's container gets (taskenv/container.ts taskLimits). */
export function storageLimitOf(storageMb: number): StorageLimit {
  return { bytes: storageMb * 1024 * 1024, files: storageFilesLimit(storageMb) };
}

/** Two episodes' records as one: the limit is the same, the peaks the larger, exceeded if either was. */
export function mergeStorageRecords(a: StorageRecord, b: StorageRecord): StorageRecord {
  return {
    ...b,
    peak_mb: Math.max(a.peak_mb, b.peak_mb),
    peak_files: a.peak_files === null || b.peak_files === null ? null : Math.max(a.peak_files, b.peak_files),
    exceeded: a.exceeded || b.exceeded,
  };
}

/**
 * The task's storage limit on an open sandbox, for as long as the agent's commands run in it:
 * everything of the agent's cut once the container is over it. Its commands should carry the
 * same limit per file (SessionOptions.fileSizeMax: storageLimitOf(...).bytes).
 */
export function guardTaskStorage(box: { container: Container; session: Pick<SandboxSession, 'cut'> }, task: Task): Promise<StorageGuard> {
  return StorageGuard.start(box.container, storageLimitOf(taskLimits(task).storageMb), { onExceeded: () => box.session.cut() });
}

/**
 * Whether a disk with `freeBytes` holds the worst case of `concurrency` rollouts at once, each
 * filling its task's storage limit (`limitsMb`: one per pending rollout; the largest, as many as run
 * together) plus `reserveBytes` for the images and the harness. Pure.
 */
export function diskHeadroom(input: { freeBytes: number; concurrency: number; limitsMb: readonly number[]; reserveBytes?: number }): { neededBytes: number; short: boolean } {
  const largest = [...input.limitsMb].sort((a, b) => b - a).slice(0, Math.max(1, input.concurrency));
  const neededBytes = largest.reduce((n, mb) => n + mb * 1024 * 1024, 0) + (input.reserveBytes ?? DISK_RESERVE_BYTES);
  return { neededBytes, short: input.freeBytes < neededBytes };
}

/** Room kept beside the rollouts' limits: images, copies, the harness's own files. */
export const DISK_RESERVE_BYTES = 2 * 1024 ** 3;
