/**
 * The default implicit set: runtime noise every command touches whatever the
 * task is (loader, libraries, locale, /proc, interpreter stdlib, the shell,
 * scratch space). It is excluded from S_gold and granted to every enforced
 * policy. Kept as data with a reason per row so the README and the CLI can
 * print it. Merged with the task spec's own `implicit_permissions`.
 *
 * Decisions:
 * - /dev is a precise list (null, zero, full, random, urandom, tty, pts, ptmx,
 *   std streams, fd, shm), not `/dev/**`: block devices stay out.
 * - /tmp/** is scratch, readable and writable: compilers, mktemp, sort, sed
 *   and python's tempfile all use it, and no task's outcome lives there.
 * - Installed python modules (stdlib, dist-packages, site-packages) are
 *   runtime like shared libraries; the interpreter binary itself is not
 *   implicit — AuthBench lists interpreters on the execute axis.
 * - The shell is implicit on the execute axis: solve.sh and every agent
 *   command run through it. Listed by realpath and by merged-/usr alias, since
 *   execute entries are compared by realpath inside the image.
 * - Python bytecode caches (`__pycache__`, `*.pyc`) cannot be written as a
 *   pattern (only a trailing `/**` may span segments); derive.ts drops them
 *   by rule instead (python ignores failures to read or write them).
 */
import { normalizePattern, patternProblem } from '../sandbox/paths/index.ts';
import { mapAxes, type Axis, type AxisLists } from './axes.ts';

export interface ImplicitRule {
  pattern: string;
  axes: readonly Axis[];
  reason: string;
}

const R: readonly Axis[] = ['read'];
const RW: readonly Axis[] = ['read', 'write'];
const W: readonly Axis[] = ['write'];
const X: readonly Axis[] = ['execute'];
const RX: readonly Axis[] = ['read', 'execute'];

export const DEFAULT_IMPLICIT_RULES: readonly ImplicitRule[] = [
  // dynamic loader and shared libraries
  { pattern: '/etc/ld.so.cache', axes: R, reason: 'dynamic loader library cache, read at every exec' },
  { pattern: '/etc/ld.so.preload', axes: R, reason: 'probed by the dynamic loader at every exec' },
  { pattern: '/etc/ld.so.conf', axes: R, reason: 'loader configuration (dlopen, ldconfig)' },
  { pattern: '/etc/ld.so.conf.d/**', axes: R, reason: 'loader configuration (dlopen, ldconfig)' },
  { pattern: '/lib64/ld-linux-*.so.*', axes: RX, reason: 'dynamic loader (x86-64 path); mapped for every dynamic executable' },
  { pattern: '/lib/ld-linux-*.so.*', axes: RX, reason: 'dynamic loader (arm64 path)' },
  { pattern: '/lib/ld-musl-*.so.*', axes: RX, reason: 'dynamic loader (musl, Alpine)' },
  { pattern: '/lib/*-linux-gnu/ld-linux-*.so.*', axes: X, reason: 'dynamic loader, multiarch realpath (non-merged /usr)' },
  { pattern: '/usr/lib/*-linux-gnu/ld-linux-*.so.*', axes: X, reason: 'dynamic loader, multiarch realpath (merged /usr)' },
  { pattern: '/lib/*-linux-gnu/**', axes: R, reason: 'multiarch shared libraries (libc, libm, gconv, ...)' },
  { pattern: '/usr/lib/*-linux-gnu/**', axes: R, reason: 'multiarch shared libraries (libc, libm, gconv, ...)' },
  { pattern: '/lib/*.so*', axes: R, reason: 'shared libraries in non-multiarch layouts (Alpine, RHEL)' },
  { pattern: '/lib64/*.so*', axes: R, reason: 'shared libraries in non-multiarch layouts (RHEL)' },
  { pattern: '/usr/lib/*.so*', axes: R, reason: 'shared libraries in non-multiarch layouts (Alpine, RHEL)' },
  { pattern: '/usr/lib64/*.so*', axes: R, reason: 'shared libraries in non-multiarch layouts (RHEL)' },
  { pattern: '/usr/local/lib/*.so*', axes: R, reason: 'locally built shared libraries (python:* images put libpython here)' },
  // locale, time, terminal
  { pattern: '/usr/lib/locale/**', axes: R, reason: 'locale data (setlocale)' },
  { pattern: '/usr/share/locale/**', axes: R, reason: 'locale aliases and message catalogs' },
  { pattern: '/usr/share/i18n/**', axes: R, reason: 'locale sources' },
  { pattern: '/etc/localtime', axes: R, reason: 'local time zone (libc, python time)' },
  { pattern: '/etc/timezone', axes: R, reason: 'time zone name (Debian)' },
  { pattern: '/usr/share/zoneinfo/**', axes: R, reason: 'time zone database (/etc/localtime points here)' },
  { pattern: '/usr/share/terminfo/**', axes: R, reason: 'terminal descriptions (ncurses: less, top, readline)' },
  { pattern: '/lib/terminfo/**', axes: R, reason: 'terminal descriptions (ncurses, Debian)' },
  { pattern: '/etc/terminfo/**', axes: R, reason: 'terminal descriptions (ncurses, local)' },
  // kernel interfaces
  { pattern: '/proc/**', axes: R, reason: 'process information (/proc/self, /proc/filesystems, /proc/cpuinfo)' },
  { pattern: '/sys/**', axes: R, reason: 'CPU and device information read by runtimes (nproc, os.cpu_count)' },
  { pattern: '/dev/null', axes: RW, reason: 'discarded output, empty input' },
  { pattern: '/dev/zero', axes: RW, reason: 'zero source' },
  { pattern: '/dev/full', axes: RW, reason: 'always-full device (tests of write errors)' },
  { pattern: '/dev/random', axes: R, reason: 'randomness (seeding, temp names)' },
  { pattern: '/dev/urandom', axes: R, reason: 'randomness (seeding, temp names, git object temp files)' },
  { pattern: '/dev/tty', axes: RW, reason: 'controlling terminal (probed by shells)' },
  { pattern: '/dev/ptmx', axes: RW, reason: 'pseudo-terminal allocation' },
  { pattern: '/dev/pts/**', axes: RW, reason: 'pseudo-terminals' },
  { pattern: '/dev/stdin', axes: R, reason: 'standard input by name' },
  { pattern: '/dev/stdout', axes: W, reason: 'standard output by name' },
  { pattern: '/dev/stderr', axes: W, reason: 'standard error by name' },
  { pattern: '/dev/fd/**', axes: RW, reason: 'open descriptors by name (process substitution)' },
  { pattern: '/dev/shm/**', axes: RW, reason: 'POSIX shared memory and semaphores (python multiprocessing)' },
  // libc name services and probes
  { pattern: '/etc/nsswitch.conf', axes: R, reason: 'libc name service configuration' },
  { pattern: '/etc/passwd', axes: R, reason: 'libc user lookups (getpwuid: ls -l, tar, chown, bash)' },
  { pattern: '/etc/group', axes: R, reason: 'libc group lookups (getgrgid: ls -l, tar)' },
  { pattern: '/etc/host.conf', axes: R, reason: 'libc resolver configuration' },
  { pattern: '/etc/hosts', axes: R, reason: 'libc host lookups (localhost)' },
  { pattern: '/etc/resolv.conf', axes: R, reason: 'libc resolver configuration' },
  { pattern: '/etc/gai.conf', axes: R, reason: 'getaddrinfo address ordering' },
  { pattern: '/etc/services', axes: R, reason: 'libc service name lookups' },
  { pattern: '/etc/protocols', axes: R, reason: 'libc protocol name lookups' },
  { pattern: '/etc/selinux/config', axes: R, reason: 'probed by coreutils through libselinux' },
  // interpreters' own libraries
  { pattern: '/usr/lib/python3.*/**', axes: R, reason: 'python standard library (Debian/Ubuntu)' },
  { pattern: '/usr/lib/python3/dist-packages/**', axes: R, reason: 'Debian-packaged python modules (pytest, ...)' },
  { pattern: '/usr/local/lib/python3.*/**', axes: R, reason: 'python stdlib and site-packages (python:* images), local dist-packages' },
  { pattern: '/usr/share/perl/**', axes: R, reason: 'perl standard library (git and Debian scripts use perl)' },
  { pattern: '/usr/share/perl5/**', axes: R, reason: 'Debian-packaged perl modules' },
  // the shell
  { pattern: '/usr/bin/bash', axes: X, reason: 'the shell solve.sh and agent commands run in' },
  { pattern: '/usr/bin/dash', axes: X, reason: 'the shell (/bin/sh on Debian/Ubuntu)' },
  { pattern: '/usr/bin/sh', axes: X, reason: 'the shell when sh is a real file' },
  { pattern: '/bin/bash', axes: X, reason: 'the shell (non-merged /usr)' },
  { pattern: '/bin/dash', axes: X, reason: 'the shell (non-merged /usr)' },
  { pattern: '/bin/sh', axes: X, reason: 'the shell (non-merged /usr)' },
  { pattern: '/bin/busybox', axes: X, reason: 'the shell (Alpine: /bin/sh is busybox)' },
  { pattern: '/usr/bin/busybox', axes: X, reason: 'the shell (busybox elsewhere)' },
  // scratch
  { pattern: '/tmp/**', axes: RW, reason: 'scratch space: compilers, mktemp, sort, sed, tempfile' },
];

/** The default implicit set as per-axis pattern lists. */
export function defaultImplicit(): AxisLists {
  return mapAxes((axis) => DEFAULT_IMPLICIT_RULES.filter((r) => r.axes.includes(axis)).map((r) => r.pattern));
}

/** Union of implicit sets (default, the task spec's, harness paths), normalised, sorted, deduplicated. */
export function mergeImplicit(...sets: readonly AxisLists[]): AxisLists {
  return mapAxes((axis) => sets.flatMap((s) => s[axis].map(normalizePattern)));
}

/** Rows whose pattern is invalid per patternProblem (the table is tested to have none). */
export function invalidImplicitRules(rules: readonly ImplicitRule[] = DEFAULT_IMPLICIT_RULES): { rule: ImplicitRule; problem: string }[] {
  const out: { rule: ImplicitRule; problem: string }[] = [];
  for (const rule of rules) {
    const problem =
      normalizePattern(rule.pattern) !== rule.pattern ? 'not normalised' : rule.axes.length === 0 ? 'no axis' : patternProblem(rule.pattern);
    if (problem !== undefined) out.push({ rule, problem });
  }
  return out;
}
