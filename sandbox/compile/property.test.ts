/**
 * The compiler's contract, checked on generated trees and policies with the
 * pure Landlock model: the kernel rules and the policy's static decision agree
 * on every operation, except exactly where the fidelity report says why. The
 * generated session may have a baseline in which some links are missing or
 * point elsewhere (made or changed at run time: not followed), and reserved
 * paths (never granted).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSnapshot, canonicalizeExecutables, covers, isWithin, patternWithin, staticPrefix, viewSnapshot } from '../paths/index.ts';
import type { FsSnapshot, TreeEntry } from '../paths/index.ts';
import type { Policy } from '../policy/index.ts';
import { handledFsAccess } from './access.ts';
import { compilePolicy, mergeGrants } from './compile.ts';
import { AXIS_OF as AXIS, explainAccess, FS_OPS, kernelAllows, policyAllows, requirements } from './model.ts';
import type { FsOp } from './model.ts';

const DIRS = ['/w/a', '/w/b', '/w/a/a', '/w/a/b', '/w/b/a'];
const FILES = ['/w', ...DIRS].flatMap((d) => [`${d}/f`, `${d}/g.txt`]);
const LINKS: TreeEntry[] = [
  { path: '/w/l', type: 'symlink', link: 'a/f' },
  { path: '/w/a/l', type: 'symlink', link: '../g.txt' },
  { path: '/w/b/l', type: 'symlink', link: '/w/a/g.txt' },
  { path: '/w/a/up', type: 'symlink', link: '..' }, // an ancestor of /w/a/**: never granted through the link
];
/** The same link paths leading elsewhere: in a baseline, the links above look changed at run time. */
const OTHER_LINKS: TreeEntry[] = [
  { path: '/w/l', type: 'symlink', link: 'b/f' },
  { path: '/w/a/l', type: 'symlink', link: 'f' },
  { path: '/w/b/l', type: 'symlink', link: '/w/g.txt' },
];
const NEW = ['/w/new', '/w/a/new.txt', '/w/c', '/w/c/x', '/w/b/a/new'];
const PATHS = ['/w', ...DIRS, ...FILES, ...LINKS.map((l) => l.path), ...NEW];
const GLOBS = [
  '/w/*',
  '/w/a/*.txt',
  '/w/*/f',
  '/w/?/g.txt',
  '/w/**',
  '/w/a/**',
  '/w/b/**',
  '/w/c/**',
  '/w/a/*/**',
  '/**',
];

const treeArb = fc
  .record({
    dirs: fc.subarray(DIRS),
    files: fc.subarray(FILES),
    links: fc.subarray(LINKS),
    exec: fc.boolean(),
    baseLinks: fc.option(fc.subarray([...LINKS, ...OTHER_LINKS]), { freq: 2 }),
  })
  .map(({ dirs, files, links, exec, baseLinks }): { snap: FsSnapshot; baseline?: FsSnapshot } => {
    const present = new Set(['/w', ...dirs]);
    const parentOk = (p: string): boolean => present.has(p.slice(0, p.lastIndexOf('/')));
    const keptDirs = dirs.filter(parentOk);
    keptDirs.forEach((d) => present.add(d));
    const tree: TreeEntry[] = [
      { path: '/w', type: 'dir' },
      ...keptDirs.map((path): TreeEntry => ({ path, type: 'dir' })),
      ...files.filter(parentOk).map((path): TreeEntry => ({ path, type: 'file', mode: exec ? 0o755 : 0o644 })),
    ];
    const snap = buildSnapshot([...tree, ...links.filter((l) => parentOk(l.path))]);
    if (baseLinks === null) return { snap };
    // The baseline: the same tree with its own links (one per path), so some of the snapshot's are untrusted.
    const once = baseLinks.filter((l, i) => parentOk(l.path) && baseLinks.findIndex((o) => o.path === l.path) === i);
    return { snap, baseline: buildSnapshot([...tree, ...once]) };
  });

const axisArb = fc.uniqueArray(fc.oneof(fc.constantFrom(...PATHS), fc.constantFrom(...GLOBS)), { maxLength: 4 });
const policyArb = fc.record({ read: axisArb, write: axisArb, execute: axisArb }) as fc.Arbitrary<Policy>;
const optionsArb = fc.record({
  abi: fc.constantFrom(2, 3, 7),
  grantRemoval: fc.boolean(),
  implicitRead: fc.subarray(['/w/b/**', '/w/f'], { maxLength: 1 }),
  reserved: fc.constantFrom<string[] | undefined>(undefined, ['/w/b'], ['/w/a/f', '/w/c']),
});

const CREATING: ReadonlySet<FsOp> = new Set(['create', 'mkdir', 'remove']);

/** Does resolving `path` in the snapshot follow a symlink (at any component)? */
function throughLink(snap: FsSnapshot, path: string): boolean {
  const view = viewSnapshot(snap);
  let cur = '/';
  for (const seg of path.split('/').filter((x) => x !== '')) {
    const next = cur === '/' ? `/${seg}` : `${cur}/${seg}`;
    const e = view.get(next);
    if (e === undefined) return false;
    if (e.type === 'symlink') return true;
    cur = next;
  }
  return false;
}

describe('compilePolicy vs the static decision (property)', () => {
  it('agree except where the fidelity report explains the difference', () => {
    fc.assert(
      fc.property(treeArb, policyArb, optionsArb, ({ snap, baseline }, policy, opts) => {
        const implicit = { read: opts.implicitRead, write: [], execute: [] };
        const { rules, fidelity } = compilePolicy(policy, snap, {
          implicit,
          abi: opts.abi,
          grantRemoval: opts.grantRemoval,
          ...(baseline === undefined ? {} : { baseline }),
          ...(opts.reserved === undefined ? {} : { reserved: opts.reserved }),
        });
        const reserved = opts.reserved ?? [];
        if (baseline !== undefined) {
          // Distrusting links only ever takes grants away.
          const trusting = compilePolicy(policy, snap, { implicit, abi: opts.abi, grantRemoval: opts.grantRemoval, ...(opts.reserved === undefined ? {} : { reserved: opts.reserved }) });
          for (const rule of rules.fs) {
            const without = trusting.rules.fs.find((r) => r.path === rule.path)?.access ?? [];
            expect(rule.access.filter((a) => !without.includes(a)), `a baseline added rights on ${rule.path}`).toEqual([]);
          }
        }
        const exactOnly = { fs: mergeGrants(fidelity.entries.filter((e) => e.kind === 'exact'), snap, opts.abi) };
        const view = viewSnapshot(snap);
        const handled = new Set(handledFsAccess(opts.abi));

        for (const rule of rules.fs) {
          const inode = view.get(rule.path);
          expect(inode, `rule on a missing inode ${rule.path}`).toBeDefined();
          expect(inode?.type === 'dir' || rule.access.every((a) => ['execute', 'write_file', 'read_file', 'truncate', 'ioctl_dev'].includes(a))).toBe(true);
          expect(rule.access.every((a) => handled.has(a))).toBe(true);
          expect(reserved.some((r) => isWithin(r, rule.path)), `rule within a reserved path ${rule.path}`).toBe(false);
        }

        for (const path of PATHS) {
          for (const op of FS_OPS) {
            const wanted = policyAllows(policy, snap, path, op);
            const got = kernelAllows(rules, snap, path, op, opts.abi);
            const where = `${op} ${path}\npolicy ${JSON.stringify(policy)}\nabi ${opts.abi} reserved ${JSON.stringify(reserved)}`;
            if (wanted && !got) {
              // Creating/removing may be denied where the report says so. Opening an existing file loses access
              // only through a link the compiler would not follow, or where a reserved path is involved — for the
              // path itself or for the entry that would have allowed it.
              const real = view.realpath(path);
              const names = [path, real].filter((n): n is string => n !== undefined);
              const touchesReserved = (p: string): boolean => reserved.some((r) => isWithin(r, p) || patternWithin(r, p));
              const caused = (p: string): boolean => throughLink(snap, p) || touchesReserved(p);
              const kinds = CREATING.has(op) ? ['narrowed', 'nonexistent', 'no-match', 'reserved'] : ['narrowed', 'reserved'];
              // Execute entries are compared by their canonical form, as policyAllows does.
              const pattern = (e: { axis: string; entry: string }): string => (e.axis === 'execute' ? (canonicalizeExecutables([e.entry], snap)[0] ?? e.entry) : e.entry);
              const explaining = fidelity.entries.filter(
                (e) => e.axis === AXIS[op] && kinds.includes(e.kind) && names.some((n) => covers(e.entry, n) || covers(pattern(e), n)),
              );
              const why = `${where}\nbaseline ${JSON.stringify(baseline?.entries.filter((e) => e.type === 'symlink'))}\n${JSON.stringify(fidelity.entries)}`;
              expect(explaining.length > 0, `unexplained denial: ${why}`).toBe(true);
              const opened = CREATING.has(op) || names.some(caused) || explaining.some((e) => caused(staticPrefix(e.entry)));
              expect(opened, `kernel denies opening what the policy allows: ${why}`).toBe(true);
            }
            if (!wanted && got) {
              const why = explainAccess(fidelity, snap, path, op);
              expect(
                why.some((e) => e.kind === 'widened' || e.kind === 'implicit' || e.kind === 'abi-limited'),
                `unexplained grant: ${where}\n${JSON.stringify(why)}`,
              ).toBe(true);
            }
            if (!wanted && kernelAllows(exactOnly, snap, path, op, opts.abi)) {
              // Exact facets alone never over-grant, unless the ABI cannot handle a needed right.
              const needs = requirements(snap, path, op) ?? [];
              expect(needs.some((n) => !handled.has(n.access)), `an exact facet over-grants: ${where}`).toBe(true);
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
