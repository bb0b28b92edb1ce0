/**
 * Before enforcing, create the missing base directory of each write subtree
 * the policy grants (`/root/.cache/**` when /root/.cache does not exist yet).
 * Landlock rules attach to existing inodes, so a grant on a missing directory
 * lands on its parent: write `/root/.cache/**` would otherwise open all of
 * /root — including ~/.ssh and ~/.config — to reads and writes. Creating the
 * (empty, policy-authorized) directory keeps the grant where the policy put it.
 * Only a directory whose parent exists is created: the harness never builds
 * paths the policy did not name.
 */
import { hasRecursiveTail, isGlob } from '../sandbox/paths/index.ts';
import type { PatternSet } from '../sandbox/compile/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';

/** Bases of the glob-free `dir/**` write entries of the policy and the implicit set, sorted, each once. Pure. */
export function writeSubtreeRoots(policy: Pick<Policy, 'write'>, implicit: Pick<PatternSet, 'write'>): string[] {
  const roots = new Set<string>();
  for (const p of [...policy.write, ...implicit.write]) {
    if (!hasRecursiveTail(p) || isGlob(p)) continue;
    const base = p.slice(0, -3);
    if (base !== '' && base !== '/') roots.add(base);
  }
  return [...roots].sort();
}

/** argv that creates each missing directory whose parent exists and prints the ones it created. */
export function materializeArgv(dirs: readonly string[]): string[] {
  const script =
    'for d in "$@"; do p="${d%/*}"; [ -n "$p" ] || p=/; ' +
    'if [ ! -e "$d" ] && [ ! -L "$d" ] && [ -d "$p" ]; then mkdir -- "$d" && printf "%s\\n" "$d"; fi; done';
  return ['bash', '-c', script, 'materialize', ...dirs];
}
