/**
 * Numbers the kernel hands the tracer, named the way strace names them, so
 * eBPF events read like the strace parser's (x86_64 values). Pure.
 */
import type { SocketFamily } from '../trace/index.ts';

/** errno names as strace prints them (EDEADLK, EOPNOTSUPP: strace's choice among aliases). */
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: 'EPERM', 2: 'ENOENT', 3: 'ESRCH', 4: 'EINTR', 5: 'EIO', 6: 'ENXIO', 7: 'E2BIG', 8: 'ENOEXEC', 9: 'EBADF', 10:
  'ECHILD', 11: 'EAGAIN', 12: 'ENOMEM', 13: 'EACCES', 14: 'EFAULT', 15: 'ENOTBLK', 16: 'EBUSY', 17: 'EEXIST', 18:
  'EXDEV', 19: 'ENODEV', 20: 'ENOTDIR', 21: 'EISDIR', 22: 'EINVAL', 23: 'ENFILE', 24: 'EMFILE', 25: 'ENOTTY', 26:
  'ETXTBSY', 27: 'EFBIG', 28: 'ENOSPC', 29: 'ESPIPE', 30: 'EROFS', 31: 'EMLINK', 32: 'EPIPE', 33: 'EDOM', 34:
  'ERANGE', 35: 'EDEADLK', 36: 'ENAMETOOLONG', 37: 'ENOLCK', 38: 'ENOSYS', 39: 'ENOTEMPTY', 40: 'ELOOP', 42: 'ENOMSG',
  43: 'EIDRM', 44: 'ECHRNG', 45: 'EL2NSYNC', 46: 'EL3HLT', 47: 'EL3RST', 48: 'ELNRNG', 49: 'EUNATCH', 50: 'ENOCSI',
  51: 'EL2HLT', 52: 'EBADE', 53: 'EBADR', 54: 'EXFULL', 55: 'ENOANO', 56: 'EBADRQC', 57: 'EBADSLT', 59: 'EBFONT', 60:
  'ENOSTR', 61: 'ENODATA', 62: 'ETIME', 63: 'ENOSR', 64: 'ENONET', 65: 'ENOPKG', 66: 'EREMOTE', 67: 'ENOLINK', 68:
  'EADV', 69: 'ESRMNT', 70: 'ECOMM', 71: 'EPROTO', 72: 'EMULTIHOP', 73: 'EDOTDOT', 74: 'EBADMSG', 75: 'EOVERFLOW', 76:
  'ENOTUNIQ', 77: 'EBADFD', 78: 'EREMCHG', 79: 'ELIBACC', 80: 'ELIBBAD', 81: 'ELIBSCN', 82: 'ELIBMAX', 83: 'ELIBEXEC',
  84: 'EILSEQ', 85: 'ERESTART', 86: 'ESTRPIPE', 87: 'EUSERS', 88: 'ENOTSOCK', 89: 'EDESTADDRREQ', 90: 'EMSGSIZE', 91:
  'EPROTOTYPE', 92: 'ENOPROTOOPT', 93: 'EPROTONOSUPPORT', 94: 'ESOCKTNOSUPPORT', 95: 'EOPNOTSUPP', 96: 'EPFNOSUPPORT',
  97: 'EAFNOSUPPORT', 98: 'EADDRINUSE', 99: 'EADDRNOTAVAIL', 100: 'ENETDOWN', 101: 'ENETUNREACH', 102: 'ENETRESET',
  103: 'ECONNABORTED', 104: 'ECONNRESET', 105: 'ENOBUFS', 106: 'EISCONN', 107: 'ENOTCONN', 108: 'ESHUTDOWN', 109:
  'ETOOMANYREFS', 110: 'ETIMEDOUT', 111: 'ECONNREFUSED', 112: 'EHOSTDOWN', 113: 'EHOSTUNREACH', 114: 'EALREADY', 115:
  'EINPROGRESS', 116: 'ESTALE', 117: 'EUCLEAN', 118: 'ENOTNAM', 119: 'ENAVAIL', 120: 'EISNAM', 121: 'EREMOTEIO', 122:
  'EDQUOT', 123: 'ENOMEDIUM', 124: 'EMEDIUMTYPE', 125: 'ECANCELED', 126: 'ENOKEY', 127: 'EKEYEXPIRED', 128:
  'EKEYREVOKED', 129: 'EKEYREJECTED', 130: 'EOWNERDEAD', 131: 'ENOTRECOVERABLE', 132: 'ERFKILL',
  512: 'ERESTARTSYS', 513: 'ERESTARTNOINTR', 514: 'ERESTARTNOHAND', 516: 'ERESTART_RESTARTBLOCK',
};

export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `E${errno}`;
}

const SIGNAL_NAMES = [
  '0', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGKILL', 'SIGUSR1', 'SIGSEGV', 'SIGUSR2',
  'SIGPIPE', 'SIGALRM', 'SIGTERM', 'SIGSTKFLT', 'SIGCHLD', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGXCPU',
  'SIGXFSZ', 'SIGVTALRM', 'SIGPROF', 'SIGWINCH', 'SIGIO', 'SIGPWR', 'SIGSYS',
];

/** A signal number as strace names it (x86_64): `SIGKILL`, `0` for the probe, `SIGRTMIN`, `SIGRT_3`. Pure. */
export function signalName(signal: number): string {
  if (signal >= 0 && signal < SIGNAL_NAMES.length) return SIGNAL_NAMES[signal] ?? String(signal);
  if (signal === 34) return 'SIGRTMIN';
  if (signal > 34 && signal <= 64) return `SIGRT_${signal - 32}`;
  return String(signal);
}

const O_ACCMODE = 3;
const O_SYNC_BIT = 0o4000000;
const O_DSYNC = 0o10000;
const O_TMPFILE_BIT = 0o20000000;
const O_DIRECTORY = 0o200000;

/** open flags other than the access mode, in strace's order; O_SYNC and O_TMPFILE are composites handled first. */
const OPEN_FLAGS: readonly (readonly [string, number])[] = [
  ['O_CREAT', 0o100],
  ['O_EXCL', 0o200],
  ['O_NOCTTY', 0o400],
  ['O_TRUNC', 0o1000],
  ['O_APPEND', 0o2000],
  ['O_NONBLOCK', 0o4000],
  ['O_DSYNC', O_DSYNC],
  ['O_ASYNC', 0o20000],
  ['O_DIRECT', 0o40000],
  ['O_LARGEFILE', 0o100000],
  ['O_DIRECTORY', O_DIRECTORY],
  ['O_NOFOLLOW', 0o400000],
  ['O_NOATIME', 0o1000000],
  ['O_CLOEXEC', 0o2000000],
  ['O_PATH', 0o10000000],
];

/** `O_WRONLY|O_CREAT|O_TRUNC`-style names for an open flags word; leftover bits as hex. */
export function openFlagNames(flags: number): string[] {
  const out = [['O_RDONLY', 'O_WRONLY', 'O_RDWR', '0x3'][flags & O_ACCMODE] ?? '0x3'];
  let rest = flags & ~O_ACCMODE;
  if ((rest & O_SYNC_BIT) !== 0) {
    out.push('O_SYNC');
    rest &= ~(O_SYNC_BIT | O_DSYNC);
  }
  if ((rest & O_TMPFILE_BIT) !== 0) {
    out.push('O_TMPFILE');
    rest &= ~(O_TMPFILE_BIT | O_DIRECTORY);
  }
  for (const [name, bit] of OPEN_FLAGS) {
    if ((rest & bit) !== 0) {
      out.push(name);
      rest &= ~bit;
    }
  }
  if (rest !== 0) out.push(`0x${(rest >>> 0).toString(16)}`);
  return out;
}

const AT_FLAGS: readonly (readonly [string, number])[] = [
  ['AT_SYMLINK_NOFOLLOW', 0x100],
  ['AT_REMOVEDIR', 0x200],
  ['AT_SYMLINK_FOLLOW', 0x400],
  ['AT_NO_AUTOMOUNT', 0x800],
  ['AT_EMPTY_PATH', 0x1000],
];
const RENAME_FLAGS: readonly (readonly [string, number])[] = [
  ['RENAME_NOREPLACE', 1],
  ['RENAME_EXCHANGE', 2],
  ['RENAME_WHITEOUT', 4],
];

function bitNames(flags: number, table: readonly (readonly [string, number])[]): string[] {
  const out: string[] = [];
  let rest = flags;
  for (const [name, bit] of table) {
    if ((rest & bit) !== 0) {
      out.push(name);
      rest &= ~bit;
    }
  }
  if (rest !== 0) out.push(`0x${(rest >>> 0).toString(16)}`);
  return out;
}

const MFD_FLAGS: readonly (readonly [string, number])[] = [
  ['MFD_CLOEXEC', 1],
  ['MFD_ALLOW_SEALING', 2],
  ['MFD_HUGETLB', 4],
  ['MFD_NOEXEC_SEAL', 8],
  ['MFD_EXEC', 0x10],
];

export const atFlagNames = (flags: number): string[] => bitNames(flags, AT_FLAGS);
/** memfd_create's flags as strace prints them (`0` for none). */
export const memfdFlagNames = (flags: number): string[] => (flags === 0 ? ['0'] : bitNames(flags, MFD_FLAGS));
export const renameFlagNames = (flags: number): string[] => bitNames(flags, RENAME_FLAGS);

/** A mode as strace prints it (C's `%#03o`): `0644`, `0755`, `007`, `000`. */
export function modeText(mode: number): string {
  const m = mode & 0o7777;
  return (m === 0 ? '0' : `0${m.toString(8)}`).padStart(3, '0');
}

export interface DecodedSockaddr {
  family: SocketFamily;
  domain: string;
  address?: string;
  port?: number;
}

const DOMAINS: Readonly<Record<number, readonly [string, SocketFamily]>> = {
  1: ['AF_UNIX', 'unix'],
  2: ['AF_INET', 'inet'],
  10: ['AF_INET6', 'inet6'],
  16: ['AF_NETLINK', 'netlink'],
  17: ['AF_PACKET', 'packet'],
};

/** socket()'s domain as strace names it, and its family. */
export function socketDomain(af: number): { domain: string; family: SocketFamily } {
  const [domain, family] = DOMAINS[af] ?? [`AF_${af}`, 'other' as const];
  return { domain, family };
}

const SOCKET_TYPES: Readonly<Record<number, string>> = { 1: 'SOCK_STREAM', 2: 'SOCK_DGRAM', 3: 'SOCK_RAW', 4: 'SOCK_RDM', 5: 'SOCK_SEQPACKET', 6: 'SOCK_DCCP', 10: 'SOCK_PACKET' };

/** socket()'s type without SOCK_CLOEXEC / SOCK_NONBLOCK, as strace's event carries it; undefined when unknown. */
export function socketTypeName(type: number): string | undefined {
  return SOCKET_TYPES[type & 0xf];
}

/** An IPv6 address in its canonical text (RFC 5952: lowercase, longest zero run as ::), via WHATWG URL. */
function ipv6Text(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** The sockaddr bytes the program printed (at most SOCKADDR_LIMIT); undefined when too short to hold a family. */
export function decodeSockaddr(bytes: Uint8Array): DecodedSockaddr | undefined {
  if (bytes.length < 2) return undefined;
  const af = (bytes[0] ?? 0) | ((bytes[1] ?? 0) << 8);
  const [domain, family] = DOMAINS[af] ?? [`AF_${af}`, 'other' as const];
  const base = { family, domain };
  const port = bytes.length >= 4 ? ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0) : undefined;
  switch (family) {
    case 'inet':
      if (bytes.length < 8) return base;
      return { ...base, address: [...bytes.subarray(4, 8)].join('.'), ...(port === undefined ? {} : { port }) };
    case 'inet6':
      if (bytes.length < 24) return base;
      return { ...base, address: ipv6Text(bytes.subarray(8, 24)), ...(port === undefined ? {} : { port }) };
    case 'unix': {
      const path = bytes.subarray(2);
      if (path.length === 0) return base; // unnamed
      // Abstract names start with a NUL and are not NUL-terminated: all of addrlen is the name.
      if (path[0] === 0) return { ...base, address: `@${Buffer.from(path.subarray(1)).toString('utf8')}` };
      const end = path.indexOf(0);
      return { ...base, address: Buffer.from(end === -1 ? path : path.subarray(0, end)).toString('utf8') };
    }
    case 'netlink':
    case 'packet':
    case 'other':
      return bytes.length > 2 ? { ...base, address: Buffer.from(bytes.subarray(2)).toString('hex') } : base;
  }
}
