/**
 * Test-only: a deterministic synthetic task image, reference and policy
 * generator, for the scorer's property tests and its throughput benchmark
 * (scripts/bench-score.ts); not exported from index.ts. Shaped like the
 * bundled tasks: a project under /app, a home under /root with an implicit
 * cache, a merged-/usr /usr/bin with links, executables spelled through /bin.
 */
import { seededRandom } from '../core/index.ts';
import { buildSnapshot } from '../sandbox/paths/index.ts';
import type { FsSnapshot, TreeEntry } from '../sandbox/paths/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import type { AxisPatterns, ScoringReference } from './reference.ts';

export interface SyntheticTask {
  snapshot: FsSnapshot;
  reference: ScoringReference;
  /** Existing files under /app and /root, and executables under /usr/bin, for policy generation. */
  pools: { files: string[]; dirs: string[]; executables: string[]; usrBinNames: string[]; links: string[] };
}

export interface SyntheticOptions {
  /** Roughly how many candidates each axis gets. */
  size: number;
  seed: number;
}

const EXTENSIONS = ['py', 'txt', 'json', 'c', 'md', 'sh', 'cfg'];
const WORDS = ['alpha', 'beta', 'core', 'data', 'docs', 'lib', 'src', 'test', 'util', 'tmp', 'cfg', 'io'];
const SCORED_ROOTS: AxisPatterns = { read: ['/app', '/root'], write: ['/app', '/root'], execute: ['/usr/bin', '/usr/local/bin', '/app'] };

/** The seeded PRNG synthetic tasks and policies are drawn from (core's mulberry32). */
export const prng = seededRandom;

export function syntheticTask({ size, seed }: SyntheticOptions): SyntheticTask {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const tree: TreeEntry[] = [];
  const files: string[] = [];
  const dirs = new Set<string>(['/app', '/root']);

  // /app: a few nested directories, ~90% of `size` files; /root: the rest, half of it in the implicit cache.
  const appDirs = ['/app'];
  for (let i = 0; i < Math.max(4, Math.floor(size / 40)); i++) {
    const dir = `${pick(appDirs)}/${pick(WORDS)}${i}`;
    appDirs.push(dir);
    dirs.add(dir);
  }
  for (let i = 0; i < size; i++) {
    const home = rnd() < 0.9;
    const dir = home ? pick(appDirs) : rnd() < 0.5 ? '/root/.cache/pip' : '/root';
    const ext = pick(EXTENSIONS);
    const path = `${dir}/${pick(WORDS)}_${i}.${ext}`;
    tree.push({ path, type: 'file', mode: ext === 'sh' ? 0o755 : 0o644 });
    files.push(path);
  }

  const executables: string[] = [];
  for (let i = 0; i < size; i++) {
    const path = `/usr/bin/${pick(WORDS)}-tool${i}`;
    tree.push({ path, type: 'file', mode: rnd() < 0.95 ? 0o755 : 0o644 });
    executables.push(path);
  }
  tree.push({ path: '/usr/bin/dash', type: 'file', mode: 0o755 }, { path: '/usr/bin/python3.11', type: 'file', mode: 0o755 });
  executables.push('/usr/bin/dash', '/usr/bin/python3.11');
  const usrBinNames = executables.map((p) => p.slice('/usr/bin/'.length));
  tree.push({ path: '/usr/local/bin/helper', type: 'file', mode: 0o755 });
  executables.push('/usr/local/bin/helper');
  const links = ['/usr/bin/sh', '/usr/bin/python3'];
  tree.push({ path: '/usr/bin/sh', type: 'symlink', link: 'dash' }, { path: '/usr/bin/python3', type: 'symlink', link: 'python3.11' });
  for (let i = 0; i < size / 20; i++) {
    const path = `/usr/bin/alias${i}`;
    tree.push({ path, type: 'symlink', link: pick(usrBinNames) });
    links.push(path);
  }
  tree.push({ path: '/bin', type: 'symlink', link: 'usr/bin' }, { path: '/etc/passwd', type: 'file' });
  const snapshot = buildSnapshot(tree, ['/']);

  const sample = (xs: readonly string[], n: number): string[] => [...new Set(Array.from({ length: n }, () => pick(xs)))];
  const appFiles = files.filter((f) => f.startsWith('/app/'));
  const someDir = pick(appDirs.slice(1));
  const reference: ScoringReference = {
    required: {
      read: [...sample(appFiles, 20), `${someDir}/*.py`],
      write: [...sample(appFiles, 6), '/app/out/result.json', '/app/out/summary.txt'],
      execute: ['/bin/sh', '/usr/bin/python3', ...sample(executables, 6)],
    },
    scored_roots: SCORED_ROOTS,
    implicit: { read: ['/root/.cache/**'], write: ['/root/.cache/**'], execute: [] },
    sensitive: { read: sample(appFiles, 3), write: ['/root/.ssh/authorized_keys', ...sample(appFiles, 2)], execute: sample(executables, 2) },
  };
  return { snapshot, reference, pools: { files, dirs: [...dirs], executables, usrBinNames, links } };
}

/**
 * A policy like a model might write: part of the gold set, plus near misses —
 * sibling files, missing paths, directory entries, globs of several breadths,
 * executables spelled through /bin.
 */
export function randomPolicy(task: SyntheticTask, rnd: () => number, entries = 30): Policy {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const { pools, reference } = task;
  const axis = (gold: readonly string[], other: () => string): string[] => {
    const out = new Set<string>();
    for (const g of gold) if (rnd() < 0.7) out.add(g);
    while (out.size < entries / 3) out.add(other());
    return [...out];
  };
  const fileEntry = (): string => {
    const r = rnd();
    if (r < 0.5) return pick(pools.files);
    if (r < 0.6) return `${pick(pools.dirs)}/missing_${Math.floor(rnd() * 1000)}.txt`;
    if (r < 0.7) return pick(pools.dirs);
    if (r < 0.8) return `${pick(pools.dirs)}/*.${pick(EXTENSIONS)}`;
    if (r < 0.9) return `${pick(pools.dirs)}/**`;
    return `${pick(pools.dirs)}/${pick(WORDS)}_*`;
  };
  const execEntry = (): string => {
    const r = rnd();
    if (r < 0.6) return pick(pools.executables);
    if (r < 0.75) return `/bin/${pick(pools.usrBinNames)}`;
    if (r < 0.85) return pick(pools.links);
    if (r < 0.95) return `/usr/bin/${pick(WORDS)}-*`;
    return '/usr/bin/*';
  };
  return {
    read: axis(reference.required.read, fileEntry),
    write: axis(reference.required.write, fileEntry),
    execute: axis(reference.required.execute, execEntry),
  };
}
