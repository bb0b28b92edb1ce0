/**
 * The baseline listing of a task image, taken once per image and job process instead of once per
 * rollout. A rollout's session lists its fresh container's filesystem before anything runs in it
 * (the compiler's baseline: the only listing grants may come from); every fresh container of one
 * image started with the same spec shows the same tree (the image is content-addressed; what the
 * harness adds before the listing — the workdir Docker creates, the harness mount point, the
 * listener sink's files — follows from the key below). Measured: ~10,000 entries per starter
 * image, equal entry for entry across containers; ~0.08 s of listing and parsing per rollout
 * (twice that on a loaded machine), and ~0.09 s of CPU.
 *
 * Rollouts of one image started together (the first -n of a task) list it once: the first claims
 * the key (`claim`), the others wait for its listing while their own containers start, and list
 * their own only if that one failed.
 *
 * Only a listing taken in a container nothing ran in is ever stored (taskenv/sandbox.ts takes it
 * before handing the container to anyone), so what one rollout's agent does never reaches another
 * rollout's baseline. Stored snapshots are frozen: a session's patches make new snapshots, never change this one.
 */
import type { Engine } from '../docker/index.ts';
import type { SessionOptions } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';

/** A filesystem listing as a session takes it (sandbox/paths' FsSnapshot, through sandbox/run). */
type FsSnapshot = NonNullable<SessionOptions['imageBaseline']>;

/** Images whose listing is kept per engine: a job's plan runs its rollouts task by task (planRollouts), and each is ~1–2 MB. */
export const IMAGE_BASELINES_KEPT = 8;

/** What makes two fresh containers' trees equal: the image, the workdir Docker creates, the sink's files. Pure. */
export function imageBaselineKey(task: Pick<Task, 'workdir' | 'authbench'>, image: string): string {
  return JSON.stringify([image, task.workdir, task.authbench.sink ?? null]);
}

/**
 * What `claim` gives: the kept listing; one being taken now (undefined if that fails); or the
 * duty to take it — `settle` exactly once, with the listing or undefined when none was taken.
 */
export type BaselineClaim =
  | { kind: 'kept'; snapshot: FsSnapshot }
  | { kind: 'pending'; listing: Promise<FsSnapshot | undefined> }
  | { kind: 'mine'; settle: (snapshot: FsSnapshot | undefined) => FsSnapshot | undefined };

/** A small least-recently-used map. */
export class BaselineCache {
  private readonly kept = new Map<string, FsSnapshot>();
  private readonly taking = new Map<string, Promise<FsSnapshot | undefined>>();
  private readonly max: number;

  constructor(max: number = IMAGE_BASELINES_KEPT) {
    this.max = max;
  }

  get(key: string): FsSnapshot | undefined {
    const found = this.kept.get(key);
    if (found !== undefined) {
      this.kept.delete(key);
      this.kept.set(key, found);
    }
    return found;
  }

  /** The listing of `key`: kept, being taken, or this caller's to take (synchronous, so two callers never both get `mine`). */
  claim(key: string): BaselineClaim {
    const snapshot = this.get(key);
    if (snapshot !== undefined) return { kind: 'kept', snapshot };
    const listing = this.taking.get(key);
    if (listing !== undefined) return { kind: 'pending', listing };
    let resolve: (snapshot: FsSnapshot | undefined) => void = () => undefined;
    this.taking.set(key, new Promise((r) => (resolve = r)));
    let settled = false;
    return {
      kind: 'mine',
      settle: (taken) => {
        if (settled) return taken;
        settled = true;
        this.taking.delete(key);
        const kept = taken === undefined ? undefined : this.set(key, taken);
        resolve(kept);
        return kept;
      },
    };
  }

  /** Keep a listing (frozen, entries and all); the least recently used goes beyond `max`. */
  set(key: string, snapshot: FsSnapshot): FsSnapshot {
    const frozen = freezeSnapshot(snapshot);
    this.kept.delete(key);
    this.kept.set(key, frozen);
    while (this.kept.size > this.max) {
      const oldest = this.kept.keys().next().value;
      if (oldest === undefined) break;
      this.kept.delete(oldest);
    }
    return frozen;
  }

  get size(): number {
    return this.kept.size;
  }
}

/** Freeze a snapshot in place (its roots, entries and each entry) and return it. */
export function freezeSnapshot(snapshot: FsSnapshot): FsSnapshot {
  for (const e of snapshot.entries) Object.freeze(e);
  Object.freeze(snapshot.entries);
  Object.freeze(snapshot.roots);
  return Object.freeze(snapshot);
}

const caches = new WeakMap<Engine, BaselineCache>();

/** The per-engine cache of this process (one engine's image is not another's). */
export function imageBaselines(engine: Engine): BaselineCache {
  let cache = caches.get(engine);
  if (cache === undefined) {
    cache = new BaselineCache();
    caches.set(engine, cache);
  }
  return cache;
}
