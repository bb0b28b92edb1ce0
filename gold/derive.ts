/**
 * Oracle trace events → gold sets. Pure: the image comes in as two lookups
 * over a filesystem snapshot taken before the run (`realpath`, `isDirectory`).
 *
 * Rules (DERIVATION_RULES_VERSION 3):
 * 1. Only calls that succeeded are needs. Failed calls (ENOENT probing by
 *    loaders and interpreters, EEXIST from `mkdir -p`, ...) are not. Calls
 *    refused with EACCES/EPERM are listed as `denials` (a warning: the oracle
 *    ran as root, so a denial means the environment differs from the author's).
 *    A call whose process died inside it (result `?`) counts as succeeded.
 * 2. read: opens for reading. An open with O_RDWR is a read and a write (the
 *    kernel checks both). `access`/faccessat and O_PATH opens (existence and
 *    permission probes, no content) are nothing; `memfd` is nothing.
 * 3. write: opens for writing, O_TRUNC, O_CREAT|O_EXCL, truncate, unlink,
 *    rmdir, mkdir, chmod, chown (on the path); rename (both names); link and
 *    symlink (the new name only: the target's content is untouched).
 * 4. execute: every successful execve, on the realpath of the executable in
 *    the image (the path as requested when it did not exist before the run).
 *    The kernel runs a script's `#!` interpreter without an execve of its
 *    own; when the context provides `interpreter` (the shebang, read from the
 *    image), the interpreter's realpath is an execute need too.
 * 5. Paths are lexical as the parser produced them (absolute, normalised, not
 *    resolved through symlinks); implicit patterns are matched against both
 *    the lexical path and the kernel's resolved path (`real_path`). Glob
 *    characters in real names (`* ? [`) become `?` so the entry stays a valid
 *    pattern that still covers the file (with a warning).
 * 6. Noise: entries covered by the implicit set are dropped everywhere; paths
 *    with a `__pycache__` segment or ending in `.pyc` are dropped by rule
 *    (python ignores failures to read or write its bytecode caches).
 * 7. Directories: a listing (an O_DIRECTORY open, or any read open of a path
 *    that is a directory at that moment) and an O_TMPFILE open (the directory
 *    only holds the unnamed file) go to `directories` — enforced, never scored
 *    (Appendix A: an exact existing directory contributes nothing). A call that
 *    changes a directory itself — chmod, chown, rmdir, rename — is a write need
 *    on it like on a file, whether the image had it or the run made it (the
 *    mode of `~/.ssh` is what a permissions fix delivers; a human lists it).
 *    A directory the run created and kept (`mkdir`) is a write need too.
 * 8. Ephemeral: a path that did not exist before the run and does not exist
 *    after it (temp files of `sed -i`, compilers, git's `*.lock` and
 *    `tmp_obj_*`, a renamed-away source name) is never an entry, because its
 *    name is often random. It becomes an `ephemeral` pattern on each axis it
 *    was used on: the nearest ancestor that outlives the run, then `*` for
 *    every further segment, the last keeping its extension (`/app/*.lock`).
 *    Existence during the run is simulated from the snapshot and the calls in
 *    order (creation, removal, rename moves tracked children along); a call
 *    that needs an existing path and succeeded proves the path existed, which
 *    covers paths the snapshot did not list. `isDirectory` must therefore
 *    cover the places the oracle creates files in (workdir, output dirs):
 *    there, undefined is read as "did not exist".
 *    Ephemeral paths under implicit patterns (/tmp) are dropped.
 * 8b. Run-named stores: a git object store (`objects/` of a git directory: a
 *    segment ending in `.git`, so `/app/repo/.git/objects`, `/srv/x.git/objects`
 *    and submodules' `.git/modules/<m>/objects`) names what the run adds by
 *    content and time (loose objects `<2 hex>/<38 hex>`, their fan-out
 *    directories, `pack-<hash>.*`, commit-graph files, `tmp_obj_*`). Every
 *    path there that did not exist before the run, kept or not, becomes one
 *    need `<store>/**` on its axis instead, so two derivations of a task that
 *    commits agree and the grant covers the objects a replay names
 *    differently. What existed before the run keeps its exact name (the
 *    image fixes it). Lock files, ORIG_HEAD, logs/, COMMIT_EDITMSG and refs
 *    the task names have fixed names and stay under rules 3 and 8.
 * 8c. Lock protocol: a name created for the run then renamed onto the file
 *    it stands for (`refs/heads/x.lock` → `refs/heads/x`, any lock-then-
 *    rename), or a `*.lock` unlinked again (a rolled-back lock), is removed
 *    from its directory, which needs removal rights there. A policy grants
 *    them only through an existing file written in that directory or above
 *    (its removal right covers what is beneath) or a `/**` base. So where no
 *    existing file is written at or above the ephemeral anchor (a new branch
 *    in a repository whose index and HEAD stay untouched), the ephemeral write
 *    entry is `<anchor>/**` in place of the name patterns it covers. Where
 *    one is (sed -i renaming over its file, git updating the index), the name
 *    patterns stay: the kernel already lets the rename happen.
 * 9. Scored roots: the task spec's `scored_roots` when given. Otherwise
 *    read/write: the workdir plus, for every kept write outside it, its first
 *    two path segments (`/srv/outbox/x.json` → `/srv/outbox`; a file directly
 *    under a top-level directory → that directory); execute: /usr/bin,
 *    /usr/sbin, /usr/local/bin, /usr/local/sbin, /bin, /sbin and the workdir.
 * 10. required (S_gold) = needs inside their axis' scored roots; support =
 *    needs outside them (gcc's cc1, headers under /usr/include). The enforced
 *    gold policy is required ∪ support ∪ directories ∪ ephemeral ∪ implicit
 *    (∪ flaky, which is already in required/support): see `goldPolicy`.
 * 11. Network: inet/inet6 connect, bind and sendto attempts that were not
 *    denied (a refused connect is still an endpoint the oracle uses), and unix
 *    socket paths connected to successfully. `ip_sockets` records that an IP
 *    socket was created at all.
 * 12. Reviewed inputs: paths the instruction asks to be reviewed, audited,
 *    read or inspected (`reviewed`, from instruction.ts) are read needs when
 *    the image had them, whether or not the oracle opened them: a human lists
 *    the note the instruction says to review even when the reference
 *    solution already knows what it says. A named file is a need; a named
 *    directory is one itself (what an audit of it looks at: its mode, its
 *    listing — a read grant on a directory is only its listing), and so is
 *    every existing path beneath it whose mode or owner the oracle changed
 *    (an audit-and-fix stats before it chmods; the stat family is not traced).
 *    Nothing in the spec's `sensitive` read set is ever added (a warning says
 *    so), and the additions still go through rules 6 and 9-10 (implicit
 *    dropped, outside the roots = support).
 * Results do not depend on how independent processes interleave: sets are
 * sorted, and the simulated namespace only orders calls on the same path.
 */
import { compareStrings } from '../core/index.ts';
import { isWithin, covers, normalizePattern } from '../sandbox/paths/index.ts';
import { isWriteOp, type FileEvent, type TraceEvent } from '../sandbox/trace/index.ts';
import { mapAxes, sortUnique, type Axis, type AxisLists } from './axes.ts';
import { canonicalNetwork, emptyNetwork, endpointKey, type Endpoint, type GoldNetwork } from './schema.ts';

export interface DeriveContext {
  /** Where solve.sh starts (task.workdir). */
  workdir: string;
  /** The task spec's scored_roots; inferred when absent (rule 9). */
  scoredRoots?: AxisLists | undefined;
  /** Merged implicit set (mergeImplicit(defaultImplicit(), spec implicit, harness paths)). */
  implicit: AxisLists;
  /** realpath inside the image before the run; undefined when the path did not exist. */
  realpath: (path: string) => string | undefined;
  /** Before the run: true = directory, false = exists and is not a directory, undefined = did not exist. */
  isDirectory: (path: string) => boolean | undefined;
  /** The `#!` interpreter of an executable script in the image (as written in the shebang), if it is one. */
  interpreter?: ((realpath: string) => string | undefined) | undefined;
  /** Paths the instruction asks to be reviewed (reviewedPaths(task.instruction)); rule 12. */
  reviewed?: readonly string[] | undefined;
  /** The task spec's sensitive_permissions: rule 12 never adds a read they cover. */
  sensitive?: AxisLists | undefined;
}

export interface Denial {
  /** seccomp: a syscall the launcher's filter refused (the oracle runs under the harness guard). */
  kind: 'file' | 'exec' | 'network' | 'seccomp';
  op: string;
  /** The system call that was refused (openat, rename, chmod, ...). */
  syscall: string;
  /** The path, or `address:port` for network calls. */
  target: string;
  errno: string;
  pid: number;
}

export interface Derivation {
  required: AxisLists;
  support: AxisLists;
  directories: AxisLists;
  ephemeral: AxisLists;
  network: GoldNetwork;
  implicit: AxisLists;
  scored_roots: AxisLists;
  /** True when scored_roots were inferred (no spec roots given). */
  scored_roots_inferred: boolean;
  denials: Denial[];
  /** Unparsed trace lines: needs they carry are missing from the sets. */
  unparsed: number;
  /** Sorted human-readable warnings (denials, unparsed lines, renamed glob characters). */
  warnings: string[];
}

export const DEFAULT_EXECUTE_ROOTS: readonly string[] = ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin', '/bin', '/sbin'];

type Kind = 'dir' | 'file';

interface Observation {
  axis: Axis;
  path: string;
  /** Paths the kernel resolved it to (real_path) or the requested name of an exec; for implicit matching. */
  aliases: Set<string>;
  /** Used as a directory listing / on a directory. */
  directory: boolean;
  /** Only a place: listed (read) or an O_TMPFILE made in it (write); never a change of the directory itself. */
  container: boolean;
}

class Namespace {
  readonly #before = new Map<string, Kind | null>();
  readonly #now = new Map<string, Kind | null>();
  readonly #isDirectory: DeriveContext['isDirectory'];

  constructor(isDirectory: DeriveContext['isDirectory']) {
    this.#isDirectory = isDirectory;
  }

  before(path: string): Kind | null {
    let k = this.#before.get(path);
    if (k === undefined) {
      const d = this.#isDirectory(path);
      k = d === undefined ? null : d ? 'dir' : 'file';
      this.#before.set(path, k);
    }
    return k;
  }

  now(path: string): Kind | null {
    return this.#now.has(path) ? (this.#now.get(path) ?? null) : this.before(path);
  }

  /**
   * The call succeeded, so the path existed at that moment. Absent by our
   * account and never touched: it existed before the run (the snapshot did
   * not cover it). Removed earlier in the run: the calls of two processes
   * interleaved; take the kernel's word.
   */
  witness(path: string, kind: Kind = 'file'): void {
    if (this.now(path) !== null) return;
    if (this.#now.has(path)) this.#now.set(path, kind);
    else this.#before.set(path, kind);
  }

  set(path: string, kind: Kind | null): void {
    this.#now.set(path, kind);
  }

  rename(from: string, to: string): void {
    const kind = this.now(from) ?? 'file';
    const prefix = `${from}/`;
    const moved = [...this.#now].filter(([p, k]) => k !== null && p.startsWith(prefix));
    for (const [p] of moved) this.#now.set(p, null);
    for (const [p, k] of moved) this.#now.set(`${to}/${p.slice(prefix.length)}`, k);
    this.#now.set(from, null);
    this.#now.set(to, kind);
  }

  /** Did not exist before the run and does not exist after it. */
  ephemeral(path: string): boolean {
    return this.before(path) === null && this.now(path) === null;
  }
}

function isPythonCache(path: string): boolean {
  return path.endsWith('.pyc') || path.split('/').includes('__pycache__');
}

const GLOB_CHARS = /[*?[]/g;
const HAS_GLOB_CHAR = /[*?[]/;

function rootOf(path: string): string {
  const segs = path.split('/').filter((s) => s !== '');
  if (segs.length >= 3) return `/${segs[0]}/${segs[1]}`;
  if (segs.length === 2) return `/${segs[0]}`;
  return path;
}

function generalizeName(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1) : '';
  return /^[A-Za-z0-9]{1,8}$/.test(ext) ? `*.${ext}` : '*';
}

function endpoint(e: { family: string; address?: string | undefined; port?: number | undefined }): Endpoint | undefined {
  if ((e.family !== 'inet' && e.family !== 'inet6') || e.address === undefined || e.port === undefined) return undefined;
  return { family: e.family, address: e.address, port: e.port };
}

export function deriveGold(events: readonly TraceEvent[], context: DeriveContext): Derivation {
  const workdir = normalizePattern(context.workdir);
  const implicit = mapAxes((axis) => context.implicit[axis].map(normalizePattern));
  const ns = new Namespace(context.isDirectory);
  const observations = new Map<string, Observation>();
  const denials: Denial[] = [];
  const network = emptyNetwork();
  const warnings = new Set<string>();
  const lockRemoved = new Set<string>();
  const metadataChanged = new Set<string>();
  let unparsed = 0;

  const observe: Observe = (axis, path, directory, alias, container = false) => {
    const key = `${axis}\0${path}`;
    let o = observations.get(key);
    if (o === undefined) {
      o = { axis, path, aliases: new Set(), directory: false, container: true };
      observations.set(key, o);
    }
    if (directory) o.directory = true;
    // A container only while every use of it was one: a chmod after a listing changes the directory.
    if (!(directory && container)) o.container = false;
    if (alias !== undefined && alias !== path) o.aliases.add(alias);
  };

  for (const e of events) {
    switch (e.kind) {
      case 'unparsed':
        unparsed += 1;
        break;
      case 'process':
        break;
      case 'seccomp': {
        // Never a need (the call did not happen), but a refusal the oracle met must be seen: a warning.
        const d = denialOf(e);
        if (d !== undefined) denials.push(d);
        break;
      }
      case 'exec': {
        if (e.errno !== undefined) {
          const d = denialOf(e);
          if (d !== undefined) denials.push(d);
          break;
        }
        ns.witness(e.path);
        const real = context.realpath(e.path) ?? e.path;
        ns.witness(real);
        observe('execute', real, false, e.path);
        const interp = context.interpreter?.(real);
        if (interp !== undefined) {
          const interpPath = normalizePattern(interp);
          observe('execute', context.realpath(interpPath) ?? interpPath, false, interpPath);
        }
        break;
      }
      case 'network': {
        if (e.denied) {
          const d = denialOf(e);
          if (d !== undefined) denials.push(d);
          break;
        }
        if (e.op === 'socket') {
          if (e.errno === undefined && (e.family === 'inet' || e.family === 'inet6')) network.ip_sockets = true;
          break;
        }
        if (e.family === 'unix') {
          if (e.op === 'connect' && e.errno === undefined && e.address !== undefined) network.unix.push(e.address);
          break;
        }
        const ep = endpoint(e);
        if (ep === undefined) break;
        const list = e.op === 'connect' ? network.connect : e.op === 'bind' ? network.bind : network.send;
        list.push(ep);
        break;
      }
      case 'file': {
        if (e.errno !== undefined) {
          const d = denialOf(e);
          if (d !== undefined) denials.push(d);
          break;
        }
        // The lock protocol's removals (rule 8c): committed by rename, or rolled back by unlinking a `*.lock`.
        if (e.op === 'rename' || (e.op === 'unlink' && e.path.endsWith('.lock'))) lockRemoved.add(e.path);
        if (e.op === 'chmod' || e.op === 'chown') metadataChanged.add(e.path);
        applyFileEvent(e, ns, observe);
        break;
      }
    }
  }

  observeReviewed(context, ns, metadataChanged, observe, warnings);

  // Classify every observation (rules 6-8), then split by scored roots (9-10).
  const isImplicit = (o: Observation) =>
    implicit[o.axis].some((pattern) => covers(pattern, o.path) || [...o.aliases].some((a) => covers(pattern, a)));

  const needs: Observation[] = [];
  const directories: Record<Axis, string[]> = { read: [], write: [], execute: [] };
  const ephemeral: Record<Axis, string[]> = { read: [], write: [], execute: [] };
  const escape = (path: string) => {
    if (!HAS_GLOB_CHAR.test(path)) return path;
    warnings.add(`glob characters in ${JSON.stringify(path)} were replaced by ? to keep it a valid pattern`);
    return path.replace(GLOB_CHARS, '?');
  };

  const stores = new Map<string, Observation>();
  const removedBeneath = new Set<string>();
  for (const o of [...observations.values()].sort((a, b) => compareStrings(`${a.axis}\0${a.path}`, `${b.axis}\0${b.path}`))) {
    if (isPythonCache(o.path) || isImplicit(o)) continue;
    const store = objectStoreOf(o.path);
    if (store !== undefined && ns.before(o.path) === null) {
      const pattern = `${store}/**`;
      stores.set(`${o.axis}\0${pattern}`, { axis: o.axis, path: pattern, aliases: new Set(), directory: false, container: false });
      continue;
    }
    if (ns.ephemeral(o.path)) {
      const { anchor, pattern } = ephemeralPattern(o.path, ns, escape);
      ephemeral[o.axis].push(pattern);
      // Files only: a directory moved away needs remove_dir, which no file grant implies (left to `/**` overrides).
      if (o.axis === 'write' && !o.directory && lockRemoved.has(o.path)) removedBeneath.add(anchor);
      continue;
    }
    if (o.container) {
      directories[o.axis].push(escape(o.path));
      continue;
    }
    needs.push(o);
  }

  // Rule 8c. Removal rights beneath a directory come only from an existing file written in it
  // (or above it); where none is, the removed names need `<anchor>/**`, which covers their patterns.
  const existingWrites = needs.filter((o) => o.axis === 'write' && ns.before(o.path) === 'file').map((o) => parentOf(o.path));
  const removalTrees = [...removedBeneath].filter((anchor) => !existingWrites.some((dir) => isWithin(dir, anchor)));
  if (removalTrees.length > 0) {
    const all = removalTrees.map((a) => normalizePattern(`${escape(a)}/**`));
    const trees = all.filter((t) => !all.some((other) => other !== t && covers(other, t)));
    ephemeral.write = [...ephemeral.write.filter((p) => !trees.some((t) => covers(t, p))), ...trees];
  }

  const inferred = context.scoredRoots === undefined;
  const scoredRoots = inferred ? inferRoots(workdir, needs, warnings) : mapAxes((axis) => (context.scoredRoots as AxisLists)[axis].map(normalizePattern));
  // A store pattern is within a root when its directory is (the `/**` tail is not a name).
  const inRoots = (o: Observation) => scoredRoots[o.axis].some((root) => isWithin(root, o.path.endsWith('/**') ? o.path.slice(0, -3) : o.path));
  // A store need is escaped like any name, then keeps its `/**` tail (escaping the tail would make it a literal name).
  const storeNeeds = [...stores.values()].map((o) => ({ ...o, path: `${escape(o.path.slice(0, -3))}/**` }));
  const split = (axis: Axis, inside: boolean) => [
    ...needs.filter((o) => o.axis === axis && inRoots(o) === inside).map((o) => escape(o.path)),
    ...storeNeeds.filter((o) => o.axis === axis && inRoots(o) === inside).map((o) => o.path),
  ];
  const required = mapAxes((axis) => split(axis, true));
  const support = mapAxes((axis) => split(axis, false));

  if (unparsed > 0) warnings.add(`${unparsed} strace line(s) could not be parsed; needs they carry are missing`);
  if (denials.length > 0) warnings.add(`the oracle was denied ${denials.length} operation(s); see denials`);
  denials.sort((a, b) => compareStrings(renderDenial(a), renderDenial(b)) || a.pid - b.pid);

  return {
    required,
    support,
    directories: mapAxes((axis) => directories[axis]),
    ephemeral: mapAxes((axis) => ephemeral[axis]),
    network: canonicalNetwork(network),
    implicit,
    scored_roots: scoredRoots,
    scored_roots_inferred: inferred,
    denials,
    unparsed,
    warnings: sortUnique(warnings),
  };
}

type Observe = (axis: Axis, path: string, directory: boolean, alias?: string, container?: boolean) => void;

/** Rule 12: what the instruction asks to be reviewed, as read needs on what the image had. */
function observeReviewed(context: DeriveContext, ns: Namespace, metadataChanged: ReadonlySet<string>, observe: Observe, warnings: Set<string>): void {
  const sensitive = (context.sensitive?.read ?? []).map(normalizePattern);
  const isSensitive = (p: string) => sensitive.some((pattern) => covers(pattern, p) || covers(pattern, context.realpath(p) ?? p));
  for (const named of context.reviewed ?? []) {
    const path = normalizePattern(named);
    const kind = ns.before(path);
    if (kind === null) continue;
    if (isSensitive(path)) {
      warnings.add(`the instruction asks to review ${path}, which the spec marks sensitive: not a read need`);
      continue;
    }
    // Not the container rule 7 makes of a listing: the audited directory itself is what is looked at.
    observe('read', path, kind === 'dir', context.realpath(path));
    if (kind !== 'dir') continue;
    for (const changed of [...metadataChanged].sort(compareStrings)) {
      if (changed !== path && isWithin(path, changed) && ns.before(changed) !== null && !isSensitive(changed)) {
        observe('read', changed, ns.before(changed) === 'dir', context.realpath(changed));
      }
    }
  }
}

function applyFileEvent(e: FileEvent, ns: Namespace, observe: Observe): void {
  const { path } = e;
  if (e.op === 'read') {
    ns.witness(path, e.flags?.includes('O_DIRECTORY') === true ? 'dir' : 'file');
    const listing = ns.now(path) === 'dir';
    observe('read', path, listing, e.real_path, listing);
    return;
  }
  // access and memfd are on no axis; the rest are writes.
  if (!isWriteOp(e.op)) return;
  // O_TMPFILE names the directory the unnamed file is made in.
  const tmpfile = e.flags?.includes('O_TMPFILE') ?? false;
  if (e.flags?.includes('O_RDWR') === true && !tmpfile) observe('read', path, false, e.real_path);
  switch (e.op) {
    case 'write':
    case 'truncate':
    case 'create': {
      if (tmpfile) {
        observe('write', path, true, undefined, true);
        return;
      }
      if (e.op === 'create' || e.may_create === true) {
        if (ns.now(path) === null) ns.set(path, 'file');
      } else {
        ns.witness(path);
      }
      observe('write', path, false, e.real_path);
      return;
    }
    case 'unlink':
    case 'rmdir': {
      ns.witness(path, e.op === 'rmdir' ? 'dir' : 'file');
      observe('write', path, ns.now(path) === 'dir' || e.op === 'rmdir');
      ns.set(path, null);
      return;
    }
    case 'mkdir':
      ns.set(path, 'dir');
      observe('write', path, false);
      return;
    case 'chmod':
    case 'chown':
      ns.witness(path);
      observe('write', path, ns.now(path) === 'dir', e.real_path);
      return;
    case 'rename': {
      if (e.path2 === undefined) return;
      ns.witness(path);
      const dir = ns.now(path) === 'dir';
      observe('write', path, dir);
      ns.rename(path, e.path2);
      observe('write', e.path2, dir);
      return;
    }
    case 'link':
    case 'symlink':
      if (e.path2 === undefined) return;
      if (e.op === 'link') ns.witness(path);
      ns.set(e.path2, 'file');
      observe('write', e.path2, false);
      return;
  }
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** The nearest ancestor that outlives the run (`anchor`), then `*` per segment, the last keeping its extension (rule 8). */
function ephemeralPattern(path: string, ns: Namespace, escape: (literal: string) => string): { anchor: string; pattern: string } {
  const segs = path.split('/').filter((s) => s !== '');
  let anchor = 0;
  for (let i = segs.length - 1; i >= 1; i--) {
    if (!ns.ephemeral(`/${segs.slice(0, i).join('/')}`)) {
      anchor = i;
      break;
    }
  }
  const rest = segs.slice(anchor).map((s, i, all) => (i === all.length - 1 ? generalizeName(s) : '*'));
  const dir = `/${segs.slice(0, anchor).join('/')}`;
  return { anchor: dir, pattern: normalizePattern(`${escape(dir)}/${rest.join('/')}`) };
}

function inferRoots(workdir: string, needs: readonly Observation[], warnings: Set<string>): AxisLists {
  const extra = new Set<string>();
  for (const o of needs) {
    if (o.axis !== 'write' || isWithin(workdir, o.path)) continue;
    const root = rootOf(o.path);
    if (HAS_GLOB_CHAR.test(root)) warnings.add(`cannot use ${JSON.stringify(root)} as an inferred scored root (glob characters)`);
    else extra.add(root);
  }
  const fileRoots = [workdir, ...extra];
  return mapAxes((axis) => (axis === 'execute' ? [...DEFAULT_EXECUTE_ROOTS, workdir] : fileRoots));
}

/** `seccomp: chmod(/app/x) refused EPERM`, `write /app/x (openat) EACCES`: what, where, through which call. */
export function renderDenial(d: Denial): string {
  if (d.kind === 'seccomp') return `seccomp refused ${d.syscall}${d.target === '' ? '' : ` ${d.target}`} ${d.errno}`;
  const op = d.kind === 'exec' ? 'exec' : d.op;
  return `${op} ${d.target} (${d.syscall}) ${d.errno}`;
}

/**
 * A refused call (Landlock EACCES/EPERM, a seccomp refusal) as a Denial;
 * undefined for anything else. The sufficiency replay lists its denials with it too.
 */
export function denialOf(e: TraceEvent): Denial | undefined {
  switch (e.kind) {
    case 'seccomp':
      return { kind: 'seccomp', op: e.syscall, syscall: e.syscall, target: e.detail, errno: e.errno, pid: e.pid };
    case 'exec':
      return e.denied && e.errno !== undefined ? { kind: 'exec', op: 'exec', syscall: e.syscall, target: e.path, errno: e.errno, pid: e.pid } : undefined;
    case 'network': {
      if (!e.denied) return undefined;
      const ep = endpoint(e);
      return { kind: 'network', op: e.op, syscall: e.syscall, target: ep === undefined ? (e.address ?? e.domain) : endpointKey(ep), errno: e.errno ?? 'EPERM', pid: e.pid };
    }
    case 'file': {
      if (!e.denied || e.errno === undefined) return undefined;
      const target = e.path2 === undefined ? e.path : `${e.path} -> ${e.path2}`;
      return { kind: 'file', op: e.op, syscall: e.syscall, target, errno: e.errno, pid: e.pid };
    }
    case 'process':
    case 'unparsed':
      return undefined;
  }
}

/** The git object store a path lies in (rule 8b), or undefined. */
export function objectStoreOf(path: string): string | undefined {
  const segs = path.split('/');
  for (let i = 2; i < segs.length - 1; i++) {
    if (segs[i] === 'objects' && segs.slice(1, i).some((s) => s.endsWith('.git'))) return segs.slice(0, i + 1).join('/');
  }
  return undefined;
}
