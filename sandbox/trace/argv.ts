/**
 * The strace command line authbench traces with. Pure: returns an argv array.
 *
 * Option choices (strace 6.1, Debian bookworm):
 * - `-f --seccomp-bpf`: follow children; the seccomp filter makes strace stop
 *   only on traced syscalls (~1.3x overhead instead of 5-100x). It needs `-f`
 *   and sets no_new_privs on the tracee, so setuid binaries lose their bit.
 * - `-y`: fd arguments and fd results carry their path (`3</app/x>`), and
 *   `AT_FDCWD` carries the cwd, which lets the parser resolve relative paths.
 * - `-qq`: no attach/exit chatter; exits come from the traced `exit_group`.
 *   (`-e signal=none` would hide `+++ killed by +++` lines anyway.)
 * - `-ttt`: absolute microsecond timestamps.
 * - `-s`: long enough for realistic execve argv (`bash -c '<script>'`);
 *   path strings are never cut by `-s`, only argv and send buffers are.
 * - `?name`: strace ignores a syscall that does not exist on the current
 *   architecture (arm64 has no `open`, `fork`, ...) instead of failing.
 */

/** Max length of a printed string argument (execve argv, send buffers). */
export const STRACE_STRING_LIMIT = 4096;

/**
 * Every syscall the parser turns into an event. Deliberately absent: the stat
 * family, readlink, getdents (noise: every `ls` and interpreter start issues
 * hundreds; directory listing shows up as an O_DIRECTORY open), read/write
 * (the open flags already say how a file is used), utime/xattr (metadata),
 * sendmmsg/recv* (destinations are set by connect), io_uring (not decoded).
 */
export const TRACED_SYSCALLS = [
  // process
  'execve',
  'execveat',
  'clone',
  '?clone3',
  '?fork',
  '?vfork',
  'exit_group',
  'chdir',
  'fchdir',
  // file
  '?open',
  'openat',
  '?openat2',
  '?creat',
  '?access',
  'faccessat',
  '?faccessat2',
  'truncate',
  'ftruncate',
  '?unlink',
  'unlinkat',
  '?rename',
  'renameat',
  '?renameat2',
  '?mkdir',
  'mkdirat',
  '?mknod',
  'mknodat',
  '?rmdir',
  '?chmod',
  'fchmod',
  'fchmodat',
  '?fchmodat2',
  '?chown',
  'fchown',
  '?lchown',
  'fchownat',
  '?link',
  'linkat',
  '?symlink',
  'symlinkat',
  'memfd_create',
  // network
  'socket',
  'connect',
  'bind',
  'sendto',
  'sendmsg',
] as const;

export interface StraceArgvOptions {
  /** Where strace writes the trace, inside the container (keeps the command's own output clean). */
  outputPath: string;
  /** The command to trace, as an argv array. */
  cmd: readonly string[];
  /** Pin tracer and tracee to this CPU with taskset: strace is several times cheaper pinned. */
  pinCpu?: number;
}

export function straceArgv(options: StraceArgvOptions): string[] {
  const { outputPath, cmd, pinCpu } = options;
  if (cmd.length === 0) throw new RangeError('straceArgv: empty command');
  if (pinCpu !== undefined && (!Number.isInteger(pinCpu) || pinCpu < 0)) {
    throw new RangeError(`straceArgv: pinCpu must be a CPU index, got ${pinCpu}`);
  }
  const strace = [
    'strace',
    '-f',
    '--seccomp-bpf',
    '-y',
    '-qq',
    '-ttt',
    '-e',
    'signal=none',
    '-e',
    `trace=${TRACED_SYSCALLS.join(',')}`,
    '-s',
    String(STRACE_STRING_LIMIT),
    '-o',
    outputPath,
    '--',
    ...cmd,
  ];
  return pinCpu === undefined ? strace : ['taskset', '-c', String(pinCpu), ...strace];
}
