/**
 * The storage guard's measurement and its state machine, on real directories of this host
 * (the walk is the same one it makes of a container's upper dir) and on a container stand-in
 * that only names a directory or a byte count, as the daemon would.
 */
import { link, mkdir, mkdtemp, open, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diskHeadroom, measureLayerDir, measureLayerDu, mergeStorageRecords, StorageGuard, storageFilesLimit, storageLimitOf, StorageRecordSchema, type StorageUsage } from './storage.ts';

const MiB = 1024 * 1024;
const UNLIMITED = { bytes: Number.MAX_SAFE_INTEGER, files: Number.MAX_SAFE_INTEGER };
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-storage-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fill(path: string, bytes: number): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.write(Buffer.alloc(bytes, 1));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

describe('measureLayerDir', () => {
  it('counts blocks actually held: a sparse file costs nothing, written data what it holds', async () => {
    await fill(join(dir, 'data'), 3 * MiB);
    await writeFile(join(dir, 'sparse'), '');
    await truncate(join(dir, 'sparse'), 4 * 1024 * MiB); // 4 GiB apparent, no blocks
    const usage = await measureLayerDir(dir, UNLIMITED);
    expect(usage.partial).toBe(false);
    expect(usage.bytes).toBeGreaterThanOrEqual(3 * MiB);
    expect(usage.bytes).toBeLessThan(4 * MiB);
    expect(usage.files).toBe(2);
  });

  it('a hard-linked file counts once, every inode counts, links are not followed', async () => {
    await fill(join(dir, 'a'), MiB);
    await link(join(dir, 'a'), join(dir, 'b'));
    await mkdir(join(dir, 'sub', 'deeper'), { recursive: true });
    await link(join(dir, 'a'), join(dir, 'sub', 'deeper', 'c'));
    await symlink('/usr', join(dir, 'usr-link'));
    const usage = await measureLayerDir(dir, UNLIMITED);
    // a (with its two other names), sub, deeper, usr-link
    expect(usage.files).toBe(4);
    expect(usage.bytes).toBeLessThan(MiB + 64 * 1024);
  });

  it('stops past the limit, bytes or inodes, and says the count is partial', async () => {
    for (let i = 0; i < 300; i++) await writeFile(join(dir, `f${i}`), '');
    const byFiles = await measureLayerDir(dir, { bytes: Number.MAX_SAFE_INTEGER, files: 100 });
    expect(byFiles.files).toBeGreaterThan(100);
    expect(byFiles.files).toBeLessThan(300);
    expect(byFiles.partial).toBe(true);
    await fill(join(dir, 'big'), 2 * MiB);
    const byBytes = await measureLayerDir(dir, { bytes: MiB, files: Number.MAX_SAFE_INTEGER });
    expect(byBytes.bytes).toBeGreaterThan(MiB);
  });

  it('throws on a directory that is not there (the caller falls back)', async () => {
    await expect(measureLayerDir(join(dir, 'missing'), UNLIMITED)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('measureLayerDu', () => {
  it('counts what the walk counts: blocks held, a hard link once, links not followed, every inode', async () => {
    await fill(join(dir, 'a'), MiB);
    await link(join(dir, 'a'), join(dir, 'b'));
    await mkdir(join(dir, 'sub', 'deeper'), { recursive: true });
    await fill(join(dir, 'sub', 'deeper', 'c'), 3 * MiB);
    await writeFile(join(dir, 'sparse'), '');
    await truncate(join(dir, 'sparse'), 1024 * MiB);
    await symlink('/usr', join(dir, 'usr-link'));
    for (let i = 0; i < 40; i++) await writeFile(join(dir, 'sub', `e${i}`), '');
    const walked = await measureLayerDir(dir, UNLIMITED);
    const du = await measureLayerDu(dir);
    expect(du?.files).toBe(walked.files);
    // du also counts the top directory's own block.
    expect(Math.abs((du?.bytes ?? 0) - walked.bytes)).toBeLessThanOrEqual(8192);
    expect(du?.bytes).toBeLessThan(5 * MiB);
  });
});

describe('StorageGuard', () => {
  it('walks a small layer in-process and hands a large one to du', async () => {
    await using guard = await StorageGuard.start({ writableLayerDir: () => Promise.resolve(dir) }, { bytes: 100 * MiB, files: 1000 }, { intervalMs: 60_000, largeLayerFiles: 20, onExceeded: () => Promise.resolve() });
    expect(guard.lastMeasuredBy).toBe('walk');
    for (let i = 0; i < 30; i++) await writeFile(join(dir, `g${i}`), '');
    await guard.check(); // the walk sees 30 files
    expect(guard.lastMeasuredBy).toBe('walk');
    await guard.check();
    expect(guard.lastMeasuredBy).toBe('du');
    for (let i = 0; i < 30; i++) await rm(join(dir, `g${i}`));
    await guard.check(); // du sees it small again
    await guard.check();
    expect(guard.lastMeasuredBy).toBe('walk');
  });

  it('walks a readable layer, cuts once when it goes over, and records the peak', async () => {
    const cuts: StorageUsage[] = [];
    const limit = { bytes: 2 * MiB, files: 1000 };
    const guard = await StorageGuard.start({ writableLayerDir: () => Promise.resolve(dir) }, limit, {
      intervalMs: 60_000, // the test drives the measurements
      onExceeded: (u) => Promise.resolve(cuts.push(u)),
    });
    expect(guard.method).toBe('layer-walk');
    await fill(join(dir, 'one'), MiB);
    expect(await guard.check()).toBeUndefined();
    await fill(join(dir, 'two'), 2 * MiB);
    const over = await guard.check();
    expect(over?.bytes).toBeGreaterThan(limit.bytes);
    await guard.check();
    expect(cuts).toHaveLength(1);
    const record = await guard.stop();
    expect(StorageRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({ method: 'layer-walk', exceeded: true, limit_files: 1000 });
    expect(record.peak_mb).toBeGreaterThanOrEqual(3);
  });

  it('too many inodes is over the limit too', async () => {
    let cut = 0;
    const guard = await StorageGuard.start({ writableLayerDir: () => Promise.resolve(dir) }, { bytes: 100 * MiB, files: 50 }, { intervalMs: 60_000, onExceeded: () => Promise.resolve(cut++) });
    for (let i = 0; i < 80; i++) await writeFile(join(dir, `e${i}`), '');
    await guard.check();
    expect(cut).toBe(1);
    expect((await guard.stop()).exceeded).toBe(true);
  });

  it("counts the container's writable volumes with its layer, and says which it cannot see", async () => {
    const volume = join(dir, 'volume-data');
    await mkdir(volume);
    await mkdir(join(dir, 'upper'));
    let cut = 0;
    const guard = await StorageGuard.start(
      {
        writableLayerDir: () => Promise.resolve(join(dir, 'upper')),
        writableVolumes: () => Promise.resolve([{ target: '/var/lib/postgresql/data', dir: volume }, { target: '/mnt/nfs' }]),
      },
      { bytes: 2 * MiB, files: 1000 },
      { intervalMs: 60_000, onExceeded: () => Promise.resolve(cut++) },
    );
    // The layer holds half the limit, the volume the rest and more: only together are they over it.
    await fill(join(dir, 'upper', 'a'), MiB + 512 * 1024);
    expect(await guard.check()).toBeUndefined();
    await fill(join(volume, 'b'), MiB);
    expect(await guard.check()).toBeDefined();
    expect(cut).toBe(1);
    const record = await guard.stop();
    expect(record).toMatchObject({ method: 'layer-walk', exceeded: true, unmeasured: "writable volumes kept off this host's disk (another driver): /mnt/nfs" });
    expect(record.peak_mb).toBeGreaterThanOrEqual(2.5);
  });

  it("says the daemon's size leaves the writable volumes out", async () => {
    const guard = await StorageGuard.start(
      { writableLayerBytes: () => Promise.resolve(1), writableVolumes: () => Promise.resolve([{ target: '/data', dir: '/somewhere' }]) },
      { bytes: 100, files: 5 },
      { intervalMs: 60_000, onExceeded: () => Promise.resolve() },
    );
    expect(await guard.stop()).toMatchObject({ method: 'daemon', unmeasured: "the daemon's size leaves out the writable volumes /data" });
  });

  it('polls by itself between checks', async () => {
    let cut = 0;
    await using guard = await StorageGuard.start({ writableLayerDir: () => Promise.resolve(dir) }, { bytes: MiB, files: 1000 }, { intervalMs: 20, onExceeded: () => Promise.resolve(cut++) });
    await fill(join(dir, 'grow'), 2 * MiB);
    for (let i = 0; i < 200 && guard.exceeded() === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(guard.exceeded()).toBeDefined();
    expect(cut).toBe(1);
  });

  it("falls back to the daemon's count when the layer cannot be walked, and records why", async () => {
    let bytes = 10;
    const guard = await StorageGuard.start(
      { writableLayerDir: () => Promise.resolve(join(dir, 'not-here')), writableLayerBytes: () => Promise.resolve(bytes) },
      { bytes: 100, files: 5 },
      { intervalMs: 60_000, onExceeded: () => Promise.resolve() },
    );
    expect(guard.method).toBe('daemon');
    bytes = 101;
    await guard.check();
    const record = await guard.stop();
    expect(record).toMatchObject({ method: 'daemon', exceeded: true, peak_files: null });
  });

  it('measures nothing, and says so, when the engine offers neither', async () => {
    const guard = await StorageGuard.start({}, { bytes: 100, files: 5 }, { onExceeded: () => Promise.reject(new Error('never')) });
    expect(guard.method).toBe('none');
    expect(await guard.check()).toBeUndefined();
    expect(await guard.stop()).toMatchObject({ method: 'none', exceeded: false, unmeasured: 'the engine reports no writable layer' });
  });

  it('a measurement that fails is tried again, not taken as usage', async () => {
    let calls = 0;
    const guard = await StorageGuard.start(
      { writableLayerBytes: () => (++calls === 2 ? Promise.reject(new Error('daemon busy')) : Promise.resolve(1)) },
      { bytes: 100, files: 5 },
      { intervalMs: 60_000, onExceeded: () => Promise.resolve() },
    );
    await expect(guard.check()).rejects.toThrow('daemon busy');
    expect(guard.failures).toBe(1);
    expect(await guard.check()).toBeUndefined();
    expect((await guard.stop()).exceeded).toBe(false);
  });
});

describe('limits', () => {
  it('ten GiB allows about a million inodes, a small limit still a hundred thousand', () => {
    expect(storageLimitOf(10240)).toEqual({ bytes: 10240 * MiB, files: 1_024_000 });
    expect(storageFilesLimit(64)).toBe(100_000);
  });

  it('disk headroom: the largest limits, as many as run at once, plus the reserve', () => {
    const GiB = 1024 ** 3;
    const limitsMb = [64, 10240, 5120];
    expect(diskHeadroom({ freeBytes: 100 * GiB, concurrency: 2, limitsMb, reserveBytes: 0 })).toEqual({ neededBytes: 15 * GiB, short: false });
    expect(diskHeadroom({ freeBytes: 14 * GiB, concurrency: 2, limitsMb, reserveBytes: 0 }).short).toBe(true);
    // One limit per pending rollout: four of one task at once need four times its limit; never more than the slots.
    expect(diskHeadroom({ freeBytes: 100 * GiB, concurrency: 4, limitsMb: [1024, 1024, 1024, 1024, 1024], reserveBytes: GiB }).neededBytes).toBe(5 * GiB);
  });

  it('two episodes: the larger peak, exceeded if either was', () => {
    const a = { limit_mb: 10, limit_files: 100_000, method: 'layer-walk' as const, peak_mb: 9, peak_files: 10, exceeded: true };
    const b = { ...a, peak_mb: 2, peak_files: 40, exceeded: false };
    expect(mergeStorageRecords(a, b)).toMatchObject({ peak_mb: 9, peak_files: 40, exceeded: true });
  });
});
