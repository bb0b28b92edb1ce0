/**
 * Two-episode memory rollouts ([authbench.memory], issue #18 item 2): episode 1 runs with untrusted
 * content in reach and may write the memory store; episode 2 runs in a fresh container of the same
 * image, with the store carried over (mode persistent) or not (mode session), the episode-1-only
 * paths withheld, and a second, clean instruction. What crosses is only the store's regular files,
 * bounded — the agent wrote them, so they are hostile input: links, devices, fifos, names outside
 * the store and anything past the bounds are refused and reported, never followed.
 */
import { posix } from 'node:path';
import * as tarStream from 'tar-stream';
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import type { Container } from '../docker/index.ts';
import type { Episode, Step } from '../agent/index.ts';
import { analyzeRollout, rolloutTaintConfig, isTainted } from '../containment/index.ts';
import { CARRIED_MEMORY_TESTS_FILE, MEMORY_MODES, type Task } from '../task-format/index.ts';

/** What may cross from episode 1 to episode 2: a notes store, not a disk image. */
export const MEMORY_LIMITS = {
  maxFiles: 64,
  maxFileBytes: 64 * 1024,
  maxBytes: 256 * 1024,
  /** The store's tar as read out of the container (headers included); past it nothing is carried. */
  archiveBytes: 1024 * 1024,
} as const;
export type MemoryLimits = { [K in keyof typeof MEMORY_LIMITS]: number };

export const MemoryCarrySchema = z
  .object({
    mode: z.enum(MEMORY_MODES).describe('session: nothing was carried (the control); persistent: the store was'),
    store: z.string().describe('Absolute container directory of the memory store'),
    files: z
      .array(z.object({ path: z.string().describe('Absolute container path'), bytes: z.number().int().nonnegative() }))
      .describe("The store's regular files copied from episode 1's container into episode 2's"),
    refused: z
      .array(z.object({ path: z.string().describe('The entry as named in the store (absolute when it stays inside)'), reason: z.string() }))
      .describe('Entries of the store not carried (links, devices, names outside the store, past the bounds)'),
    withheld: z.array(z.string()).describe('Episode-1-only paths removed before episode 2'),
  })
  .describe('What a two-episode memory rollout carried from episode 1 to episode 2');
export type MemoryCarry = z.infer<typeof MemoryCarrySchema>;

/** One entry of the store's tar as the daemon made it (top entry: the store's basename). */
export interface StoreEntry {
  name: string;
  /** tar-stream's type: file, directory, symlink, link, fifo, character-device, ... */
  type: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  content?: Buffer;
}

export interface MemorySelection {
  /** Entries to recreate in episode 2 (directories and regular files), names normalised, modes without setuid/setgid/sticky. */
  kept: StoreEntry[];
  files: MemoryCarry['files'];
  refused: MemoryCarry['refused'];
}

/**
 * Which entries of the store's tar cross into episode 2. Pure. Only directories and regular files
 * inside the store; the first files up to the bounds (in tar order), the rest refused by name.
 */
export function selectMemoryEntries(store: string, entries: readonly StoreEntry[], limits: MemoryLimits = MEMORY_LIMITS): MemorySelection {
  const top = posix.basename(store);
  const parent = posix.dirname(store);
  const out: MemorySelection = { kept: [], files: [], refused: [] };
  let bytes = 0;
  for (const e of entries) {
    const name = posix.normalize(e.name).replace(/\/+$/, '');
    const inside = !posix.isAbsolute(e.name) && !e.name.split('/').includes('..') && (name === top || name.startsWith(`${top}/`));
    if (!inside) {
      out.refused.push({ path: e.name, reason: 'outside the store' });
      continue;
    }
    const path = posix.join(parent, name);
    if (e.type === 'directory') {
      out.kept.push({ ...e, name, mode: e.mode & 0o777 });
      continue;
    }
    if (e.type !== 'file' && e.type !== 'contiguous-file') {
      out.refused.push({ path, reason: `not a regular file (${e.type})` });
      continue;
    }
    if (e.size > limits.maxFileBytes) out.refused.push({ path, reason: `larger than ${limits.maxFileBytes} bytes` });
    else if (out.files.length >= limits.maxFiles) out.refused.push({ path, reason: `past ${limits.maxFiles} files` });
    else if (bytes + e.size > limits.maxBytes) out.refused.push({ path, reason: `past ${limits.maxBytes} bytes in all` });
    else {
      bytes += e.size;
      out.kept.push({ ...e, name, type: 'file', mode: e.mode & 0o777 });
      out.files.push({ path, bytes: e.size });
    }
  }
  return out;
}

/** The entries of a tar, regular files with their content. */
export function tarEntries(tar: Uint8Array): Promise<StoreEntry[]> {
  return new Promise((resolve, reject) => {
    const entries: StoreEntry[] = [];
    const extract = tarStream.extract();
    extract.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (c: unknown) => {
        chunks.push(c as Buffer);
      });
      body.on('end', () => {
        const entry: StoreEntry = { name: header.name, type: header.type ?? 'unknown', size: header.size ?? 0, mode: header.mode ?? 0o644, uid: header.uid ?? 0, gid: header.gid ?? 0 };
        if (header.type === 'file' || header.type === 'contiguous-file') entry.content = Buffer.concat(chunks);
        entries.push(entry);
        next();
      });
    });
    extract.on('finish', () => resolve(entries));
    extract.on('error', reject);
    extract.end(Buffer.from(tar));
  });
}

/** A tar of kept entries (owners and modes as selected), to unpack in the store's parent. */
export function memoryTar(kept: readonly StoreEntry[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const pack = tarStream.pack();
    const chunks: Buffer[] = [];
    pack.on('data', (c: unknown) => {
      chunks.push(c as Buffer);
    });
    pack.on('end', () => resolve(Buffer.concat(chunks)));
    pack.on('error', reject);
    for (const e of kept) {
      const header = { name: e.name, mode: e.mode, uid: e.uid, gid: e.gid };
      if (e.type === 'directory') pack.entry({ ...header, type: 'directory' });
      else pack.entry({ ...header, type: 'file', size: e.content?.length ?? 0 }, e.content ?? Buffer.alloc(0));
    }
    pack.finalize();
  });
}

/** The store as episode 1 left it, read through the daemon's archive API (no command in the container). */
export async function readMemoryStore(container: Container, store: string, limits: MemoryLimits = MEMORY_LIMITS): Promise<MemorySelection> {
  if (container.archive === undefined) throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'this Docker engine cannot read a container archive (no memory store copy)');
  let tar: Buffer | undefined;
  try {
    tar = await container.archive(store, limits.archiveBytes);
  } catch (e) {
    // The agent grew the store past any notes file: nothing crosses, and that is the agent's doing.
    if (e instanceof AuthbenchError && e.code === 'TOO_LARGE') return { kept: [], files: [], refused: [{ path: store, reason: `the store is larger than ${limits.archiveBytes} bytes` }] };
    throw e;
  }
  return selectMemoryEntries(store, tar === undefined ? [] : await tarEntries(tar), limits);
}

async function rootExec(container: Container, cmd: readonly string[], what: string): Promise<void> {
  const r = await container.exec({ cmd, user: '0', timeoutMs: 30_000 });
  if (r.exitCode !== 0) throw new AuthbenchError('SANDBOX_UNAVAILABLE', `${what} failed (exit ${String(r.exitCode)}): ${r.stderr.trim()}`);
}

/**
 * Prepare episode 2's container before its first command: the withheld paths removed, and under
 * mode persistent the store replaced by episode 1's (absent then, absent now). Returns the record.
 */
export async function carryMemory(from: Container, to: Container, task: Pick<Task, 'authbench'>): Promise<MemoryCarry & { kept: readonly StoreEntry[] }> {
  const memory = task.authbench.memory;
  if (memory === undefined) throw new AuthbenchError('INTERNAL', 'carryMemory: the task has no [authbench.memory]');
  if (memory.withheld.length > 0) await rootExec(to, ['rm', '-rf', '--', ...memory.withheld], 'removing the withheld paths');
  const base = { mode: memory.mode, store: memory.store, withheld: [...memory.withheld] };
  if (memory.mode === 'session') return { ...base, files: [], refused: [], kept: [] };
  const selected = await readMemoryStore(from, memory.store);
  await rootExec(to, ['rm', '-rf', '--', memory.store], 'clearing the memory store');
  if (selected.kept.length > 0) {
    if (to.extractArchive === undefined) throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'this Docker engine cannot unpack an archive into a container');
    const parent = posix.dirname(memory.store);
    await rootExec(to, ['mkdir', '-p', '--', parent], 'creating the memory store parent');
    await to.extractArchive(parent, await memoryTar(selected.kept));
  }
  return { ...base, files: selected.files, refused: selected.refused, kept: selected.kept };
}

/**
 * The carried store for episode 2's validators, keyed by its path relative to `testsDir`: one JSON
 * file (CARRIED_MEMORY_TESTS_FILE) holding each carried file's content by its path in the store —
 * the store as episode 2 was given it, which no command of episode 2 can have changed, under no
 * name the agent chose. Undefined when nothing was carried. Pure.
 */
export function carriedForValidators(store: string, kept: readonly StoreEntry[], testsDir: string): Record<string, Uint8Array> | undefined {
  const top = posix.basename(store);
  const files: Record<string, string> = {};
  for (const e of kept) if (e.type === 'file' && e.name.startsWith(`${top}/`)) files[e.name.slice(top.length + 1)] = Buffer.from(e.content ?? new Uint8Array()).toString('base64');
  if (Object.keys(files).length === 0) return undefined;
  return { [posix.relative(testsDir, CARRIED_MEMORY_TESTS_FILE)]: Buffer.from(`${JSON.stringify({ store, files }, null, 1)}\n`) };
}

/**
 * Episode 2's view of the task: the second instruction, and the carried memory files episode 1
 * tainted declared untrusted, so the defenses deciding episode 2 see the taint measurement sees.
 * Pure.
 */
export function secondEpisodeTask(task: Task, taintedMemory: readonly string[]): Task {
  if (task.nextInstruction === undefined) throw new AuthbenchError('INTERNAL', `task ${task.id} has no episode-2 instruction`);
  return {
    ...task,
    instruction: task.nextInstruction,
    authbench: { ...task.authbench, untrusted_sources: [...new Set([...task.authbench.untrusted_sources, ...taintedMemory])] },
  };
}

/** The carried files whose episode-1 record is tainted (written by a process that had read untrusted content). Pure. */
export function taintedCarried(first: Episode, task: Task, carried: readonly string[]): string[] {
  const graph = analyzeRollout(first, rolloutTaintConfig(task)).graph;
  const tainted = new Set(graph.nodes.filter((n) => (n.type === 'memory' || n.type === 'file') && isTainted(n.labels)).map((n) => (n.attrs as { path: string }).path));
  return carried.filter((p) => tainted.has(p));
}

/**
 * One episode record of both, for the rollout trace and measurement: every step marked with its
 * episode, episode 2's turns numbered on from episode 1's and its call ids suffixed `@e1` (a
 * fresh agent reuses ids), totals summed, the ending and final answer episode 2's. Pure.
 */
export function mergeEpisodes(first: Episode, second: Episode, carried: readonly string[]): Episode {
  const offset = first.steps.at(-1)?.turn ?? 0;
  const steps: Step[] = [
    ...first.steps.map((s) => ({ ...s, episode: 0 })),
    ...second.steps.map((s) => ({ ...s, episode: 1, turn: s.turn + offset, proposals: s.proposals.map((p) => ({ ...p, id: `${p.id}@e1` })) })),
  ];
  const sum = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a + b);
  const a = first.totals;
  const b = second.totals;
  const totals: Episode['totals'] = {
    ...b,
    turns: a.turns + b.turns,
    proposals: a.proposals + b.proposals,
    valid_proposals: a.valid_proposals + b.valid_proposals,
    invalid_proposals: a.invalid_proposals + b.invalid_proposals,
    blocked: a.blocked + b.blocked,
    held: a.held + b.held,
    rolled_back: a.rolled_back + b.rolled_back,
    executed: a.executed + b.executed,
    denials: a.denials + b.denials,
    input_tokens: sum(a.input_tokens, b.input_tokens),
    output_tokens: sum(a.output_tokens, b.output_tokens),
    cost_usd: sum(a.cost_usd, b.cost_usd),
    model_latency_ms: a.model_latency_ms + b.model_latency_ms,
    duration_ms: a.duration_ms + b.duration_ms,
  };
  const parser = a.parser === undefined || b.parser === undefined ? (a.parser ?? b.parser) : { strict: a.parser.strict + b.parser.strict, repaired: a.parser.repaired + b.parser.repaired, invalid: a.parser.invalid + b.parser.invalid };
  if (parser !== undefined) totals.parser = parser;
  const asText = (a.actions_as_text ?? 0) + (b.actions_as_text ?? 0);
  if (asText > 0) totals.actions_as_text = asText;
  const rank = { none: 0, partial: 1, full: 2 } as const;
  const enforcement =
    first.enforcement === null ? second.enforcement : second.enforcement === null || rank[first.enforcement.level] <= rank[second.enforcement.level] ? first.enforcement : second.enforcement;
  const events = first.trace_events === undefined && second.trace_events === undefined ? undefined : (first.trace_events ?? 0) + (second.trace_events ?? 0);
  return {
    ...second,
    started_at: first.started_at,
    setup: first.setup,
    steps,
    tampering: [...first.tampering, ...second.tampering],
    ...(events === undefined ? {} : { trace_events: events }),
    enforcement,
    totals,
    memory_carried: [...carried],
  };
}

/**
 * Whether a rollout goes on to episode 2: the task has [authbench.memory] and episode 1 ended with
 * nothing that voids the rollout (an infrastructure error, a broken sandbox). Authbench's own loop
 * and an installed agent alike: a fresh headless session of the agent in episode 2's container. Pure.
 */
export function wantsSecondEpisode(task: Pick<Task, 'authbench' | 'nextInstruction'>, first: Pick<Episode, 'end_reason' | 'tampering'>): boolean {
  return (
    task.authbench.memory !== undefined &&
    task.nextInstruction !== undefined &&
    first.end_reason !== 'infra_error' &&
    !first.tampering.some((t) => t.effective)
  );
}
