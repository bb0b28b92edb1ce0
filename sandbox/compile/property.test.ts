/**
 * The compiler's contract, checked on generated trees and policies with the
 * pure Landlock model: the kernel rules and the policy's static decision agree
 * on every operation, except exactly where the fidelity report says why.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSnapshot, covers, viewSnapshot } from '../paths/index.ts';
import type { FsSnapshot, TreeEntry } from '../paths/index.ts';
import type { Policy } from '../policy/index.ts';
import { handledFsAccess } from './access.ts';
import { compilePolicy, mergeGrants } from './compile.ts';
import { explainAccess, FS_OPS, kernelAllows, policyAllows, requirements } from './model.ts';
import type { FsOp } from './model.ts';

const DIRS = ['/w/a', '/w/b', '/w/a/a', '/w/a/b', '/w/b/a'];
const FILES = ['/w', ...DIRS].flatMap((d) => [`${d}/f`, `${d}/g.txt`]);
const LINKS: TreeEntry[] = [
  { path: '/w/l', type: 'symlink', link: 'a/f' },
  { path: '/w/a/l', type: 'symlink', link: '../g.txt' },
  { path: '/w/b/l', type: 'symlink', link: '/w/a/g.txt' },
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
  })
  .map(({ dirs, files, links, exec }): FsSnapshot => {
    const present = new Set(['/w', ...dirs]);
    const parentOk = (p: string): boolean => present.has(p.slice(0, p.lastIndexOf('/')));
    const keptDirs = dirs.filter(parentOk);
    keptDirs.forEach((d) => present.add(d));
    const tree: TreeEntry[] = [
      { path: '/w', type: 'dir' },
      ...keptDirs.map((path): TreeEntry => ({ path, type: 'dir' })),
      ...files.filter(parentOk).map((path): TreeEntry => ({ path, type: 'file', mode: exec ? 0o755 : 0o644 })),
      ...links.filter((l) => parentOk(l.path)),
    ];
    return buildSnapshot(tree);
  });

const axisArb = fc.uniqueArray(fc.oneof(fc.constantFrom(...PATHS), fc.constantFrom(...GLOBS)), { maxLength: 4 });
const policyArb = fc.record({ read: axisArb, write: axisArb, execute: axisArb }) as fc.Arbitrary<Policy>;
const optionsArb = fc.record({
  abi: fc.constantFrom(2, 3, 7),
  grantRemoval: fc.boolean(),
  implicitRead: fc.subarray(['/w/b/**', '/w/f'], { maxLength: 1 }),
});

const CREATING: ReadonlySet<FsOp> = new Set(['create', 'mkdir', 'remove']);

describe('compilePolicy vs the static decision (property)', () => {
  it('agree except where the fidelity report explains the difference', () => {
    fc.assert(
      fc.property(treeArb, policyArb, optionsArb, (snap, policy, opts) => {
        const implicit = { read: opts.implicitRead, write: [], execute: [] };
        const { rules, fidelity } = compilePolicy(policy, snap, { implicit, abi: opts.abi, grantRemoval: opts.grantRemoval });
        const exactOnly = { fs: mergeGrants(fidelity.entries.filter((e) => e.kind === 'exact'), snap, opts.abi) };
        const view = viewSnapshot(snap);
        const handled = new Set(handledFsAccess(opts.abi));

        for (const rule of rules.fs) {
          const inode = view.get(rule.path);
          expect(inode, `rule on a missing inode ${rule.path}`).toBeDefined();
          expect(inode?.type === 'dir' || rule.access.every((a) => ['execute', 'write_file', 'read_file', 'truncate', 'ioctl_dev'].includes(a))).toBe(true);
          expect(rule.access.every((a) => handled.has(a))).toBe(true);
        }

        for (const path of PATHS) {
          for (const op of FS_OPS) {
            const wanted = policyAllows(policy, snap, path, op);
            const got = kernelAllows(rules, snap, path, op, opts.abi);
            const where = `${op} ${path}\npolicy ${JSON.stringify(policy)}\nabi ${opts.abi}`;
            if (wanted && !got) {
              // Opening existing files never loses access; creating/removing only where the report says so.
              expect(CREATING.has(op), `kernel denies what the policy allows: ${where}`).toBe(true);
              const explained = fidelity.entries.some(
                (e) => e.axis === 'write' && (e.kind === 'narrowed' || e.kind === 'nonexistent' || e.kind === 'no-match') && covers(e.entry, path),
              );
              expect(explained, `unexplained denial: ${where}`).toBe(true);
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
