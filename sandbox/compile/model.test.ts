import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../paths/index.ts';
import type { FsRule } from '../launcher/index.ts';
import { compilePolicy } from './compile.ts';
import { explainAccess, kernelAllows, policyAllows, requirements } from './model.ts';
import type { FsOp } from './model.ts';

const SNAP = buildSnapshot([
  { path: '/app/a.txt', type: 'file' },
  { path: '/app/sub/b.txt', type: 'file' },
  { path: '/app/run', type: 'file', mode: 0o755 },
  { path: '/app/ln', type: 'symlink', link: 'sub/b.txt' },
  { path: '/data/d', type: 'symlink', link: '/app/sub' },
]);

describe('requirements', () => {
  it.each<[string, FsOp, string | undefined]>([
    ['/app/a.txt', 'read', 'read_file@/app/a.txt'],
    ['/app/sub', 'read', 'read_dir@/app/sub'],
    ['/app/ln', 'write', 'write_file@/app/sub/b.txt'],
    ['/data/d/b.txt', 'truncate', 'truncate@/app/sub/b.txt'],
    ['/app/new', 'create', 'make_reg@/app,write_file@/app'],
    ['/data/d/new', 'mkdir', 'make_dir@/app/sub'],
    ['/app/ln', 'remove', 'remove_file@/app'],
    ['/app/sub', 'remove', 'remove_dir@/app'],
    ['/app/missing', 'read', undefined],
    ['/app/a.txt', 'create', undefined],
    ['/app/sub', 'write', undefined],
    ['/app/sub', 'execute', undefined],
    ['/nodir/x', 'create', undefined],
  ])('%s %s', (path, op, want) => {
    const got = requirements(SNAP, path, op)?.map((r) => `${r.access}@${r.on}`).join(',');
    expect(got).toBe(want);
  });
});

describe('kernelAllows: path-beneath semantics', () => {
  const rules = (fs: FsRule[]): { fs: FsRule[] } => ({ fs });
  it.each<[string, FsRule[], string, FsOp, boolean]>([
    ['file rule', [{ path: '/app/a.txt', access: ['read_file'] }], '/app/a.txt', 'read', true],
    ['file rule is not a sibling rule', [{ path: '/app/a.txt', access: ['read_file'] }], '/app/run', 'read', false],
    ['directory rule applies beneath', [{ path: '/app', access: ['read_file'] }], '/app/sub/b.txt', 'read', true],
    ['read_file does not list', [{ path: '/app', access: ['read_file'] }], '/app/sub', 'read', false],
    ['handled right not granted', [{ path: '/app', access: ['read_file'] }], '/app/a.txt', 'write', false],
    ['through a symlink to the target rule', [{ path: '/app/sub/b.txt', access: ['read_file'] }], '/data/d/b.txt', 'read', true],
    ['a rule on a symlink lands on its target', [{ path: '/app/ln', access: ['write_file'] }], '/app/sub/b.txt', 'write', true],
    ['create needs make_reg and write_file', [{ path: '/app', access: ['make_reg'] }], '/app/new', 'create', false],
    ['create with both', [{ path: '/app', access: ['make_reg', 'write_file'] }], '/app/sub/new', 'create', true],
    ['remove is a right on the directory', [{ path: '/app/a.txt', access: ['write_file'] }], '/app/a.txt', 'remove', false],
    ['nonexistent never allowed', [{ path: '/', access: ['read_file'] }], '/app/zzz', 'read', false],
  ])('%s', (_name, fs, path, op, want) => expect(kernelAllows(rules(fs), SNAP, path, op)).toBe(want));

  it('rights the ABI does not handle are allowed', () => {
    const fs: FsRule[] = [{ path: '/app', access: ['write_file'] }];
    expect(kernelAllows({ fs }, SNAP, '/app/a.txt', 'truncate', 7)).toBe(false);
    expect(kernelAllows({ fs }, SNAP, '/app/a.txt', 'truncate', 2)).toBe(true);
  });
});

describe('policyAllows', () => {
  const p = { read: ['/app/sub/**'], write: ['/app/*.txt'], execute: ['/app/run'] };
  it.each<[string, FsOp, boolean]>([
    ['/app/sub/b.txt', 'read', true],
    ['/app/ln', 'read', true], // its realpath is covered
    ['/data/d/b.txt', 'read', true],
    ['/app/a.txt', 'read', false],
    ['/app/a.txt', 'write', true],
    ['/app/new.txt', 'create', true],
    ['/app/a.txt', 'create', false], // exists: cannot be created
    ['/app/run', 'execute', true],
    ['/app/a.txt', 'execute', false],
  ])('%s %s -> %s', (path, op, want) => expect(policyAllows(p, SNAP, path, op)).toBe(want));
});

describe('explainAccess', () => {
  it('names the facets whose grants let an operation through', () => {
    const { fidelity } = compilePolicy({ read: [], write: ['/app/new.txt', '/app/a.txt'], execute: [] }, SNAP, {
      implicit: { read: [], write: [], execute: [] },
      abi: 7,
    });
    const why = explainAccess(fidelity, SNAP, '/app/sub/other.txt', 'create');
    expect(why.map((f) => [f.entry, f.kind])).toEqual([['/app/new.txt', 'widened']]);
    expect(explainAccess(fidelity, SNAP, '/app/run', 'read')).toEqual([]);
  });
});
