/**
 * The syscalls the eBPF tracer watches and the arguments it prints for each:
 * one table that both the program builder (program.ts) and the parser
 * (parse.ts) read, so a record's field list can never drift between writer
 * and reader. Field names are the tracepoint's own (`format` files under
 * /sys/kernel/tracing/events/syscalls/sys_enter_<name>/).
 *
 * The set is what gold derivation and containment use (gold/derive.ts):
 * execs, opens, the calls that change names, modes and owners, and the
 * address-bearing network calls. Deliberately absent compared with strace
 * (sandbox/trace/argv.ts): access/faccessat (no gold need) and exit_group — the next
 * slice adds them if ebpf is to replace strace everywhere. socket is here: an IP socket is gold
 * (`network.ip_sockets`). The kill family is here: eval's host trace
 * must show a refused signal at the harness as strace does.
 */

/** How a tracepoint argument is printed. */
export type ArgKind =
  /** An integer (fd, flags, mode, uid): `%d`. */
  | 'int'
  /** A user-space C string: `str()`, bounded by STRING_LIMIT. */
  | 'str'
  /** A user-space sockaddr: its bytes as hex (`%rx` of `buf()`), length from the named length argument. */
  | { sockaddr: string }
  /** A user-space `struct user_msghdr`: the sockaddr its msg_name points at (msg_namelen bytes), printed as a sockaddr; none when NULL. */
  | 'msg_name'
  /** A user-space `struct open_how`: its first u64 (the flags), read through the pointer. */
  | 'how_flags';

export interface ArgSpec {
  /** The tracepoint field (`args->name`). */
  name: string;
  kind: ArgKind;
}

/** Enter-side arguments printed per syscall. execve/execveat argv comes in separate records. */
export const EBPF_SYSCALLS = {
  execve: [{ name: 'filename', kind: 'str' }],
  execveat: [
    { name: 'fd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'flags', kind: 'int' },
  ],
  open: [
    { name: 'filename', kind: 'str' },
    { name: 'flags', kind: 'int' },
    { name: 'mode', kind: 'int' },
  ],
  openat: [
    { name: 'dfd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'flags', kind: 'int' },
    { name: 'mode', kind: 'int' },
  ],
  openat2: [
    { name: 'dfd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'how', kind: 'how_flags' },
  ],
  creat: [
    { name: 'pathname', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  mknod: [
    { name: 'filename', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  mknodat: [
    { name: 'dfd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  rename: [
    { name: 'oldname', kind: 'str' },
    { name: 'newname', kind: 'str' },
  ],
  renameat: [
    { name: 'olddfd', kind: 'int' },
    { name: 'oldname', kind: 'str' },
    { name: 'newdfd', kind: 'int' },
    { name: 'newname', kind: 'str' },
  ],
  renameat2: [
    { name: 'olddfd', kind: 'int' },
    { name: 'oldname', kind: 'str' },
    { name: 'newdfd', kind: 'int' },
    { name: 'newname', kind: 'str' },
    { name: 'flags', kind: 'int' },
  ],
  unlink: [{ name: 'pathname', kind: 'str' }],
  unlinkat: [
    { name: 'dfd', kind: 'int' },
    { name: 'pathname', kind: 'str' },
    { name: 'flag', kind: 'int' },
  ],
  mkdir: [
    { name: 'pathname', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  mkdirat: [
    { name: 'dfd', kind: 'int' },
    { name: 'pathname', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  rmdir: [{ name: 'pathname', kind: 'str' }],
  link: [
    { name: 'oldname', kind: 'str' },
    { name: 'newname', kind: 'str' },
  ],
  linkat: [
    { name: 'olddfd', kind: 'int' },
    { name: 'oldname', kind: 'str' },
    { name: 'newdfd', kind: 'int' },
    { name: 'newname', kind: 'str' },
    { name: 'flags', kind: 'int' },
  ],
  symlink: [
    { name: 'oldname', kind: 'str' },
    { name: 'newname', kind: 'str' },
  ],
  symlinkat: [
    { name: 'oldname', kind: 'str' },
    { name: 'newdfd', kind: 'int' },
    { name: 'newname', kind: 'str' },
  ],
  chmod: [
    { name: 'filename', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  fchmod: [
    { name: 'fd', kind: 'int' },
    { name: 'mode', kind: 'int' },
  ],
  fchmodat: [
    { name: 'dfd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'mode', kind: 'int' },
  ],
  chown: [{ name: 'filename', kind: 'str' }],
  lchown: [{ name: 'filename', kind: 'str' }],
  fchown: [{ name: 'fd', kind: 'int' }],
  fchownat: [
    { name: 'dfd', kind: 'int' },
    { name: 'filename', kind: 'str' },
    { name: 'flag', kind: 'int' },
  ],
  truncate: [{ name: 'path', kind: 'str' }],
  ftruncate: [{ name: 'fd', kind: 'int' }],
  chdir: [{ name: 'filename', kind: 'str' }],
  // An anonymous file: its fd names `/memfd:<name>` (as strace -y does), so a fileless
  // execveat(fd, "", AT_EMPTY_PATH) of it has a path, not an unknown dirfd.
  memfd_create: [
    { name: 'uname', kind: 'str' },
    { name: 'flags', kind: 'int' },
  ],
  fchdir: [{ name: 'fd', kind: 'int' }],
  // The fd table, so a dirfd or fd argument names its path (strace's -y did this in the tracer):
  // dup and fcntl(F_DUPFD) copy an entry, close and close_range drop it, F_SETFD and dup3 set close-on-exec.
  close: [{ name: 'fd', kind: 'int' }],
  close_range: [
    { name: 'fd', kind: 'int' },
    { name: 'max_fd', kind: 'int' },
    { name: 'flags', kind: 'int' },
  ],
  dup: [{ name: 'fildes', kind: 'int' }],
  dup2: [
    { name: 'oldfd', kind: 'int' },
    { name: 'newfd', kind: 'int' },
  ],
  dup3: [
    { name: 'oldfd', kind: 'int' },
    { name: 'newfd', kind: 'int' },
    { name: 'flags', kind: 'int' },
  ],
  fcntl: [
    { name: 'fd', kind: 'int' },
    { name: 'cmd', kind: 'int' },
    { name: 'arg', kind: 'int' },
  ],
  socket: [
    { name: 'family', kind: 'int' },
    { name: 'type', kind: 'int' },
    { name: 'protocol', kind: 'int' },
  ],
  connect: [
    { name: 'fd', kind: 'int' },
    { name: 'uservaddr', kind: { sockaddr: 'addrlen' } },
  ],
  bind: [
    { name: 'fd', kind: 'int' },
    { name: 'umyaddr', kind: { sockaddr: 'addrlen' } },
  ],
  sendto: [
    { name: 'fd', kind: 'int' },
    { name: 'addr', kind: { sockaddr: 'addr_len' } },
  ],
  // A datagram to an explicit destination without connect: the same send as sendto's.
  sendmsg: [
    { name: 'fd', kind: 'int' },
    { name: 'msg', kind: 'msg_name' },
  ],
  // A batch of them: each of the first MMSG_LIMIT messages' destinations comes in an N record of
  // its own (the message vector is read by the tracer, as exec's argv is).
  sendmmsg: [
    { name: 'fd', kind: 'int' },
    { name: 'vlen', kind: 'int' },
  ],
  // Signals: a refused one at the harness (the agent, the tracer's stand-in, pid 1) is tampering
  // evidence (agent/tamper.ts), whichever tracer saw it.
  kill: [
    { name: 'pid', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
  tkill: [
    { name: 'pid', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
  tgkill: [
    { name: 'tgid', kind: 'int' },
    { name: 'pid', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
  rt_sigqueueinfo: [
    { name: 'pid', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
  rt_tgsigqueueinfo: [
    { name: 'tgid', kind: 'int' },
    { name: 'pid', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
  pidfd_send_signal: [
    { name: 'pidfd', kind: 'int' },
    { name: 'sig', kind: 'int' },
  ],
} as const satisfies Record<string, readonly ArgSpec[]>;

export type EbpfSyscall = keyof typeof EBPF_SYSCALLS;

export function isEbpfSyscall(name: string): name is EbpfSyscall {
  return Object.hasOwn(EBPF_SYSCALLS, name);
}

/**
 * bpftrace's string buffer (BPFTRACE_STRLEN; 200 is the most bpftrace 0.17
 * accepts, its strings live on the 512-byte BPF stack). A printed string is
 * at most STRING_LIMIT - 1 bytes: one of exactly that length may have been cut.
 */
export const STRING_LIMIT = 200;
/** execve arguments printed per call; a longer argv is marked truncated (strace's is cut at its -s too). */
export const ARGV_LIMIT = 24;
/** sendmmsg messages whose destination is read per call (native/ab-ebpf.h's AB_MMSG_LIMIT); past them the call is reported unreadable. */
export const MMSG_LIMIT = 8;
/** sizeof(struct mmsghdr) on x86_64 (native/ab-ebpf.h's AB_MMSGHDR_SIZE). */
export const MMSGHDR_SIZE = 64;
/** Bytes of a sockaddr printed: sizeof(struct sockaddr_un), the largest family authbench decodes. */
export const SOCKADDR_LIMIT = 110;
