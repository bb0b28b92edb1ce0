/**
 * A snapshot of an image's filesystem under a few roots: what exists, of which
 * type and mode, and where symlinks really point. Landlock rules attach to
 * existing inodes and execute-axis paths are realpath'd inside the image, so
 * both the compiler and the scorer need to know the image's tree — but they
 * stay pure by taking this snapshot as data. `snapshotCommand` is the argv that
 * produces it inside a container, `parseSnapshot` turns that output into it.
 */
import { posix } from 'node:path';
import { z } from 'zod';
import { AuthbenchError, compareStrings } from '../../core/index.ts';
import { covers, hasRecursiveTail, isGlob, isWithin, normalizePattern, staticPrefix } from './patterns.ts';

export const FsEntrySchema = z
  .object({
    path: z.string().startsWith('/').describe('Absolute, normalised path as found (not resolved through symlinks).'),
    type: z.enum(['file', 'dir', 'symlink', 'other']).describe('Inode type; `other` = device, fifo, socket.'),
    mode: z.number().int().min(0).max(0o7777).describe('Permission bits (incl. setuid/setgid/sticky), e.g. 0o755.'),
    target: z
      .string()
      .optional()
      .describe('For symlinks: the realpath of the target inside the image; absent when dangling or unresolvable.'),
    link: z
      .string()
      .optional()
      .describe(
        'For symlinks: the link text as readlink prints it (relative or absolute), from which `target` is resolved; ' +
          'absent when unknown (a link recorded from a trace whose text could not be recovered).',
      ),
  })
  .describe('One filesystem entry of an image.');

export const FsSnapshotSchema = z
  .object({
    roots: z
      .array(z.string().startsWith('/'))
      .describe('Directories that were listed completely; a path under a root and absent from `entries` does not exist.'),
    entries: z.array(FsEntrySchema).describe('Every entry under the roots (one filesystem each: `find -xdev`).'),
  })
  .describe('A listing of an image filesystem under some roots.');

export type FsEntry = z.infer<typeof FsEntrySchema>;
export type FsSnapshot = z.infer<typeof FsSnapshotSchema>;

/** Linux gives up resolving after 40 nested links (ELOOP); so do we. */
const MAX_SYMLINK_HOPS = 40;

/**
 * argv that lists `roots` inside an image, in the format `parseSnapshot` reads:
 * NUL-separated records `<type> <octal mode> <path>`, and for symlinks one more
 * field, the raw link text. GNU find only (Debian/Ubuntu images); `-xdev` keeps
 * /proc and /sys out when a root is `/` — list `/dev` as its own root if needed.
 */
export function snapshotCommand(roots: readonly string[]): string[] {
  if (roots.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'snapshotCommand needs at least one root');
  for (const r of roots) {
    if (!r.startsWith('/')) throw new AuthbenchError('INVALID_ARGUMENT', `snapshot root is not absolute: ${r}`);
  }
  return [
    'find',
    ...roots.map(normalizePattern),
    '-xdev',
    '(',
    '-type',
    'l',
    '-printf',
    'l %m %p\\0%l\\0',
    ')',
    '-o',
    '-printf',
    '%y %m %p\\0',
  ];
}

const FIND_TYPES: Record<string, FsEntry['type']> = { f: 'file', d: 'dir', l: 'symlink' };

/**
 * Parse `snapshotCommand` output. Symlink targets are resolved against the
 * snapshot itself (relative to the link's directory, through other links);
 * roots default to the entries whose parent was not listed.
 */
export function parseSnapshot(stdout: string, roots?: readonly string[]): FsSnapshot {
  const fields = stdout.split('\0');
  const byPath = new Map<string, FsEntry>();
  for (let i = 0; i < fields.length; i++) {
    const record = fields[i] ?? '';
    if (record === '') continue;
    const m = /^(\S) ([0-7]+) (\/.*)$/s.exec(record);
    if (m === null) {
      throw new AuthbenchError('INVALID_ARGUMENT', `unparseable snapshot record ${JSON.stringify(record.slice(0, 80))}`);
    }
    const [, letter = '', mode = '0', rawPath = '/'] = m;
    const type = FIND_TYPES[letter] ?? 'other';
    const path = normalizePattern(rawPath);
    const entry: FsEntry = { path, type, mode: parseInt(mode, 8) };
    if (type === 'symlink') {
      i += 1;
      entry.link = fields[i] ?? '';
    }
    byPath.set(path, entry);
  }

  const entries = resolveLinks([...byPath.values()]);
  entries.sort((a, b) => compareStrings(a.path, b.path));
  const inferredRoots = entries.filter((e) => e.path === '/' || !byPath.has(posix.dirname(e.path))).map((e) => e.path);
  return { roots: (roots ?? inferredRoots).map(normalizePattern), entries };
}

/**
 * Every symlink's `target` recomputed from its link text against these
 * entries, exactly as `parseSnapshot` resolves a fresh listing: relative text
 * against the link's directory (lexically), then component by component so
 * links on the way are followed too. A link without `link` text is resolved
 * from its last known `target` (an absolute realpath) — the best a caller
 * that lost the text can do. Entries come back in the same order; entries
 * that did not change are the same objects.
 */
export function resolveLinks(entries: readonly FsEntry[]): FsEntry[] {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const resolve = linkResolver(byPath, () => true);
  return entries.map((e) => (e.type === 'symlink' ? withTarget(e, resolve(e.path)) : e));
}

/**
 * `resolveLinks` after a change that added paths or replaced or removed regular
 * files, and nothing else: only `stale` links are resolved again; every other
 * link keeps its `target`. Returns the entries that changed (new objects).
 *
 * Why that equals resolving every link: a link's target is a function of the
 * entries its walk looked up — each one's presence and, for a symlink, its
 * text (a file and a directory are passed alike). A resolved link found every
 * path it looked up, and meets a file only as the last one, its target. So an
 * added path can only change a walk that failed where it is now (a dangling
 * link), and a file that went or was replaced only the walks that ended on it
 * (links whose target it was). `stale` must hold those, and every link added
 * or changed; `patch.ts` checks that the change is of this kind and resolves
 * everything (`resolveLinks`) otherwise — a directory or a link that went or
 * changed may be on any walk.
 */
export function resolveStaleLinks(byPath: ReadonlyMap<string, FsEntry>, stale: ReadonlySet<string>): FsEntry[] {
  const resolve = linkResolver(byPath, (path) => stale.has(path));
  const changed: FsEntry[] = [];
  for (const path of stale) {
    const e = byPath.get(path);
    if (e?.type !== 'symlink') continue;
    const next = withTarget(e, resolve(path));
    if (next !== e) changed.push(next);
  }
  return changed;
}

/** The entry with this target (the same object when it already has it). */
function withTarget(e: FsEntry, target: string | undefined): FsEntry {
  if (target === e.target) return e;
  const { target: _stale, ...rest } = e;
  return target === undefined ? rest : { ...rest, target };
}

/**
 * Resolves link paths against `byPath`, memoized for one pass. A link for which
 * `recompute` is false keeps the target it has (resolveStaleLinks).
 */
function linkResolver(byPath: ReadonlyMap<string, FsEntry>, recompute: (linkPath: string) => boolean): (linkPath: string) => string | undefined {
  const resolved = new Map<string, string | undefined>();
  const resolveLink = (linkPath: string, hops: number): string | undefined => {
    if (resolved.has(linkPath)) return resolved.get(linkPath);
    const e = byPath.get(linkPath);
    if (e !== undefined && !recompute(linkPath)) return e.target;
    const raw = e?.link ?? e?.target;
    if (raw === undefined || raw === '' || hops > MAX_SYMLINK_HOPS) return undefined;
    const lexical = raw.startsWith('/') ? normalizePattern(raw) : normalizePattern(posix.join(posix.dirname(linkPath), raw));
    const real = walk(lexical, hops + 1);
    resolved.set(linkPath, real);
    return real;
  };
  // Resolve component by component so links inside the target path are followed too.
  const walk = (path: string, hops: number): string | undefined => {
    let cur = '/';
    for (const seg of path.split('/').filter((s) => s !== '')) {
      const next = cur === '/' ? `/${seg}` : `${cur}/${seg}`;
      const e = byPath.get(next);
      if (e === undefined) return undefined;
      if (e.type === 'symlink') {
        const t = resolveLink(next, hops);
        if (t === undefined) return undefined;
        cur = t;
      } else {
        cur = next;
      }
    }
    return cur;
  };
  return (linkPath) => resolveLink(linkPath, 0);
}

/** Indexed, read-only access to a snapshot. Build once per snapshot with `viewSnapshot`. */
export interface SnapshotView {
  readonly snapshot: FsSnapshot;
  /** Every entry, in path order. */
  readonly sorted: readonly FsEntry[];
  /** The entry at exactly this path, without following a final symlink. */
  get(path: string): FsEntry | undefined;
  /** Is the path inside one of the roots, so that absence means nonexistence? */
  known(path: string): boolean;
  /** realpath inside the image, following every symlink; undefined when missing or dangling. */
  realpath(path: string): string | undefined;
  /** The entry realpath leads to (never a symlink). */
  resolve(path: string): FsEntry | undefined;
  /** Every entry strictly below `dir`, lexically (symlinked directories are not descended). */
  descendants(dir: string): readonly FsEntry[];
  /** The descendants of `dir` whose path has exactly `depth` slashes (a glob without `**` matches one depth). */
  descendantsAtDepth(dir: string, depth: number): readonly FsEntry[];
}

const views = new WeakMap<FsSnapshot, SnapshotView>();

export function viewSnapshot(snapshot: FsSnapshot): SnapshotView {
  const cached = views.get(snapshot);
  if (cached !== undefined) return cached;
  const sorted = [...snapshot.entries].sort((a, b) => compareStrings(a.path, b.path));
  return makeView(snapshot, sorted, new Map(sorted.map((e) => [e.path, e])));
}

/**
 * A snapshot patched from `parent` (patch.ts), whose entries the caller has already sorted by path
 * and indexed (`byPath` holds exactly them): its view is made from both rather than sorting and
 * indexing ~10,000 entries again, and the parent's selections (selectEntries) are carried over,
 * each redone only where a changed entry is or was in it.
 */
export function patchedSnapshot(parent: FsSnapshot, sorted: readonly FsEntry[], byPath: ReadonlyMap<string, FsEntry>): FsSnapshot {
  const snapshot: FsSnapshot = { roots: [...parent.roots], entries: [...sorted] };
  makeView(snapshot, sorted, byPath);
  const inherited = selections.get(parent);
  if (inherited !== undefined) {
    const changes = changedEntries(viewSnapshot(parent), sorted);
    if (changes !== undefined) selections.set(snapshot, carrySelections(inherited, changes));
  }
  return snapshot;
}

/**
 * A subset of a snapshot's entries that callers ask for again and again (a compile expands every
 * pattern of the policy against it, once per command): `keep` says which entries belong to it and
 * may look at nothing but the entry; `all` computes it (quickly, e.g. from a range of the view)
 * and must equal the entries `keep` holds for, in path order. Remembered per snapshot under
 * `key`, which must name `keep` exactly (the pattern goes into it), and carried to snapshots
 * patched from this one.
 */
export function selectEntries(snapshot: FsSnapshot, key: string, keep: (e: FsEntry) => boolean, all: () => FsEntry[]): readonly FsEntry[] {
  let kept = selections.get(snapshot);
  if (kept === undefined) {
    kept = new Map();
    selections.set(snapshot, kept);
  }
  const found = kept.get(key);
  if (found !== undefined) return found.entries;
  const entries = all();
  // A cached image's baseline is compiled against by every policy of a job (generated ones all
  // differ): past a bound, a selection is computed each time rather than kept.
  if (kept.size < SELECTIONS_KEPT_MAX) kept.set(key, { keep, entries });
  return entries;
}

/** Selections kept per snapshot (a policy and its implicit set need ~200). */
export const SELECTIONS_KEPT_MAX = 2048;

/** The entries of one type strictly below `dir` (lexically, as `descendants`), through selectEntries. */
export function descendantsOfType(snapshot: FsSnapshot, dir: string, type: FsEntry['type']): readonly FsEntry[] {
  const prefix = dir === '/' ? '/' : `${dir}/`;
  return selectEntries(
    snapshot,
    `${type} below ${dir}`,
    (e) => e.type === type && e.path !== '/' && e.path.startsWith(prefix),
    () => viewSnapshot(snapshot).descendants(dir).filter((e) => e.type === type),
  );
}

interface Selection {
  keep: (e: FsEntry) => boolean;
  entries: readonly FsEntry[];
}

const selections = new WeakMap<FsSnapshot, Map<string, Selection>>();

/** One path whose entry differs between two snapshots (absent on one side when added or removed). */
interface EntryChange {
  path: string;
  before?: FsEntry;
  after?: FsEntry;
}

/** Beyond this many changed entries (a `cp -r`), selections are computed afresh rather than carried. */
const CARRY_MAX_CHANGES = 256;

/**
 * The entries that differ between a parent's view and a patched snapshot's sorted entries, by a
 * merge of the two sorted lists (an unchanged entry is the same object, so most steps compare no
 * strings); undefined past CARRY_MAX_CHANGES.
 */
function changedEntries(parent: SnapshotView, sorted: readonly FsEntry[]): EntryChange[] | undefined {
  const old = parent.sorted;
  const changes: EntryChange[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length || j < sorted.length) {
    const a = old[i];
    const b = sorted[j];
    if (a !== undefined && a === b) {
      i++;
      j++;
      continue;
    }
    const order = a === undefined ? 1 : b === undefined ? -1 : compareStrings(a.path, b.path);
    if (order === 0 && a !== undefined && b !== undefined) {
      changes.push({ path: a.path, before: a, after: b });
      i++;
      j++;
    } else if (order < 0 && a !== undefined) {
      changes.push({ path: a.path, before: a });
      i++;
    } else if (b !== undefined) {
      changes.push({ path: b.path, after: b });
      j++;
    }
    if (changes.length > CARRY_MAX_CHANGES) return undefined;
  }
  return changes;
}

/** The parent's selections for the patched snapshot: the same lists where no change touches them. */
function carrySelections(inherited: ReadonlyMap<string, Selection>, changes: readonly EntryChange[]): Map<string, Selection> {
  const carried = new Map<string, Selection>();
  for (const [key, selection] of inherited) {
    const { keep } = selection;
    const touching = changes.filter((c) => (c.before !== undefined && keep(c.before)) || (c.after !== undefined && keep(c.after)));
    if (touching.length === 0) {
      carried.set(key, selection);
      continue;
    }
    const gone = new Set(touching.map((c) => c.path));
    const entries = selection.entries.filter((e) => !gone.has(e.path));
    for (const c of touching) {
      if (c.after === undefined || !keep(c.after)) continue;
      entries.splice(insertionPoint(entries, c.after.path), 0, c.after);
    }
    carried.set(key, { keep, entries });
  }
  return carried;
}

/** Where `path` goes in entries sorted by path (binary search): the first entry not before it. */
function insertionPoint(entries: readonly FsEntry[], path: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareStrings(entries[mid]?.path ?? '', path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function makeView(snapshot: FsSnapshot, sorted: readonly FsEntry[], byPath: ReadonlyMap<string, FsEntry>): SnapshotView {

  const realpath = (path: string): string | undefined => {
    let cur = '/';
    if (!byPath.has('/') && !snapshot.roots.includes('/')) {
      // Without `/` listed, walk from the deepest root the path is under.
      const root = snapshot.roots.filter((r) => isWithin(r, path)).sort((a, b) => b.length - a.length)[0];
      if (root === undefined) return undefined;
      if (!byPath.has(root)) return undefined;
      cur = root;
      path = path.slice(root.length);
    }
    for (const seg of path.split('/').filter((s) => s !== '')) {
      const next = cur === '/' ? `/${seg}` : `${cur}/${seg}`;
      const e = byPath.get(next);
      if (e === undefined) return undefined;
      if (e.type === 'symlink') {
        if (e.target === undefined) return undefined;
        cur = e.target;
      } else {
        cur = next;
      }
    }
    return cur;
  };

  // The sorted entries of each depth (slashes in the path), split once per view on first use:
  // expanding a glob without `**` asks for one depth below its static prefix, per pattern.
  let byDepth: Map<number, FsEntry[]> | undefined;
  const atDepth = (depth: number): readonly FsEntry[] => {
    if (byDepth === undefined) {
      byDepth = new Map();
      for (const e of sorted) {
        const d = slashes(e.path);
        const list = byDepth.get(d);
        if (list === undefined) byDepth.set(d, [e]);
        else list.push(e);
      }
    }
    return byDepth.get(depth) ?? [];
  };
  // Entries of `list` (sorted) strictly below `dir`: the range that starts with `dir/`.
  const below = (list: readonly FsEntry[], dir: string): FsEntry[] => {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    const out: FsEntry[] = [];
    for (let i = insertionPoint(list, prefix); i < list.length; i++) {
      const e = list[i];
      if (e === undefined || !e.path.startsWith(prefix)) break;
      if (e.path !== '/') out.push(e);
    }
    return out;
  };

  const view: SnapshotView = {
    snapshot,
    sorted,
    get: (path) => byPath.get(path),
    known: (path) => snapshot.roots.some((r) => isWithin(r, path)),
    realpath,
    resolve: (path) => {
      const real = realpath(path);
      return real === undefined ? undefined : byPath.get(real);
    },
    descendants: (dir) => below(sorted, dir),
    descendantsAtDepth: (dir, depth) => below(atDepth(depth), dir),
  };
  views.set(snapshot, view);
  return view;
}

/**
 * The snapshot entries a pattern covers (glob expansion against the image).
 * Lexical, like `covers`: a symlink is returned as the symlink entry, and the
 * trees behind symlinked directories are not searched.
 */
function slashes(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/** The path's first `depth` segments (`/a/b` for depth 2 of `/a/b/c`); undefined when it has fewer. */
function leadingSegments(path: string, depth: number): string | undefined {
  let at = 0;
  for (let n = 0; n < depth; n++) {
    at = path.indexOf('/', at);
    if (at === -1) return undefined;
    at += 1;
  }
  const end = path.indexOf('/', at);
  return end === -1 ? path : path.slice(0, end);
}

export function expandPattern(pattern: string, snapshot: FsSnapshot): readonly FsEntry[] {
  return selectEntries(snapshot, `expand ${pattern}`, (e) => covers(pattern, e.path), () => expandAgainstView(pattern, viewSnapshot(snapshot)));
}

/** expandPattern from the view's ranges: what matching every entry gives, without matching every entry. */
function expandAgainstView(pattern: string, view: SnapshotView): FsEntry[] {
  const prefix = staticPrefix(pattern);
  // `<static base>/**` covers its base and everything lexically below it, which is exactly the
  // candidates: no need to match each of thousands of entries segment by segment (most of a
  // rollout's compile time went there). Any other glob is matched entry by entry.
  if (hasRecursiveTail(pattern)) {
    const candidates = [view.get(prefix), ...view.descendants(prefix)].filter((e): e is FsEntry => e !== undefined);
    if (!isGlob(pattern)) return candidates;
    // A glob before the `/**` (`/usr/lib/*-linux-gnu/**`): a path is covered when its leading
    // segments, as many as the base has, match the base. Thousands of entries below the static
    // prefix share a few hundred leading parts, so each part is matched once.
    const base = pattern.slice(0, -3);
    const depth = slashes(base);
    const matched = new Map<string, boolean>();
    return candidates.filter((e) => {
      const head = leadingSegments(e.path, depth);
      if (head === undefined) return false;
      let covered = matched.get(head);
      if (covered === undefined) {
        covered = covers(base, head);
        matched.set(head, covered);
      }
      return covered;
    });
  }
  // Without `/**` a pattern covers only paths of its own depth: only those are matched.
  const depth = slashes(pattern);
  const base = view.get(prefix);
  const atDepth = [...(base !== undefined && slashes(base.path) === depth ? [base] : []), ...view.descendantsAtDepth(prefix, depth)];
  return atDepth.filter((e) => covers(pattern, e.path));
}

export interface TreeEntry {
  path: string;
  type: FsEntry['type'];
  mode?: number;
  /** Raw link text for symlinks, relative or absolute, as `readlink` would print it. */
  link?: string;
}

/**
 * A snapshot from a literal tree (fixtures, generated trees): written out in
 * the `snapshotCommand` format and parsed back, so symlink targets are
 * resolved exactly as for a real image. Ancestor directories are implied.
 */
export function buildSnapshot(tree: readonly TreeEntry[], roots: readonly string[] = ['/']): FsSnapshot {
  const all = new Map<string, TreeEntry>();
  for (const root of roots) all.set(normalizePattern(root), { path: normalizePattern(root), type: 'dir' });
  for (const e of tree) {
    const path = normalizePattern(e.path);
    for (let dir = posix.dirname(path); dir !== '/' && !all.has(dir); dir = posix.dirname(dir)) all.set(dir, { path: dir, type: 'dir' });
    all.set(path, { ...e, path });
  }
  const letter: Record<FsEntry['type'], string> = { file: 'f', dir: 'd', symlink: 'l', other: 'c' };
  const records = [...all.values()].map((e) => {
    const mode = (e.mode ?? (e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644)).toString(8);
    const head = `${letter[e.type]} ${mode} ${e.path}\0`;
    return e.type === 'symlink' ? `${head}${e.link ?? ''}\0` : head;
  });
  return parseSnapshot(records.join(''), roots);
}
