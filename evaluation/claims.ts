/**
 * Claims: several processes (shards, resumes) may run one job folder at once, on one host or on a
 * shared filesystem. Before a rollout starts, its process claims it by creating
 * claims/<rollout_id>.json exclusively; the file says who (shard, host, pid, when) and its mtime is
 * the heartbeat, refreshed while the rollout runs. A rollout whose claim is live is another
 * process's; a claim whose heartbeat is older than the stale limit belongs to a process that died
 * and may be taken over. The claim is removed once result.json is written.
 *
 * The heartbeat is the file's mtime rather than a field rewritten in place: touching never replaces
 * the file, so a process that was paused past the stale limit and wakes up cannot overwrite the
 * claim of the process that took its rollout over (it only sees the file is no longer its own).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';

export const CLAIMS_DIR = 'claims';
/** How often a running rollout's claim is touched. */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A claim not touched for this long is stale: four missed heartbeats, so a busy machine is not mistaken for a dead one. */
export const DEFAULT_STALE_MS = 4 * DEFAULT_HEARTBEAT_MS;

export const ClaimSchema = z
  .strictObject({
    schema_version: z.literal(1),
    rollout_id: z.string(),
    shard: z.string().nullable().describe('`I/N` when the claiming process runs a shard, null otherwise'),
    host: z.string().describe('Host name of the claiming process'),
    pid: z.number().int().describe('Its process id on that host'),
    started: z.string().describe('When the claim was made (ISO 8601); the heartbeat is the file\'s mtime'),
    token: z.string().describe('Unique per claim: tells a process\'s own claim from the one that replaced it (inodes are reused at once)'),
  })
  .describe('claims/<rollout_id>.json: a rollout being run by a process');
export type Claim = z.infer<typeof ClaimSchema>;

/** Live: its process is presumed running. Stale: its heartbeat is older than the limit; it may be taken over. Pure. */
export function claimState(heartbeatMs: number, nowMs: number, staleMs: number): 'live' | 'stale' {
  return nowMs - heartbeatMs > staleMs ? 'stale' : 'live';
}

/** This machine, as a claim names it, and how to tell whether one of its processes still runs. */
export interface ClaimHere {
  host: string;
  isAlive: (pid: number) => boolean;
}

/** Signal 0 delivers nothing: ESRCH means no such process; EPERM means one runs (someone else's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const HERE: ClaimHere = { host: hostname(), isAlive: processAlive };

/**
 * A claim's state, seen from `here`: stale when its heartbeat is older than the limit, or at once
 * when it was made on this machine by a process that is gone (a run killed and resumed within the
 * stale limit must not wait for it, nor skip its rollout). A reused pid only delays this to the
 * heartbeat rule, never the other way. Pure, given `here`.
 */
export function judgeClaim(found: Pick<FoundClaim, 'claim' | 'heartbeatMs'>, nowMs: number, staleMs: number, here?: ClaimHere): 'live' | 'stale' {
  const owner = found.claim;
  if (here !== undefined && owner !== undefined && owner.host === here.host && !here.isAlive(owner.pid)) return 'stale';
  return claimState(found.heartbeatMs, nowMs, staleMs);
}

export function claimPath(jobDir: string, rolloutId: string): string {
  return join(jobDir, CLAIMS_DIR, `${rolloutId}.json`);
}

/** The claim this process writes for a rollout. Pure. */
export function newClaim(rolloutId: string, shard: string | null, who: { host: string; pid: number }, nowMs: number, token: string): Claim {
  return { schema_version: 1, rollout_id: rolloutId, shard, host: who.host, pid: who.pid, started: new Date(nowMs).toISOString(), token };
}

export interface ClaimOptions {
  /** `I/N` of this process, if it runs a shard. */
  shard?: string;
  staleMs?: number;
  heartbeatMs?: number;
  /** Injected clock (ms): tests move time instead of waiting. */
  now?: () => number;
  host?: string;
  pid?: number;
  /** Tells dead local owners apart (default: this machine's process table). */
  isAlive?: (pid: number) => boolean;
}

/** A claim as found on disk: its content (undefined if it does not parse) and heartbeat. */
export interface FoundClaim {
  claim: Claim | undefined;
  heartbeatMs: number;
  ino: number;
}

/** A claim this process holds: its token tells it apart from a claim made by whoever took it over. */
export interface HeldClaim {
  path: string;
  token: string;
  /** The stale claim this one replaced, if any (a crashed process's). */
  tookOver?: FoundClaim;
}

export type ClaimAttempt = { kind: 'claimed'; held: HeldClaim } | { kind: 'busy'; by: FoundClaim | undefined };

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;
const clock = (o: ClaimOptions): number => (o.now ?? Date.now)();

/**
 * Create `path` with `text` only if it does not exist, with its content complete from the first
 * moment anyone can see it: written to a unique sibling, mtime set, then hard-linked into place
 * (link fails if the target exists, also over NFS, where O_EXCL on open has not always held).
 * False when the file exists.
 */
export async function createExclusive(path: string, text: string, mtimeMs?: number): Promise<boolean> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  // A process that finished its part removes the claims folder when it is empty: make it again if it went.
  for (let tries = 0; ; tries++) {
    await mkdir(dirname(path), { recursive: true });
    try {
      await writeFile(tmp, text, { flag: 'wx' });
      break;
    } catch (e) {
      if (errno(e) !== 'ENOENT' || tries >= 3) throw e;
    }
  }
  try {
    if (mtimeMs !== undefined) await utimes(tmp, mtimeMs / 1000, mtimeMs / 1000);
    await link(tmp, path);
    return true;
  } catch (e) {
    if (errno(e) === 'EEXIST') return false;
    throw e;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function statOf(path: string): Promise<{ ino: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(path);
    return { ino: s.ino, mtimeMs: s.mtimeMs };
  } catch (e) {
    if (errno(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** The same claim file: by token, or for one that does not parse, by inode and heartbeat. Pure. */
export function sameClaim(a: FoundClaim, b: FoundClaim): boolean {
  if (a.claim !== undefined || b.claim !== undefined) return a.claim?.token === b.claim?.token;
  return a.ino === b.ino && a.heartbeatMs === b.heartbeatMs;
}

/** The claim at `path`, or undefined when there is none. */
export async function readClaim(path: string): Promise<FoundClaim | undefined> {
  const s = await statOf(path);
  if (s === undefined) return undefined;
  const text = await readFile(path, 'utf8').catch(() => undefined);
  let json: unknown;
  try {
    json = text === undefined ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = ClaimSchema.safeParse(json);
  return { claim: parsed.success ? parsed.data : undefined, heartbeatMs: s.mtimeMs, ino: s.ino };
}

/**
 * Claim a rollout for this process. `busy` when another process holds a live claim. A stale claim
 * is taken over: renamed to a unique name first, so of several processes trying at once only the
 * one whose rename succeeded goes on; it then checks that the file it moved is the stale claim it
 * judged (same token, still stale) — a contender that was slower moved the winner's fresh claim
 * instead, and puts it back — and creates its own claim like any other. One narrow case is left:
 * a third process creating a claim in the instant a wrongly moved claim is out of place runs the
 * rollout alongside the winner (three contenders for one crashed claim within microseconds).
 */
export async function acquireClaim(jobDir: string, rolloutId: string, options: ClaimOptions = {}): Promise<ClaimAttempt> {
  const path = claimPath(jobDir, rolloutId);
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const token = randomBytes(12).toString('hex');
  const here: ClaimHere = { host: options.host ?? HERE.host, isAlive: options.isAlive ?? HERE.isAlive };
  const claim = newClaim(rolloutId, options.shard ?? null, { host: here.host, pid: options.pid ?? process.pid }, clock(options), token);
  let tookOver: FoundClaim | undefined;
  // Each pass either ends or saw a claim disappear under it; a few passes cover any interleaving of two contenders.
  for (let pass = 0; pass < 4; pass++) {
    if (await createExclusive(path, `${JSON.stringify(claim, null, 2)}\n`, clock(options))) {
      return { kind: 'claimed', held: { path, token, ...(tookOver === undefined ? {} : { tookOver }) } };
    }
    const seen = await readClaim(path);
    if (seen === undefined) continue;
    if (judgeClaim(seen, clock(options), staleMs, here) === 'live') return { kind: 'busy', by: seen };
    const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
    try {
      await rename(path, aside);
    } catch (e) {
      if (errno(e) === 'ENOENT') continue;
      throw e;
    }
    const moved = await readClaim(aside);
    if (moved !== undefined && sameClaim(moved, seen) && judgeClaim(moved, clock(options), staleMs, here) === 'stale') {
      tookOver = seen;
      await unlink(aside);
      continue;
    }
    // Not the claim we judged stale: someone's live claim. Put it back where it was.
    await link(aside, path).catch((e: unknown) => {
      if (errno(e) !== 'EEXIST') throw e;
    });
    await unlink(aside);
    return { kind: 'busy', by: await readClaim(path) };
  }
  return { kind: 'busy', by: await readClaim(path) };
}

/** Is the claim at the path still this process's? */
async function stillHeld(held: HeldClaim): Promise<boolean> {
  return (await readClaim(held.path))?.claim?.token === held.token;
}

/** Touch the claim's heartbeat. False when the file is no longer this process's claim (it was taken over). */
export async function refreshClaim(held: HeldClaim, nowMs: number = Date.now()): Promise<boolean> {
  if (!(await stillHeld(held))) return false;
  await utimes(held.path, nowMs / 1000, nowMs / 1000);
  return true;
}

/** Remove the claim if it is still this process's (one taken over belongs to the process that took it). */
export async function releaseClaim(held: HeldClaim): Promise<void> {
  if (!(await stillHeld(held))) return;
  await unlink(held.path).catch((e: unknown) => {
    if (errno(e) !== 'ENOENT') throw e;
  });
}

/**
 * Touch the claim every heartbeat interval until the returned function is called. The timer does
 * not keep the process alive; a failed touch is retried at the next beat (a stale limit of four
 * beats absorbs a few).
 */
export function startHeartbeat(held: HeldClaim, options: Pick<ClaimOptions, 'heartbeatMs' | 'now'> = {}): () => void {
  const timer = setInterval(() => {
    refreshClaim(held, (options.now ?? Date.now)()).catch(() => undefined);
  }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Every claim in a job folder, by rollout id. */
export async function readClaims(jobDir: string): Promise<Map<string, FoundClaim>> {
  const out = new Map<string, FoundClaim>();
  const names = await readdir(join(jobDir, CLAIMS_DIR)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const found = await readClaim(join(jobDir, CLAIMS_DIR, name));
    if (found !== undefined) out.set(name.slice(0, -'.json'.length), found);
  }
  return out;
}
