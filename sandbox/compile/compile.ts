/**
 * Policy → launcher rules. Pure: the image's filesystem comes in as an
 * FsSnapshot, the kernel's Landlock ABI as a number.
 *
 * Landlock rules attach to existing inodes and a rule on a directory applies
 * to everything beneath it. So:
 *
 * read     file: read_file on it (exact). Directory named without `/**`: read_dir
 *          on it — widened when it has subdirectories, which become listable too.
 *          `/**` on an existing base: read_file + read_dir on the base (exact).
 *          A glob expands against the snapshot; each match is granted as above.
 * write    existing file: write_file + truncate on it (exact), plus, for removing
 *          or replacing it, remove_file on its directory (widened: any file beneath
 *          that directory can be removed). Existing directory without `/**`: only
 *          the directory itself is covered, so only its removal (remove_dir on the
 *          parent, widened). `/**` on an existing base: every write right except
 *          device nodes on the base (exact) plus the base's own removal.
 *          A path that does not exist yet: create rights (make_reg, make_dir,
 *          write_file, truncate; for `/**` the full write set) on the nearest
 *          existing ancestor directory — widened to "any new file beneath it".
 *          The ancestor must not be `/` and at most `maxMissingSegments` levels
 *          up, otherwise the entry is reported `nonexistent`. A glob whose
 *          wildcards are all in the last segment also gets create rights on its
 *          literal directory (new matching files), widened.
 *          Renames also need make_* on the target directory and, across
 *          directories, refer: granted only beneath `/**` bases.
 * execute  canonicalised (realpath) first; a file gets execute + read_file
 *          (interpreters read scripts) — widened when the read axis does not
 *          cover the file. `/**` bases get the same on the directory.
 * Symlinks: a rule lands on the target inode, which is then reachable by its own
 *          path too (widened when the pattern does not cover that path). For
 *          read/write `/**` bases, symlinks beneath that leave the base get their
 *          targets granted (widened, one facet per link naming `link -> target`),
 *          so what the pattern covers lexically works — except a target that is
 *          reserved for the harness, `/`, an ancestor of (or equal to) the base
 *          or of any path the policy or the implicit set names (the link would
 *          hand the base's rights over all of it), or outside the snapshot
 *          roots: those are not granted and reported (`reserved` / `narrowed`).
 *          The snapshot is patched from each command's trace, so an agent that
 *          may write `/tmp/**` could `ln -s /etc /tmp/e`, or replace a file the
 *          policy names with a link to `/etc/shadow`, and have the next compile
 *          grant the target. So with a `baseline` (the container listed before
 *          the first command, never patched) only links the baseline has too,
 *          resolving to the same place, are followed (`trustSnapshot`); every
 *          other link is compiled as if it dangled — a write entry can still
 *          remove the link itself — and reported `narrowed` ("... is a symlink
 *          created at run time: not followed"). Without a baseline every link
 *          is followed (gold derivation, scoring).
 * Reserved paths (`RESERVED_PATHS`: the harness, the validators and their
 *          verdict, the reference solution) get nothing: an entry whose static
 *          prefix lies within one is dropped and reported `reserved`; an entry
 *          whose rules cover one from above (`/**`, `/opt/**`) keeps its grants,
 *          since Landlock cannot leave out a subtree, with a `reserved` facet
 *          saying how the harness keeps that path out of reach instead; and any
 *          grant that still resolves into a reserved path (a glob match, an
 *          alias through a link) is dropped and reported — `mergeGrants` drops
 *          such grants too, as the last line.
 * read/execute entries that do not exist but that a write entry will create
 *          get their rights on the same creation anchor (widened); so do
 *          read/execute globs a write entry covers (new matches at run time).
 * Nothing is dropped silently: unmatched globs are `no-match`, missing paths
 * `nonexistent`, every limit of the ABI is `abi-limited`.
 * The implicit runtime set (loader, libraries, /dev/null, ...) is compiled the
 * same way (without removal grants) and reported with source `implicit`.
 * chmod/chown cannot be limited by path; they are allowed (`setattr`) as soon as
 * the policy grants any write, and reported as a widening. With `setattr` the
 * launcher allows set-user/group-ID bits too: every sandboxed process runs with
 * no_new_privs, so the bits raise nothing inside the sandbox (a process
 * outside it executing such a file would, which the harness never does).
 * Network: ports from the section (Landlock ABI >= 4 filters TCP by port, not
 * host), socket domains for seccomp; `allow_all` sets `tcpUnrestricted`.
 */
import { posix } from 'node:path';
import { AuthbenchError, compareStrings } from '../../core/index.ts';
import {
  canonicalizeExecutables,
  covers,
  descendantsOfType,
  expandPattern,
  hasRecursiveTail,
  isGlob,
  isWithin,
  normalizePattern,
  patternReaches,
  staticPrefix,
  trustSnapshot,
  viewSnapshot,
} from '../paths/index.ts';
import type { FsEntry, FsSnapshot, SnapshotView, UntrustedLink } from '../paths/index.ts';
import { FS_ACCESS, type FsAccess, type FsRule, type LauncherRules } from '../launcher/index.ts';
import type { NetworkSection, Policy, PolicyAxis } from '../policy/index.ts';
import { CREATE_BENEATH, EXECUTE_FILE, FILE_ACCESS, READ_TREE, WRITE_TREE, handledFsAccess } from './access.ts';
import { summarize } from './fidelity.ts';
import type { FidelityEntry, FidelityKind, FidelityReport, Grant } from './fidelity.ts';
import { RESERVED_PATHS, expandReserved, keptAway, reservedFor, reservedPhrase } from './reserved.ts';
import type { ReservedPath } from './reserved.ts';

export interface PatternSet {
  read: readonly string[];
  write: readonly string[];
  execute: readonly string[];
}

export interface CompileOptions {
  /** Runtime grants every command needs (dynamic loader, libraries, /dev/null, ...). */
  implicit: PatternSet;
  /** Landlock ABI of the kernel that will enforce the rules. */
  abi: number;
  /** Grant removal of covered existing paths via their directory (default true); false reports it as narrowed. */
  grantRemoval?: boolean;
  /** How many missing path segments a create grant may bridge (default 3). */
  maxMissingSegments?: number;
  /** Landlock scoping (ABI >= 6); default none, so commands can still signal their earlier background jobs. */
  scope?: LauncherRules['scope'];
  /**
   * The container's filesystem listed once before the first command and never
   * patched. When given, a symlink of `snapshot` is followed only if the
   * baseline has it too, resolving to the same place (`trustSnapshot`).
   */
  baseline?: FsSnapshot;
  /** Paths nothing may be granted within (default RESERVED_PATHS); gold derivation passes a list without `/solution`. */
  reserved?: readonly string[];
}

export interface CompileResult {
  rules: LauncherRules;
  fidelity: FidelityReport;
  /**
   * The policy allows all network: the launcher must not handle Landlock's TCP
   * rights at all (LauncherRules has no way to say "any port"; empty port lists
   * with inet sockets would deny all TCP).
   */
  tcpUnrestricted: boolean;
}

type Facet = Omit<FidelityEntry, 'axis' | 'source' | 'entry'>;

interface Context {
  /** Over the trusted snapshot: untrusted symlinks have no target. */
  view: SnapshotView;
  policy: PatternSet;
  grantRemoval: boolean;
  maxMissing: number;
  untrusted: ReadonlyMap<string, UntrustedLink>;
  reserved: readonly ReservedPath[];
  /** Static prefixes of every policy and implicit entry: no escaping link may be granted an ancestor of one. */
  named: readonly string[];
}

export function compilePolicy(policy: Policy, snapshot: FsSnapshot, options: CompileOptions): CompileResult {
  if (!Number.isInteger(options.abi) || options.abi < 1) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `Landlock ABI ${options.abi}: no Landlock, nothing can be enforced`);
  }
  // Every path below resolves through the trusted copy: links made or changed at run time dangle there.
  const trust = options.baseline === undefined ? undefined : trustSnapshot(snapshot, options.baseline);
  const trusted = trust?.snapshot ?? snapshot;
  const view = viewSnapshot(trusted);
  const reserved = expandReserved(options.reserved ?? RESERVED_PATHS, [viewSnapshot(snapshot), view]);
  const named = new Set<string>();
  for (const set of [policy, options.implicit]) {
    for (const p of [...set.read, ...set.write, ...set.execute]) named.add(staticPrefix(normalizePattern(p)));
  }
  const base = {
    view,
    grantRemoval: options.grantRemoval ?? true,
    maxMissing: options.maxMissingSegments ?? 3,
    untrusted: trust?.untrusted ?? new Map<string, UntrustedLink>(),
    reserved,
    named: [...named],
  };
  const entries: FidelityEntry[] = [];
  const sources: [PatternSet, 'policy' | 'implicit'][] = [
    [policy, 'policy'],
    [options.implicit, 'implicit'],
  ];
  for (const [set, source] of sources) {
    // The runtime needs to use its files, never to delete /dev/null: no removal grants for it.
    const ctx: Context = { ...base, policy: set, ...(source === 'implicit' ? { grantRemoval: false } : {}) };
    for (const axis of ['read', 'write', 'execute'] as const) {
      for (const raw of set[axis]) {
        const entry = normalizePattern(raw);
        const prefix = staticPrefix(entry);
        const inside = reservedFor(prefix, reserved);
        if (inside !== undefined) {
          const note = `${reservedPhrase(prefix, inside.reserved)}: nothing granted`;
          entries.push({ axis, source, entry, kind: 'reserved', granted: [], note });
          continue;
        }
        const own: FidelityEntry[] = [];
        for (let facet of compileEntry(axis, entry, ctx)) {
          if (source === 'implicit' && facet.kind === 'narrowed') continue;
          // Runtime noise never grants on an ancestor: a missing `/root/.cache/**` anchored on
          // its parent would open all of /root (~/.ssh, ~/.config) to every command.
          if (source === 'implicit') {
            const kept = facet.granted.filter((g) => !(g.path !== prefix && isWithin(g.path, prefix)));
            if (kept.length < facet.granted.length) {
              if (kept.length === 0) continue;
              facet = { ...facet, granted: kept };
            }
          }
          const kind = source === 'implicit' && facet.granted.length > 0 ? 'implicit' : facet.kind;
          own.push({ axis, source, entry, ...facet, kind });
        }
        const safe = withoutReservedGrants(own, ctx);
        entries.push(...safe);
        const covering = coversReserved(entry, safe, ctx);
        if (covering !== undefined) entries.push({ axis, source, entry, ...covering });
      }
    }
  }
  const net = compileNetwork(policy.network, options.abi);
  const setattr = entries.some((e) => e.source === 'policy' && e.axis === 'write' && e.granted.length > 0);
  if (setattr) {
    entries.push({
      axis: 'write',
      source: 'kernel',
      entry: 'setattr',
      kind: 'widened',
      granted: [],
      note:
        'chmod/chown are allowed on every file, not only written ones: Landlock has no right for them; set-user/group-ID ' +
        'bits can be set too, which raises nothing inside the sandbox (every sandboxed process runs with no_new_privs)',
    });
  }
  entries.push(...net.entries, ...abiFacets(options.abi));

  const fs = mergeGrants(entries, trusted, options.abi, { reserved: reserved.map((r) => r.path) });
  const rules: LauncherRules = {
    fs,
    connectTcp: net.connectTcp,
    bindTcp: net.bindTcp,
    socketDomains: net.socketDomains,
    scope: options.abi >= 6 ? [...(options.scope ?? [])] : [],
    // Without it the launcher denies chmod/chown everywhere, which breaks ordinary writes (cp -p, pip, git).
    setattr,
    ...(net.unrestricted ? { tcpUnrestricted: true } : {}),
  };
  return {
    rules,
    fidelity: { abi: options.abi, entries, summary: summarize(entries, fs.length) },
    tcpUnrestricted: net.unrestricted,
  };
}

export interface MergeOptions {
  /** Paths no rule may lie within (default RESERVED_PATHS). */
  reserved?: readonly string[];
}

/**
 * Landlock rules from report facets: grants merged per inode (realpath),
 * filtered to the rights the ABI handles and, on non-directories, to file
 * rights. abi-limited facets describe the kernel and contribute no rule. The
 * last line of defence for reserved paths: a grant whose path or realpath
 * lies within one is dropped (compilePolicy has already reported it).
 */
export function mergeGrants(entries: readonly FidelityEntry[], snapshot: FsSnapshot, abi: number, options: MergeOptions = {}): FsRule[] {
  const view = viewSnapshot(snapshot);
  const reserved = expandReserved(options.reserved ?? RESERVED_PATHS, [view]);
  const handled = new Set(handledFsAccess(abi));
  const byPath = new Map<string, Set<FsAccess>>();
  for (const e of entries) {
    if (e.kind === 'abi-limited') continue;
    for (const g of e.granted) {
      const real = view.realpath(g.path);
      const inode = real === undefined ? undefined : view.get(real);
      if (real === undefined || inode === undefined) continue;
      if (reservedFor(g.path, reserved) !== undefined || reservedFor(real, reserved) !== undefined) continue;
      const set = byPath.get(real) ?? new Set<FsAccess>();
      for (const a of g.access) {
        if (handled.has(a) && (inode.type === 'dir' || FILE_ACCESS.includes(a))) set.add(a);
      }
      byPath.set(real, set);
    }
  }
  return [...byPath]
    .filter(([, set]) => set.size > 0)
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([path, set]) => ({ path, access: FS_ACCESS.filter((a) => set.has(a)) }));
}

/**
 * One entry's facets with every grant that resolves into a reserved path
 * taken out (a glob matching `/opt/authbench`, an alias through a link), and
 * a `reserved` facet after each facet that lost one. A facet left without
 * grants is replaced by that report.
 */
function withoutReservedGrants(facets: readonly FidelityEntry[], ctx: Context): FidelityEntry[] {
  const out: FidelityEntry[] = [];
  for (const f of facets) {
    const dropped = new Map<string, string>();
    const kept = f.granted.filter((g) => {
      const real = ctx.view.realpath(g.path) ?? g.path;
      const r = reservedFor(g.path, ctx.reserved) ?? reservedFor(real, ctx.reserved);
      if (r === undefined) return true;
      dropped.set(real, reservedPhrase(real, r.reserved));
      return false;
    });
    if (dropped.size === 0) {
      out.push(f);
      continue;
    }
    if (kept.length > 0) out.push({ ...f, granted: kept });
    out.push({
      axis: f.axis,
      source: f.source,
      entry: f.entry,
      kind: 'reserved',
      granted: [],
      note: `${[...dropped.values()].join(', ')}: not granted${f.note === '' ? '' : ` (the grant's own note: ${f.note})`}`,
    });
  }
  return out;
}

/**
 * An entry that reaches into a reserved path from above — its pattern covers
 * it (`/**`, `/opt/**`) or one of its rules sits on an ancestor (read_dir on
 * `/`, create rights on `/logs`). A Landlock rule cannot leave out a subtree,
 * so its grants stand; the facet says how the harness protects the path.
 */
function coversReserved(entry: string, facets: readonly FidelityEntry[], ctx: Context): Facet | undefined {
  const covered = new Set<string>();
  for (const r of ctx.reserved) {
    const byRule = facets.some((f) =>
      f.granted.some((g) => {
        const real = ctx.view.realpath(g.path) ?? g.path;
        return real !== r.path && isWithin(real, r.path);
      }),
    );
    if (byRule || patternReaches(entry, r.path)) covered.add(r.reserved);
  }
  if (covered.size === 0) return undefined;
  const list = [...covered];
  return {
    kind: 'reserved',
    granted: [],
    note:
      `covers ${list.join(', ')}, reserved for the harness: a Landlock rule cannot leave out a subtree, so the grants stand ` +
      `and the harness keeps ${list.length === 1 ? 'it' : 'them'} out of reach another way (${list.map(keptAway).join('; ')})`,
  };
}

function compileEntry(axis: PolicyAxis, pattern: string, ctx: Context): Facet[] {
  if (axis === 'execute') {
    // Against the trusted snapshot: an executable replaced by a link at run time is not canonicalised through it.
    const canonical = canonicalizeExecutables([pattern], ctx.view.snapshot)[0] ?? pattern;
    const facets = compileCanonical(axis, canonical, ctx);
    if (canonical === pattern) return facets;
    return facets.map((f) => ({ ...f, note: joinNotes(`canonicalised to ${canonical}`, f.note) }));
  }
  return compileCanonical(axis, pattern, ctx);
}

function compileCanonical(axis: PolicyAxis, pattern: string, ctx: Context): Facet[] {
  if (hasRecursiveTail(pattern)) {
    const base = pattern === '/**' ? '/' : pattern.slice(0, -3);
    if (isGlob(base)) {
      const matches = expandPattern(base, ctx.view.snapshot);
      const facets = matches.length === 0 ? [noMatch(pattern)] : matches.flatMap((m) => recursiveGrant(axis, pattern, m.path, ctx));
      if (axis === 'write') facets.push(...globCreation(base, WRITE_TREE, ctx));
      return facets;
    }
    return recursiveGrant(axis, pattern, base, ctx);
  }
  if (isGlob(pattern)) {
    const matches = expandPattern(pattern, ctx.view.snapshot);
    const facets = matches.length === 0 ? [noMatch(pattern)] : matches.flatMap((m) => existingGrant(axis, pattern, m.path, ctx));
    if (axis === 'write') facets.push(...globCreation(pattern, CREATE_BENEATH, ctx));
    else facets.push(...createdGlobAccess(axis, pattern, ctx));
    return facets;
  }
  if (ctx.view.get(pattern) !== undefined || ctx.view.realpath(pattern) !== undefined) return existingGrant(axis, pattern, pattern, ctx);
  return missing(axis, pattern, false, ctx);
}

/** Grants for one existing path named exactly (or matched by a glob without `/**`). */
function existingGrant(axis: PolicyAxis, pattern: string, path: string, ctx: Context): Facet[] {
  const real = ctx.view.realpath(path);
  const inode = real === undefined ? undefined : ctx.view.get(real);
  if (real === undefined || inode === undefined) {
    const untrusted = untrustedLinkOn(path, ctx);
    const dangling: Facet =
      untrusted === undefined
        ? { kind: 'nonexistent', granted: [], note: `${path} is a dangling symlink` }
        : { kind: 'narrowed', granted: [], note: untrustedNote(untrusted, ctx) };
    const link = ctx.view.get(path);
    // The link itself can still be removed or replaced.
    return axis === 'write' && link !== undefined ? [dangling, removalFacet(path, link, ctx)] : [dangling];
  }
  const alias = aliasNote(pattern, path, real);
  const facets: Facet[] = [];
  switch (axis) {
    case 'read': {
      if (inode.type === 'dir') {
        const subdirs = descendantsOfType(ctx.view.snapshot, real, 'dir').length;
        const wide = subdirs > 0 || alias !== undefined;
        facets.push({
          kind: wide ? 'widened' : 'exact',
          granted: [{ path: real, access: ['read_dir'] }],
          note: joinNotes(
            subdirs > 0 ? `read_dir applies beneath ${real}: its ${subdirs} subdirector${subdirs === 1 ? 'y is' : 'ies are'} listable too` : '',
            alias,
          ),
        });
      } else {
        facets.push(fileFacet([{ path: real, access: ['read_file'] }], alias));
      }
      break;
    }
    case 'write': {
      if (inode.type !== 'dir') facets.push(fileFacet([{ path: real, access: ['write_file', 'truncate'] }], alias));
      facets.push(removalFacet(path, ctx.view.get(path) ?? inode, ctx));
      break;
    }
    case 'execute': {
      if (inode.type === 'dir') return [{ kind: 'no-match', granted: [], note: `${real} is a directory, not an executable: nothing granted` }];
      facets.push(executeFacet(real, false, ctx, alias));
      break;
    }
  }
  return facets;
}

function fileFacet(granted: Grant[], alias: string | undefined): Facet {
  return { kind: alias === undefined ? 'exact' : 'widened', granted, note: alias ?? '' };
}

/** Removing or replacing an existing path is a right on its directory. */
function removalFacet(path: string, inode: FsEntry, ctx: Context): Facet {
  const parent = path === '/' ? undefined : ctx.view.realpath(posix.dirname(path));
  const right: FsAccess = inode.type === 'dir' ? 'remove_dir' : 'remove_file';
  if (!ctx.grantRemoval || parent === undefined || parent === '/') {
    const why = !ctx.grantRemoval ? 'removal grants are off' : parent === undefined ? `${posix.dirname(path)} does not resolve` : 'that would need a grant on /';
    return { kind: 'narrowed', granted: [], note: `${path} cannot be removed or renamed: ${why}` };
  }
  const what = inode.type === 'dir' ? 'any empty directory' : 'any file';
  return {
    kind: 'widened',
    granted: [{ path: parent, access: [right] }],
    note: `removing ${path} needs ${right} on ${parent}: ${what} beneath ${parent} can be removed`,
  };
}

function executeFacet(real: string, tree: boolean, ctx: Context, alias: string | undefined): Facet {
  const readTarget = tree ? `${real === '/' ? '' : real}/x` : real;
  const readCovered = ctx.policy.read.some((p) => (tree ? covers(normalizePattern(p), real) && hasRecursiveTail(p) : covers(normalizePattern(p), readTarget)));
  return {
    kind: readCovered && alias === undefined ? 'exact' : 'widened',
    granted: [{ path: real, access: [...EXECUTE_FILE] }],
    note: joinNotes(readCovered ? '' : `read_file on ${real} too (interpreters read scripts); the read axis does not cover it`, alias),
  };
}

function recursiveGrant(axis: PolicyAxis, pattern: string, base: string, ctx: Context): Facet[] {
  if (ctx.view.get(base) === undefined && ctx.view.realpath(base) === undefined) return missing(axis, base, true, ctx);
  const real = ctx.view.realpath(base);
  const inode = real === undefined ? undefined : ctx.view.get(real);
  // A dangling link or a file: handled as named exactly (a dangling link can still be removed).
  if (real === undefined || inode === undefined || inode.type !== 'dir') return existingGrant(axis, pattern, base, ctx);
  const alias = aliasNote(pattern, base, real);
  const facets: Facet[] = [];
  switch (axis) {
    case 'read':
      facets.push(fileFacet([{ path: real, access: [...READ_TREE] }], alias));
      break;
    case 'write':
      facets.push(fileFacet([{ path: real, access: [...WRITE_TREE] }], alias));
      // Removing the base removes the name itself: a symlink to a directory is unlinked (remove_file), not rmdir'd.
      if (base !== '/') facets.push(removalFacet(base, ctx.view.get(base) ?? inode, ctx));
      break;
    case 'execute':
      facets.push(executeFacet(real, true, ctx, alias));
      break;
  }
  if (axis !== 'execute') facets.push(...escapingLinks(axis, pattern, real, ctx));
  return facets;
}

/**
 * Symlinks beneath a read/write `/**` base that lead outside it: their
 * targets are granted, one facet per link, so what the pattern covers
 * lexically works. Not granted (and reported): links made or changed at run
 * time (untrusted), and targets a link must not hand the base's rights over —
 * reserved paths, `/`, ancestors of the base or of a path the policy names
 * (`/app/root -> /` would make a read of `/app/**` a read of everything), and
 * paths outside the snapshot roots (nothing known there to attach a rule to).
 */
function escapingLinks(axis: 'read' | 'write', pattern: string, base: string, ctx: Context): Facet[] {
  const facets: Facet[] = [];
  for (const link of descendantsOfType(ctx.view.snapshot, base, 'symlink')) {
    const untrusted = ctx.untrusted.get(link.path);
    if (untrusted !== undefined) {
      // One inside the base loses nothing: the base's own rule covers where it leads.
      if (untrusted.target !== undefined && !isWithin(base, untrusted.target)) {
        facets.push({ kind: 'narrowed', granted: [], note: `${untrustedNote(link.path, ctx)}, its target is not granted` });
      }
      continue;
    }
    const target = link.target;
    if (target === undefined || isWithin(base, target)) continue;
    const refused = refusedTarget(target, base, ctx);
    if (refused !== undefined) {
      facets.push({ kind: refused.kind, granted: [], note: `${link.path} -> ${target} leads outside ${pattern}, not granted: ${refused.why}` });
      continue;
    }
    const inode = ctx.view.get(target);
    if (inode === undefined) continue;
    const dirRights = axis === 'read' ? READ_TREE : WRITE_TREE;
    const fileRights: readonly FsAccess[] = axis === 'read' ? ['read_file'] : ['write_file', 'truncate'];
    const rights = inode.type === 'dir' ? dirRights : fileRights;
    facets.push({
      kind: 'widened',
      granted: [{ path: target, access: [...rights] }],
      note: `${link.path} -> ${target} leads outside ${pattern}: ${rights.join(', ')} on ${target}, reachable by its own path too`,
    });
  }
  return facets;
}

/** Why an escaping link's target must not be granted, or undefined when it may. */
function refusedTarget(target: string, base: string, ctx: Context): { kind: FidelityKind; why: string } | undefined {
  const reserved = reservedFor(target, ctx.reserved);
  if (reserved !== undefined) return { kind: 'reserved', why: reservedPhrase(target, reserved.reserved) };
  if (target === '/') return { kind: 'narrowed', why: 'a grant on / would cover everything' };
  if (isWithin(target, base)) return { kind: 'narrowed', why: `${target} contains ${base} itself` };
  const named = ctx.named.find((n) => isWithin(target, n));
  if (named !== undefined) {
    const how = named === target ? 'is' : 'contains';
    return { kind: 'narrowed', why: `${target} ${how} ${named}, which the policy names itself (its own entries decide)` };
  }
  if (!ctx.view.known(target)) return { kind: 'narrowed', why: `${target} is outside the snapshot roots` };
  return undefined;
}

/**
 * An entry naming something that does not exist. Writes get create rights on
 * the nearest existing ancestor; reads and executes of something a write entry
 * creates get theirs there too; everything else is reported.
 */
function missing(axis: PolicyAxis, path: string, tree: boolean, ctx: Context): Facet[] {
  if (!ctx.view.known(path)) {
    return [{ kind: 'nonexistent', granted: [], note: `${path} is outside the snapshot roots; nothing to attach a rule to` }];
  }
  const untrusted = untrustedLinkOn(path, ctx);
  if (untrusted !== undefined) return [{ kind: 'narrowed', granted: [], note: `${untrustedNote(untrusted, ctx)}, and ${path} lies beyond it` }];
  if (axis !== 'write') {
    const creator = ctx.policy.write.find((w) => covers(normalizePattern(w), path));
    if (creator === undefined) return [{ kind: 'nonexistent', granted: [], note: `${path} does not exist in the image` }];
    const anchor = creationAnchor(path, ctx);
    if (typeof anchor === 'string') return [{ kind: 'nonexistent', granted: [], note: `${path} does not exist: ${anchor}` }];
    const rights = axis === 'read' ? READ_TREE : EXECUTE_FILE;
    return [
      {
        kind: 'widened',
        granted: [{ path: anchor.dir, access: [...rights] }],
        note: `${path} does not exist yet (write entry ${creator} creates it): ${rights.join(', ')} on everything beneath ${anchor.dir}`,
      },
    ];
  }
  const anchor = creationAnchor(path, ctx);
  if (typeof anchor === 'string') return [{ kind: 'nonexistent', granted: [], note: `${path} does not exist: ${anchor}` }];
  // A write entry covers removing what it names (as for an existing file): a pid file a daemon
  // creates is unlinked again by the next start. Landlock has that right on the directory only.
  const removal = !tree && ctx.grantRemoval;
  const rights: readonly FsAccess[] = tree ? WRITE_TREE : removal ? [...CREATE_BENEATH, 'remove_file'] : CREATE_BENEATH;
  const deeper = anchor.missing > 1 ? ` (${anchor.missing - 1} missing director${anchor.missing === 2 ? 'y' : 'ies'} on the way)` : '';
  return [
    {
      kind: 'widened',
      granted: [{ path: anchor.dir, access: [...rights] }],
      note:
        `${path} does not exist yet${deeper}; Landlock can only grant creation on ${anchor.dir}: any new file beneath ${anchor.dir}, not only ${posix.basename(path)}, ` +
        `and writes to every existing file there${removal ? ' (and removing any file there)' : ''}`,
    },
  ];
}

/** The nearest existing ancestor directory (realpath), or why there is none within bounds. */
function creationAnchor(path: string, ctx: Context): { dir: string; missing: number } | string {
  let cur = path;
  for (let missingCount = 1; missingCount <= ctx.maxMissing; missingCount++) {
    cur = posix.dirname(cur);
    if (cur === '/') return 'its nearest existing ancestor would be /, too wide to grant creation on';
    if (ctx.view.get(cur) === undefined) continue;
    const real = ctx.view.realpath(cur);
    const inode = real === undefined ? undefined : ctx.view.get(real);
    if (real === undefined || inode === undefined) return `${cur} is a dangling symlink`;
    if (inode.type !== 'dir') return `${cur} is not a directory`;
    if (real === '/') return 'its nearest existing ancestor resolves to /, too wide to grant creation on';
    return { dir: real, missing: missingCount };
  }
  return `no existing ancestor within ${ctx.maxMissing} levels`;
}

/**
 * New paths matching a write glob (or a glob `/**` base): create rights on its
 * literal directory, if the wildcards are all in the last segment.
 */
function globCreation(pattern: string, rights: readonly FsAccess[], ctx: Context): Facet[] {
  const dir = posix.dirname(pattern);
  if (isGlob(dir)) {
    return [{ kind: 'narrowed', granted: [], note: `new paths matching ${pattern} cannot be created: Landlock grants by inode, and no single existing directory holds them` }];
  }
  const real = ctx.view.realpath(dir);
  if (real === undefined || ctx.view.get(real)?.type !== 'dir' || real === '/') {
    const untrusted = untrustedLinkOn(dir, ctx);
    const why = untrusted === undefined ? `${dir} does not exist or is /` : untrustedNote(untrusted, ctx);
    return [{ kind: 'narrowed', granted: [], note: `new paths matching ${pattern} cannot be created: ${why}` }];
  }
  return [
    {
      kind: 'widened',
      granted: [{ path: real, access: [...rights] }],
      note: `creating new paths matching ${posix.basename(pattern)} needs ${rights.join(', ')} on ${real}: any new file beneath it, not only matching ones, and writes to every existing file there`,
    },
  ];
}

/**
 * A read/execute glob whose new matches a write glob creates (git's
 * `.git/*.lock`: created, then read back): the same creation anchor as the
 * write — its literal directory — gets the read (or execute) rights, so files
 * that appear there at run time are usable. Only when one write entry covers
 * the pattern itself; otherwise new matches stay unreadable and nothing is added.
 */
function createdGlobAccess(axis: 'read' | 'execute', pattern: string, ctx: Context): Facet[] {
  const creator = ctx.policy.write.find((w) => covers(normalizePattern(w), pattern));
  if (creator === undefined) return [];
  const dir = posix.dirname(pattern);
  const real = isGlob(dir) ? undefined : ctx.view.realpath(dir);
  if (real === undefined || ctx.view.get(real)?.type !== 'dir' || real === '/') return [];
  const rights = axis === 'read' ? READ_TREE : EXECUTE_FILE;
  return [
    {
      kind: 'widened',
      granted: [{ path: real, access: [...rights] }],
      note: `new paths matching ${posix.basename(pattern)} (write entry ${creator} creates them): ${rights.join(', ')} on everything beneath ${real}`,
    },
  ];
}

function noMatch(pattern: string): Facet {
  return { kind: 'no-match', granted: [], note: `${pattern} matches nothing in the image` };
}

/**
 * The first untrusted symlink resolving `path` runs into (the path itself or a
 * directory on the way), walking the trusted view as realpath does.
 */
function untrustedLinkOn(path: string, ctx: Context): string | undefined {
  if (ctx.untrusted.size === 0) return undefined;
  let cur = '/';
  for (const seg of path.split('/').filter((s) => s !== '')) {
    const next = cur === '/' ? `/${seg}` : `${cur}/${seg}`;
    const e = ctx.view.get(next);
    if (e === undefined) return undefined;
    if (e.type !== 'symlink') cur = next;
    else if (ctx.untrusted.has(next)) return next;
    else if (e.target === undefined) return undefined;
    else cur = e.target;
  }
  return undefined;
}

function untrustedNote(link: string, ctx: Context): string {
  const u = ctx.untrusted.get(link);
  const arrow = u?.target === undefined ? '' : ` -> ${u.target}`;
  return `${link}${arrow} is a symlink ${u?.reason ?? 'created at run time'}: not followed`;
}

function aliasNote(pattern: string, path: string, real: string): string | undefined {
  if (real === path || covers(pattern, real)) return undefined;
  return `${path} -> ${real}: the rule lands on ${real}, reachable by that path too`;
}

function joinNotes(...notes: (string | undefined)[]): string {
  return notes.filter((n) => n !== undefined && n !== '').join('; ');
}

interface CompiledNetwork {
  connectTcp: number[];
  bindTcp: number[];
  socketDomains: ('inet' | 'inet6')[];
  unrestricted: boolean;
  entries: FidelityEntry[];
}

function compileNetwork(section: NetworkSection | undefined, abi: number): CompiledNetwork {
  const none: CompiledNetwork = { connectTcp: [], bindTcp: [], socketDomains: [], unrestricted: false, entries: [] };
  if (section === undefined) return none;
  const facet = (entry: string, kind: FidelityEntry['kind'], n: Omit<CompiledNetwork, 'unrestricted' | 'entries'>, note: string): FidelityEntry => ({
    axis: 'network',
    source: 'policy',
    entry,
    kind,
    granted: [],
    network: { connectTcp: n.connectTcp, bindTcp: n.bindTcp, socketDomains: n.socketDomains },
    note,
  });
  if (section.allow_all) {
    const n = { connectTcp: [], bindTcp: [], socketDomains: ['inet', 'inet6'] as ('inet' | 'inet6')[] };
    return { ...n, unrestricted: true, entries: [facet('allow_all', 'exact', n, 'all sockets, all ports; the launcher must not handle TCP rights')] };
  }
  const connectTcp = [...new Set(section.tcp_connect.map((c) => c.port))].sort((a, b) => a - b);
  const bindTcp = [...new Set(section.tcp_bind)].sort((a, b) => a - b);
  if (connectTcp.length === 0 && bindTcp.length === 0) return none;
  const domains = new Set<'inet' | 'inet6'>();
  for (const c of section.tcp_connect) {
    if (c.host === '::1' || c.host === 'localhost') domains.add('inet6');
    if (c.host !== '::1') domains.add('inet');
  }
  if (bindTcp.length > 0) domains.add('inet').add('inet6');
  const socketDomains = (['inet', 'inet6'] as const).filter((d) => domains.has(d));
  const entries: FidelityEntry[] = [];
  const limited = abi < 4;
  for (const c of section.tcp_connect) {
    const n = { connectTcp: [c.port], bindTcp: [], socketDomains };
    entries.push(
      limited
        ? facet(`tcp_connect ${c.host}:${c.port}`, 'abi-limited', n, `port rules unavailable below Landlock ABI 4 (have ${abi}): all TCP allowed`)
        : facet(`tcp_connect ${c.host}:${c.port}`, 'widened', n, `Landlock filters TCP by port only: port ${c.port} on any reachable host`),
    );
  }
  for (const port of bindTcp) {
    const n = { connectTcp: [], bindTcp: [port], socketDomains };
    entries.push(
      limited
        ? facet(`tcp_bind ${port}`, 'abi-limited', n, `port rules unavailable below Landlock ABI 4 (have ${abi}): all TCP allowed`)
        : facet(`tcp_bind ${port}`, 'exact', n, ''),
    );
  }
  entries.push(
    facet(`socket ${socketDomains.join(',')}`, 'widened', { connectTcp: [], bindTcp: [], socketDomains }, 'IP sockets allowed for TCP also allow UDP sockets, which Landlock does not restrict'),
  );
  return { connectTcp, bindTcp, socketDomains, unrestricted: false, entries };
}

/** What the kernel cannot enforce at all at this ABI, stated once per run. */
function abiFacets(abi: number): FidelityEntry[] {
  const kernel = (entry: string, granted: Grant[], note: string): FidelityEntry => ({ axis: 'kernel', source: 'kernel', entry, kind: 'abi-limited', granted, note });
  const out: FidelityEntry[] = [];
  if (abi < 2) out.push(kernel('refer', [], `Landlock ABI ${abi} always denies moving or linking files across directories`));
  if (abi < 3) out.push(kernel('truncate', [{ path: '/', access: ['truncate'] }], `Landlock ABI ${abi} cannot restrict truncate: any file can be truncated`));
  if (abi < 5) out.push(kernel('ioctl_dev', [{ path: '/', access: ['ioctl_dev'] }], `Landlock ABI ${abi} cannot restrict ioctl on devices`));
  return out;
}
