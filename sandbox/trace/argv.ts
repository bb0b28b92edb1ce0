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
 * recv* (what arrives is no access of the agent's), io_uring (not decoded).
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
  // signals sent: one aimed outside the sandbox is refused (Landlock scoping) and is evidence of tampering
  'kill',
  'tkill',
  'tgkill',
  'rt_sigqueueinfo',
  'rt_tgsigqueueinfo',
  '?pidfd_send_signal',
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
  'sendmmsg',
] as const;

export interface StraceArgvOptions {
  /** Where strace writes the trace, inside the container (`/proc/self/fd/N` for a pipe the agent reads). */
  outputPath: string;
  /** The command to trace, as an argv array. */
  cmd: readonly string[];
  /**
   * How to start strace (default `['strace']`, the image's own). The sandbox passes the harness's
   * copy, run through its own loader, so a command that replaced the image's strace changes nothing.
   */
  strace?: readonly string[];
}

export function straceArgv(options: StraceArgvOptions): string[] {
  const { outputPath, cmd } = options;
  if (cmd.length === 0) throw new RangeError('straceArgv: empty command');
  const strace = options.strace ?? ['strace'];
  if (strace.length === 0) throw new RangeError('straceArgv: empty strace invocation');
  return [
    ...strace,
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
}
