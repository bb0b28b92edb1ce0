/**
 * Syscalls the launcher's seccomp filter refused, as trace events. strace
 * cannot see them — when two seccomp filters disagree the kernel takes the
 * stronger action, and the launcher's EPERM outranks strace's TRACE — so the
 * filter hands each one to the session agent (SECCOMP_RET_USER_NOTIF), which
 * records pid, number and raw arguments and answers EPERM. This turns such a
 * record into an event beside strace's. Pure; x86_64 numbers.
 */
import type { SeccompEvent } from './events.ts';
import { TRACE_EVENT_SCHEMA_VERSION } from './events.ts';

/** The syscalls the launcher's filter can refuse, by x86_64 number. */
export const FILTERED_SYSCALLS: Readonly<Record<number, string>> = {
  16: 'ioctl',
  41: 'socket',
  53: 'socketpair',
  56: 'clone',
  90: 'chmod',
  91: 'fchmod',
  92: 'chown',
  93: 'fchown',
  94: 'lchown',
  101: 'ptrace',
  133: 'mknod',
  141: 'setpriority',
  142: 'sched_setparam',
  144: 'sched_setscheduler',
  155: 'pivot_root',
  161: 'chroot',
  165: 'mount',
  166: 'umount2',
  175: 'init_module',
  176: 'delete_module',
  203: 'sched_setaffinity',
  246: 'kexec_load',
  248: 'add_key',
  249: 'request_key',
  250: 'keyctl',
  251: 'ioprio_set',
  259: 'mknodat',
  260: 'fchownat',
  268: 'fchmodat',
  272: 'unshare',
  298: 'perf_event_open',
  302: 'prlimit64',
  303: 'name_to_handle_at',
  304: 'open_by_handle_at',
  308: 'setns',
  310: 'process_vm_readv',
  311: 'process_vm_writev',
  313: 'finit_module',
  314: 'sched_setattr',
  319: 'memfd_create',
  320: 'kexec_file_load',
  321: 'bpf',
  323: 'userfaultfd',
  425: 'io_uring_setup',
  426: 'io_uring_enter',
  427: 'io_uring_register',
  428: 'open_tree',
  429: 'move_mount',
  430: 'fsopen',
  431: 'fsconfig',
  432: 'fsmount',
  433: 'fspick',
  438: 'pidfd_getfd',
  442: 'mount_setattr',
  452: 'fchmodat2',
  467: 'open_tree_attr',
};

const AF: Readonly<Record<number, string>> = { 1: 'AF_UNIX', 2: 'AF_INET', 10: 'AF_INET6', 16: 'AF_NETLINK', 17: 'AF_PACKET' };
const SOCK: Readonly<Record<number, string>> = { 1: 'SOCK_STREAM', 2: 'SOCK_DGRAM', 3: 'SOCK_RAW', 5: 'SOCK_SEQPACKET' };
const PTRACE: Readonly<Record<number, string>> = { 0: 'PTRACE_TRACEME', 16: 'PTRACE_ATTACH', 0x4206: 'PTRACE_SEIZE', 17: 'PTRACE_DETACH' };
const CLONE_FLAGS: readonly [number, string][] = [
  [0x00800000, 'CLONE_UNTRACED'],
  [0x00020000, 'CLONE_NEWNS'],
  [0x02000000, 'CLONE_NEWCGROUP'],
  [0x04000000, 'CLONE_NEWUTS'],
  [0x08000000, 'CLONE_NEWIPC'],
  [0x10000000, 'CLONE_NEWUSER'],
  [0x20000000, 'CLONE_NEWPID'],
  [0x40000000, 'CLONE_NEWNET'],
];

const int32 = (v: bigint): number => Number(BigInt.asIntN(32, v));

export interface SeccompRecord {
  /** Seconds since the epoch (µs precision). */
  time: number;
  pid: number;
  nr: number;
  args: readonly bigint[];
}

/** Which arguments made the filter refuse the call, in words; and the process it aimed at, if any. */
function describe(name: string, a: readonly bigint[]): { detail: string; target?: number } {
  const arg = (i: number): bigint => a[i] ?? 0n;
  switch (name) {
    case 'socket':
    case 'socketpair': {
      const domain = int32(arg(0));
      const type = int32(arg(1)) & 0xf;
      return { detail: `${AF[domain] ?? `domain ${domain}`} ${SOCK[type] ?? `type ${type}`}` };
    }
    case 'clone': {
      const flags = Number(arg(0) & 0xffffffffn);
      const named = CLONE_FLAGS.filter(([bit]) => (flags & bit) !== 0).map(([, n]) => n);
      return { detail: named.length > 0 ? named.join('|') : `flags 0x${flags.toString(16)}` };
    }
    case 'ptrace': {
      const request = int32(arg(0));
      const pid = int32(arg(1));
      return { detail: `${PTRACE[request] ?? `request ${request}`} pid ${pid}`, ...(request === 0 ? {} : { target: pid }) };
    }
    case 'process_vm_readv':
    case 'process_vm_writev':
    case 'prlimit64':
    case 'sched_setaffinity':
    case 'sched_setscheduler':
    case 'sched_setparam':
    case 'sched_setattr': {
      const pid = int32(arg(0));
      return { detail: `pid ${pid}`, target: pid };
    }
    case 'setpriority':
    case 'ioprio_set': {
      const which = int32(arg(0));
      const who = int32(arg(1));
      return { detail: `which ${which} who ${who}`, ...(which === (name === 'setpriority' ? 0 : 1) && who !== 0 ? { target: who } : {}) };
    }
    case 'chmod':
    case 'fchmod':
      return { detail: `mode 0${Number(arg(1) & 0o7777n).toString(8)}` };
    case 'fchmodat':
    case 'fchmodat2':
      return { detail: `mode 0${Number(arg(2) & 0o7777n).toString(8)}` };
    case 'mknod':
      return { detail: `mode 0${Number(arg(1)).toString(8)}` };
    case 'mknodat':
      return { detail: `mode 0${Number(arg(2)).toString(8)}` };
    case 'memfd_create':
      return { detail: `flags 0x${Number(arg(1) & 0xffffffffn).toString(16)} (executable memfd)` };
    case 'ioctl':
      return { detail: `request 0x${Number(arg(1) & 0xffffffffn).toString(16)}` };
    default:
      return { detail: 'always denied' };
  }
}

export function seccompEvent(record: SeccompRecord): SeccompEvent {
  const syscall = FILTERED_SYSCALLS[record.nr] ?? `syscall_${record.nr}`;
  const { detail, target } = describe(syscall, record.args);
  return {
    kind: 'seccomp',
    schema_version: TRACE_EVENT_SCHEMA_VERSION,
    pid: record.pid,
    ts: record.time,
    syscall,
    nr: record.nr,
    args: record.args.map((v) => `0x${v.toString(16)}`),
    result: -1,
    errno: 'EPERM',
    denied: true,
    ...(target === undefined ? {} : { target }),
    detail,
  };
}
