/**
 * Checking the compiler against the real kernel: a python probe attempts
 * filesystem operations under the launcher, and each outcome is judged
 * against the static decision (policyAllows), the pure Landlock model
 * (kernelAllows) and the fidelity report. Everything here is pure: the
 * docker test (test/docker/compile-fidelity.test.ts) does the I/O.
 *
 * One probe process runs many attempts, so attempts must not disturb each
 * other: mutating ones come after the rest, every created/removed name is
 * used once (aliases through symlinked directories included), and removals
 * go deepest first. Nothing is undone in between: recreating a removed file
 * would give it a new inode, beyond the rules the launcher attached at start.
 */
import { posix } from 'node:path';
import { z } from 'zod';
import { canonicalizeExecutables, covers, normalizePattern, viewSnapshot } from '../paths/index.ts';
import type { FsSnapshot, SnapshotView } from '../paths/index.ts';
import type { Policy, PolicyAxis } from '../policy/index.ts';
import { handledFsAccess } from './access.ts';
import type { CompileResult } from './compile.ts';
import type { FidelityEntry } from './fidelity.ts';
import { AXIS_OF, explainAccess, FS_OPS, kernelAllows, policyAllows, requirements } from './model.ts';

/** FS_OPS plus chmod, which no Landlock right covers: the launcher's seccomp filter decides it (`setattr`). */
export const PROBE_OPS = [...FS_OPS, 'chmod'] as const;
export type ProbeOp = (typeof PROBE_OPS)[number];

export interface ProbeAttempt {
  path: string;
  op: ProbeOp;
}

/**
 * The probe: reads a JSON array of attempts on stdin, prints one JSON line
 * per attempt. Execution is measured at execve (a close-on-exec pipe reports
 * its errno), not by the script's exit: the interpreter reading the script is
 * a read, not an execute. Run it as `python3 -I -S -B <file>` so startup reads
 * nothing beyond the stdlib.
 */
export const PROBE_SCRIPT = `import errno, json, os, stat, sys

NULL = os.open('/dev/null', os.O_RDWR)

def execute(path):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(NULL, 1)
            os.dup2(NULL, 2)
            os.execv(path, [path])
        except OSError as e:
            os.write(w, str(e.errno).encode())
        os._exit(127)
    os.close(w)
    data = b''
    while True:
        chunk = os.read(r, 64)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    if data:
        code = int(data)
        raise OSError(code, os.strerror(code), path)

def attempt(op, path):
    if op == 'read':
        if stat.S_ISDIR(os.stat(path).st_mode):
            os.listdir(path)
        else:
            os.close(os.open(path, os.O_RDONLY))
    elif op == 'write':
        os.close(os.open(path, os.O_WRONLY))
    elif op == 'truncate':
        os.truncate(path, os.stat(path).st_size)
    elif op == 'execute':
        execute(path)
    elif op == 'create':
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    elif op == 'mkdir':
        os.mkdir(path, 0o755)
    elif op == 'remove':
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.rmdir(path)
        else:
            os.unlink(path)
    elif op == 'chmod':
        os.chmod(path, stat.S_IMODE(os.stat(path).st_mode))
    else:
        raise ValueError(op)

for i, a in enumerate(json.load(sys.stdin)):
    try:
        attempt(a['op'], a['path'])
        out = {'i': i, 'ok': True}
    except OSError as e:
        out = {'i': i, 'ok': False, 'errno': errno.errorcode.get(e.errno, str(e.errno))}
    print(json.dumps(out), flush=True)
`;

export const ProbeLineSchema = z
  .object({
    i: z.number().int().min(0).describe('Index of the attempt in the probe input.'),
    ok: z.boolean().describe('The operation succeeded.'),
    errno: z.string().optional().describe('Symbolic errno (EACCES, ...) when it failed.'),
  })
  .describe('One probe result line.');
export type ProbeLine = z.infer<typeof ProbeLineSchema>;

/** What the kernel did: allowed, denied by the sandbox, or failed for another reason (which says nothing). */
export type KernelOutcome = { kind: 'allowed' } | { kind: 'denied'; errno: string } | { kind: 'failed'; errno: string };

/**
 * Landlock and seccomp refuse with EACCES/EPERM. ENOTEMPTY from rmdir comes
 * after Landlock's check (security_path_rmdir runs first), so it means allowed.
 */
export function kernelOutcome(line: ProbeLine): KernelOutcome {
  if (line.ok) return { kind: 'allowed' };
  const errno = line.errno ?? 'unknown';
  if (errno === 'EACCES' || errno === 'EPERM') return { kind: 'denied', errno };
  if (errno === 'ENOTEMPTY') return { kind: 'allowed' };
  return { kind: 'failed', errno };
}

/** Probe stdout → one line per attempt, in attempt order; throws when lines are missing or malformed. */
export function parseProbeOutput(stdout: string, count: number): ProbeLine[] {
  const lines = stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ProbeLineSchema.parse(JSON.parse(l)));
  if (lines.length !== count || lines.some((l, i) => l.i !== i)) {
    throw new RangeError(`probe printed ${lines.length} results for ${count} attempts`);
  }
  return lines;
}

const MUTATING: ReadonlySet<ProbeOp> = new Set(['create', 'mkdir', 'remove']);
const PHASE: Record<ProbeOp, number> = { read: 0, write: 0, truncate: 0, execute: 0, chmod: 0, create: 1, mkdir: 1, remove: 2 };

/**
 * The attempts one probe run makes on these paths: every op that can happen
 * on the snapshot (requirements defined), one of create/mkdir per new name
 * (`makeDir` picks), mutating ops once per real name, ordered so that no
 * attempt changes another's preconditions.
 */
export function planProbeAttempts(snapshot: FsSnapshot, paths: readonly string[], makeDir: (path: string) => boolean): ProbeAttempt[] {
  const view = viewSnapshot(snapshot);
  const used = new Set<string>();
  const planned: { attempt: ProbeAttempt; key: string }[] = [];
  for (const raw of paths) {
    const path = normalizePattern(raw);
    for (const op of PROBE_OPS) {
      if (op === 'chmod' ? view.resolve(path)?.type !== 'file' : requirements(snapshot, path, op) === undefined) continue;
      if (op === 'create' || op === 'mkdir') {
        if ((op === 'mkdir') !== makeDir(path)) continue;
      }
      const key = MUTATING.has(op) ? placedName(view, path) : `${op} ${path}`;
      if (key === undefined || used.has(key)) continue;
      used.add(key);
      planned.push({ attempt: { path, op }, key });
    }
  }
  const depth = (p: string): number => p.split('/').length;
  return planned
    .sort((a, b) => PHASE[a.attempt.op] - PHASE[b.attempt.op] || (a.attempt.op === 'remove' ? depth(b.key) - depth(a.key) : 0))
    .map((p) => p.attempt);
}

/** The name a create/mkdir/remove acts on: its directory resolved, its last segment not. */
function placedName(view: SnapshotView, path: string): string | undefined {
  const parent = view.realpath(posix.dirname(path));
  return parent === undefined ? undefined : posix.join(parent, posix.basename(path));
}

/** The model's ops on their axes; chmod (a probe only) is judged on write. */
const axisOf = (op: ProbeOp): PolicyAxis => (op === 'chmod' ? 'write' : AXIS_OF[op]);

/**
 * Report kinds that may explain a denial of what the policy allows, by op.
 * Opening an existing file loses access only where the compiler refused to
 * follow a symlink (made at run time, or leading somewhere a link may not
 * hand rights over: `narrowed`) or the path is the harness's (`reserved`);
 * otherwise it always grants the inode itself. Creating may fail where
 * nothing can carry the grant; removing where removal grants are off or would
 * land on `/`.
 */
const LIMITING: Record<ProbeOp, ReadonlySet<FidelityEntry['kind']>> = {
  read: new Set(['narrowed', 'reserved']),
  write: new Set(['narrowed', 'reserved']),
  truncate: new Set(['narrowed', 'reserved']),
  execute: new Set(['narrowed', 'reserved']),
  chmod: new Set(),
  create: new Set(['narrowed', 'nonexistent', 'no-match', 'reserved']),
  mkdir: new Set(['narrowed', 'nonexistent', 'no-match', 'reserved']),
  remove: new Set(['narrowed', 'reserved']),
};
/** Report kinds that say the kernel allows more than the policy. */
const WIDENING: ReadonlySet<FidelityEntry['kind']> = new Set(['widened', 'implicit', 'abi-limited']);

export type DisagreementKind = 'model-mismatch' | 'unexplained-denial' | 'unexplained-grant' | 'probe-failed';

export interface AttemptVerdict {
  attempt: ProbeAttempt;
  outcome: KernelOutcome;
  /** policyAllows (for chmod: the write axis covers the path). */
  static: boolean;
  /** kernelAllows (for chmod: rules.setattr). */
  model: boolean;
  kernel: boolean;
  /** Report facets that explain a difference between static and kernel (empty when they agree). */
  explained: FidelityEntry[];
  problems: DisagreementKind[];
}

/**
 * Judge one real outcome. The contract: (1) what the policy allows, the
 * kernel allows, unless a narrowed/nonexistent/no-match/reserved/abi-limited facet for
 * that path says otherwise; (2) what the kernel allows beyond the policy, a
 * widened/implicit/abi-limited facet explains; (3) the pure model predicts
 * the kernel exactly.
 */
export function judgeAttempt(
  policy: Pick<Policy, PolicyAxis>,
  snapshot: FsSnapshot,
  compiled: CompileResult,
  attempt: ProbeAttempt,
  outcome: KernelOutcome,
): AttemptVerdict {
  const { path, op } = attempt;
  const entries = compiled.fidelity.entries;
  const kernel = outcome.kind === 'allowed';
  const stat = op === 'chmod' ? policyAllows(policy, snapshot, path, 'write') : policyAllows(policy, snapshot, path, op);
  const model = op === 'chmod' ? compiled.rules.setattr === true : kernelAllows(compiled.rules, snapshot, path, op, compiled.fidelity.abi);
  const problems: DisagreementKind[] = [];
  let explained: FidelityEntry[] = [];
  if (outcome.kind === 'failed') problems.push('probe-failed');
  else {
    if (model !== kernel) problems.push('model-mismatch');
    if (stat && !kernel) {
      explained = limitingFacets(entries, snapshot, path, op, compiled.fidelity.abi);
      if (explained.length === 0) problems.push('unexplained-denial');
    }
    if (!stat && kernel) {
      explained =
        op === 'chmod'
          ? entries.filter((e) => e.source === 'kernel' && e.entry === 'setattr' && e.kind === 'widened')
          : explainAccess(compiled.fidelity, snapshot, path, op).filter((e) => WIDENING.has(e.kind));
      if (explained.length === 0) problems.push('unexplained-grant');
    }
  }
  return { attempt, outcome, static: stat, model, kernel, explained, problems };
}

/** Facets on the op's axis whose pattern covers the path (as written, resolved or placed) and that report a loss the op can suffer. */
function limitingFacets(entries: readonly FidelityEntry[], snapshot: FsSnapshot, path: string, op: ProbeOp, abi: number): FidelityEntry[] {
  const view = viewSnapshot(snapshot);
  const p = normalizePattern(path);
  const names = [p, view.realpath(p), placedName(view, p)].filter((n): n is string => n !== undefined);
  const handled = new Set(handledFsAccess(abi));
  const needs = op === 'chmod' ? [] : (requirements(snapshot, p, op) ?? []);
  return entries.filter((e) => {
    if (e.kind === 'abi-limited' && e.axis === 'kernel') return needs.some((n) => !handled.has(n.access) && e.entry === n.access);
    if (!LIMITING[op].has(e.kind) || e.axis !== axisOf(op)) return false;
    // Execute entries are compiled (and allowed by policyAllows) in their canonical form.
    const patterns = e.axis === 'execute' ? [e.entry, canonicalizeExecutables([e.entry], snapshot)[0] ?? e.entry] : [e.entry];
    return names.some((n) => patterns.some((pat) => covers(pat, n)));
  });
}
