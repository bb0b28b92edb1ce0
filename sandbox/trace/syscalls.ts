/**
 * One handler per traced syscall: a parsed call (name, raw args, result) in,
 * at most one typed event out. Handlers see process state (cwd, parents) only
 * through CallContext, which the streaming parser implements.
 */
import { posix } from 'node:path';
import {
  isDenial,
  TRACE_EVENT_SCHEMA_VERSION,
  type ExecEvent,
  type FileEvent,
  type FileOp,
  type NetworkEvent,
  type NetworkOp,
  type ProcessEvent,
  type TraceEvent,
} from './events.ts';
import { familyOf, parseSockaddr } from './sockaddr.ts';
import { arrayElements, fdArg, stringArg, stringArray, structField, type CallResult } from './syntax.ts';

export interface Call {
  pid: number;
  ts: number;
  name: string;
  args: readonly string[];
  result: CallResult;
}

export interface CallContext {
  cwd(pid: number): string;
  setCwd(pid: number, dir: string): void;
  /** A fork-like call returned `child` in `parent`. */
  forked(parent: number, child: number, shares: { fs: boolean; files: boolean }): void;
  /** An open returned fd `fd` for `path` (the -y decoration). */
  opened(pid: number, fd: number, path: string): void;
  /** The path of the last open in `pid` that returned `fd`, if any (close is not traced). */
  openedPath(pid: number, fd: number): string | undefined;
  parentOf(pid: number): number | undefined;
  /** exit_group was seen, so a later `+++ exited +++` line is not a second exit. */
  exited(pid: number): void;
}

/** A call whose arguments do not have the shape its syscall prints; becomes an `unparsed` event. */
export class CallShapeError extends Error {
  override readonly name = 'CallShapeError';
}

/** A call's events: most calls make one or none; sendmmsg one per destination. */
type Handler = (call: Call, ctx: CallContext) => TraceEvent | readonly TraceEvent[] | undefined;

function arg(call: Call, index: number): string {
  const a = call.args[index];
  if (a === undefined) throw new CallShapeError(`${call.name}: missing argument ${index + 1}`);
  return a;
}

function outcome(call: Call): Pick<FileEvent, 'syscall' | 'result' | 'errno' | 'denied'> {
  const { errno } = call.result;
  return {
    syscall: call.name,
    result: call.result.value,
    ...(errno === undefined ? {} : { errno }),
    denied: isDenial(errno),
  };
}

function head(call: Call) {
  return { schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: call.pid, ts: call.ts };
}

export function normalizeAbsolute(path: string): string {
  // Most paths are already normal; posix.normalize on each one is measurable on 100k-line traces.
  if (!path.includes('/.') && !path.includes('//') && (path.length === 1 || !path.endsWith('/'))) return path;
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** The directory a relative path starts from: an fd's `-y` path or the cwd. */
function baseDir(call: Call, ctx: CallContext, dirfdRaw: string | undefined): string {
  if (dirfdRaw === undefined) return ctx.cwd(call.pid);
  const dirfd = fdArg(dirfdRaw);
  if (dirfd === undefined) throw new CallShapeError(`${call.name}: unreadable dirfd ${dirfdRaw}`);
  if (dirfd.fd === 'AT_FDCWD') {
    // strace -y prints the cwd on AT_FDCWD: trust it over our own bookkeeping.
    if (dirfd.decoration?.startsWith('/')) {
      ctx.setCwd(call.pid, dirfd.decoration);
      return dirfd.decoration;
    }
    return ctx.cwd(call.pid);
  }
  if (dirfd.decoration?.startsWith('/')) return dirfd.decoration;
  throw new CallShapeError(`${call.name}: fd ${dirfd.fd} has no path to resolve against (was strace run with -y?)`);
}

const POINTER_RE = /^0x[0-9a-f]+$/;

function unreadableString(call: Call, what: string, raw: string): string {
  return POINTER_RE.test(raw)
    ? `${call.name}: strace printed the ${what} as a pointer (${raw}): it could not read the tracee's memory, ` +
        'typically because the tracee changed uid and the tracer lacks CAP_SYS_PTRACE'
    : `${call.name}: ${what} argument is not a string: ${raw}`;
}

/** Resolve a path argument against a dirfd argument (or the cwd) into an absolute normalised path. */
function resolve(call: Call, ctx: CallContext, dirfdRaw: string | undefined, pathRaw: string): string {
  const path = stringArg(pathRaw)?.value;
  if (path === undefined) throw new CallShapeError(unreadableString(call, 'path', pathRaw));
  if (path.startsWith('/')) return normalizeAbsolute(path);
  const base = baseDir(call, ctx, dirfdRaw);
  // "" only comes with AT_EMPTY_PATH: the call acts on the dirfd itself.
  return path === '' ? base : normalizeAbsolute(`${base}/${path}`);
}

const PROC_FD_RE = /^\/proc\/(self|thread-self|\d+)\/fd\/(\d+)$/;

/**
 * glibc and tar reach O_PATH fds through /proc/self/fd/N (fchmodat with
 * AT_SYMLINK_NOFOLLOW): name the file itself, from the open that returned N.
 */
function throughProcFd(call: Call, ctx: CallContext, path: string): string {
  const m = PROC_FD_RE.exec(path);
  if (m === null || (m[1] !== 'self' && m[1] !== 'thread-self' && Number(m[1]) !== call.pid)) return path;
  return ctx.openedPath(call.pid, Number(m[2])) ?? path;
}

/** The `-y` path of an fd argument (fchmod, ftruncate, fchdir, ...). */
function fdPath(call: Call, raw: string): string {
  const fd = fdArg(raw);
  if (fd?.decoration === undefined) throw new CallShapeError(`${call.name}: fd ${raw} has no path`);
  return fd.decoration.startsWith('/') ? normalizeAbsolute(fd.decoration) : fd.decoration;
}

function flagList(raw: string): string[] {
  return raw === '0' ? [] : raw.split('|');
}

interface FileExtras {
  path2?: string;
  real_path?: string;
  flags?: string[];
  may_create?: boolean;
  mode?: string;
}

function fileEvent(call: Call, op: FileOp, path: string, extras?: FileExtras): FileEvent {
  const { errno } = call.result;
  const e: FileEvent = {
    kind: 'file',
    schema_version: TRACE_EVENT_SCHEMA_VERSION,
    pid: call.pid,
    ts: call.ts,
    syscall: call.name,
    result: call.result.value,
    denied: isDenial(errno),
    op,
    path,
  };
  if (errno !== undefined) e.errno = errno;
  if (extras !== undefined) Object.assign(e, extras);
  return e;
}

/** The file op an open's flags make it (shared with the eBPF tracer, sandbox/ebpf). */
export function openOp(flags: readonly string[]): FileOp {
  const has = (f: string) => flags.includes(f);
  if (has('O_PATH')) return 'access';
  if (has('O_TMPFILE') || (has('O_CREAT') && has('O_EXCL'))) return 'create';
  const writes = has('O_WRONLY') || has('O_RDWR');
  if (has('O_TRUNC') && writes) return 'truncate';
  return writes ? 'write' : 'read';
}

function openEvent(call: Call, ctx: CallContext, dirfd: string | undefined, pathRaw: string, flagsRaw: string, modeRaw?: string): FileEvent {
  const path = resolve(call, ctx, dirfd, pathRaw);
  const flags = flagList(flagsRaw);
  const op = openOp(flags);
  const extras: FileExtras = { flags };
  const fd = call.result.value;
  if (fd !== null && fd >= 0 && call.result.decoration !== undefined) ctx.opened(call.pid, fd, call.result.decoration);
  if (flags.includes('O_CREAT') && op !== 'create') extras.may_create = true;
  if (modeRaw !== undefined && (flags.includes('O_CREAT') || flags.includes('O_TMPFILE'))) extras.mode = modeRaw;
  const real = call.result.decoration;
  if (real?.startsWith('/') && call.result.value !== null && call.result.value >= 0 && real !== path) {
    extras.real_path = real;
  }
  return fileEvent(call, op, path, extras);
}

function execEvent(call: Call, ctx: CallContext, path: string, argvRaw: string): ExecEvent {
  const argv = stringArray(argvRaw);
  return {
    kind: 'exec',
    ...head(call),
    ...outcome(call),
    path,
    argv: argv?.values ?? [],
    ...(argv?.truncated ? { argv_truncated: true } : {}),
    cwd: ctx.cwd(call.pid),
  };
}

const FORK_FLAGS_RE = /flags=([^,}]+)/;

function forkEvent(call: Call, ctx: CallContext, flagsText: string): ProcessEvent {
  const flags = flagList(FORK_FLAGS_RE.exec(flagsText)?.[1] ?? '0');
  const child = call.result.value;
  const ok = child !== null && child > 0;
  const thread = flags.includes('CLONE_THREAD');
  if (ok) {
    ctx.forked(call.pid, child, {
      fs: thread || flags.includes('CLONE_FS'),
      files: thread || flags.includes('CLONE_FILES'),
    });
  }
  const parent = ctx.parentOf(call.pid);
  const { errno } = call.result;
  return {
    kind: 'process',
    ...head(call),
    op: 'fork',
    syscall: call.name,
    result: child,
    ...(errno === undefined ? {} : { errno }),
    ...(ok ? { child } : {}),
    ...(thread ? { thread } : {}),
    ...(parent === undefined ? {} : { parent }),
  };
}

/** The pid a signal went to: a number, or a pidfd strace decorated with its pid (`3<pid:42>`). */
function signalTarget(raw: string): number | undefined {
  const direct = /^-?\d+$/.exec(raw.trim());
  if (direct !== null) return Number.parseInt(raw, 10);
  const fd = /<pid:(\d+)>/.exec(raw);
  return fd?.[1] === undefined ? undefined : Number.parseInt(fd[1], 10);
}

function killEvent(call: Call, targetRaw: string, signalRaw: string): ProcessEvent {
  const target = signalTarget(targetRaw);
  const { errno } = call.result;
  return {
    kind: 'process',
    ...head(call),
    op: 'kill',
    syscall: call.name,
    result: call.result.value,
    ...(errno === undefined ? {} : { errno, denied: isDenial(errno) }),
    ...(target === undefined ? {} : { target }),
    signal: signalRaw.trim(),
  };
}

function networkEvent(call: Call, op: NetworkOp, sockaddrRaw: string): NetworkEvent {
  const addr = parseSockaddr(sockaddrRaw);
  if (addr === undefined) throw new CallShapeError(`${call.name}: unreadable sockaddr ${sockaddrRaw}`);
  return { kind: 'network', ...head(call), ...outcome(call), op, ...addr };
}

const AT_REMOVEDIR = 'AT_REMOVEDIR';

function twoPath(call: Call, ctx: CallContext, op: FileOp, fromDir: string | undefined, from: string, toDir: string | undefined, to: string, flagsRaw?: string): FileEvent {
  const path = resolve(call, ctx, fromDir, from);
  const path2 = resolve(call, ctx, toDir, to);
  const flags = flagsRaw === undefined ? [] : flagList(flagsRaw);
  return fileEvent(call, op, path, { path2, ...(flags.length > 0 ? { flags } : {}) });
}

/** symlink(target, linkpath): path is the target resolved against the link's directory. */
function symlinkEvent(call: Call, ctx: CallContext, targetRaw: string, dirfd: string | undefined, linkRaw: string): FileEvent {
  const target = stringArg(targetRaw)?.value;
  if (target === undefined) throw new CallShapeError(unreadableString(call, 'target', targetRaw));
  const link = resolve(call, ctx, dirfd, linkRaw);
  const path = target.startsWith('/') ? normalizeAbsolute(target) : normalizeAbsolute(`${posix.dirname(link)}/${target}`);
  return fileEvent(call, 'symlink', path, { path2: link });
}

function withFlags(e: FileEvent, flagsRaw: string | undefined): FileEvent {
  if (flagsRaw === undefined) return e;
  const flags = flagList(flagsRaw);
  return flags.length > 0 ? { ...e, flags } : e;
}

export const HANDLERS: Readonly<Record<string, Handler>> = {
  // process
  execve: (c, ctx) => execEvent(c, ctx, resolve(c, ctx, undefined, arg(c, 0)), arg(c, 1)),
  execveat: (c, ctx) => execEvent(c, ctx, resolve(c, ctx, arg(c, 0), arg(c, 1)), arg(c, 2)),
  clone: (c, ctx) => forkEvent(c, ctx, c.args.find((a) => a.startsWith('flags=')) ?? ''),
  clone3: (c, ctx) => forkEvent(c, ctx, arg(c, 0)),
  fork: (c, ctx) => forkEvent(c, ctx, ''),
  vfork: (c, ctx) => forkEvent(c, ctx, ''),
  exit_group: (c, ctx) => {
    ctx.exited(c.pid);
    const code = Number.parseInt(arg(c, 0), 10);
    const parent = ctx.parentOf(c.pid);
    return {
      kind: 'process',
      ...head(c),
      op: 'exit',
      syscall: c.name,
      ...(Number.isNaN(code) ? {} : { exit_code: code }),
      ...(parent === undefined ? {} : { parent }),
    };
  },
  chdir: (c, ctx) => {
    if (c.result.value === 0) ctx.setCwd(c.pid, resolve(c, ctx, undefined, arg(c, 0)));
    return undefined;
  },
  fchdir: (c, ctx) => {
    if (c.result.value === 0) ctx.setCwd(c.pid, fdPath(c, arg(c, 0)));
    return undefined;
  },
  // process: signals sent (Landlock refuses those that leave the sandbox with EPERM)
  kill: (c) => killEvent(c, arg(c, 0), arg(c, 1)),
  tkill: (c) => killEvent(c, arg(c, 0), arg(c, 1)),
  tgkill: (c) => killEvent(c, arg(c, 0), arg(c, 2)),
  rt_sigqueueinfo: (c) => killEvent(c, arg(c, 0), arg(c, 1)),
  rt_tgsigqueueinfo: (c) => killEvent(c, arg(c, 0), arg(c, 2)),
  pidfd_send_signal: (c) => killEvent(c, arg(c, 0), arg(c, 1)),
  // file: opens
  open: (c, ctx) => openEvent(c, ctx, undefined, arg(c, 0), arg(c, 1), c.args[2]),
  openat: (c, ctx) => openEvent(c, ctx, arg(c, 0), arg(c, 1), arg(c, 2), c.args[3]),
  openat2: (c, ctx) => {
    const how = arg(c, 2);
    const flags = structField(how, 'flags');
    if (flags === undefined) throw new CallShapeError(`openat2: no flags in ${how}`);
    return openEvent(c, ctx, arg(c, 0), arg(c, 1), flags, structField(how, 'mode'));
  },
  creat: (c, ctx) => openEvent(c, ctx, undefined, arg(c, 0), 'O_WRONLY|O_CREAT|O_TRUNC', arg(c, 1)),
  // file: probes
  access: (c, ctx) => fileEvent(c, 'access', resolve(c, ctx, undefined, arg(c, 0)), { mode: arg(c, 1) }),
  faccessat: (c, ctx) => fileEvent(c, 'access', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }),
  faccessat2: (c, ctx) => withFlags(fileEvent(c, 'access', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }), c.args[3]),
  // file: content and names
  truncate: (c, ctx) => fileEvent(c, 'truncate', resolve(c, ctx, undefined, arg(c, 0))),
  ftruncate: (c) => fileEvent(c, 'truncate', fdPath(c, arg(c, 0))),
  unlink: (c, ctx) => fileEvent(c, 'unlink', resolve(c, ctx, undefined, arg(c, 0))),
  unlinkat: (c, ctx) => {
    const flags = arg(c, 2);
    const op = flagList(flags).includes(AT_REMOVEDIR) ? 'rmdir' : 'unlink';
    return fileEvent(c, op, resolve(c, ctx, arg(c, 0), arg(c, 1)));
  },
  rmdir: (c, ctx) => fileEvent(c, 'rmdir', resolve(c, ctx, undefined, arg(c, 0))),
  rename: (c, ctx) => twoPath(c, ctx, 'rename', undefined, arg(c, 0), undefined, arg(c, 1)),
  renameat: (c, ctx) => twoPath(c, ctx, 'rename', arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3)),
  renameat2: (c, ctx) => twoPath(c, ctx, 'rename', arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3), arg(c, 4)),
  link: (c, ctx) => twoPath(c, ctx, 'link', undefined, arg(c, 0), undefined, arg(c, 1)),
  linkat: (c, ctx) => twoPath(c, ctx, 'link', arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3), arg(c, 4)),
  symlink: (c, ctx) => symlinkEvent(c, ctx, arg(c, 0), undefined, arg(c, 1)),
  symlinkat: (c, ctx) => symlinkEvent(c, ctx, arg(c, 0), arg(c, 1), arg(c, 2)),
  mkdir: (c, ctx) => fileEvent(c, 'mkdir', resolve(c, ctx, undefined, arg(c, 0)), { mode: arg(c, 1) }),
  mkdirat: (c, ctx) => fileEvent(c, 'mkdir', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }),
  mknod: (c, ctx) => fileEvent(c, 'create', resolve(c, ctx, undefined, arg(c, 0)), { mode: arg(c, 1) }),
  mknodat: (c, ctx) => fileEvent(c, 'create', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }),
  memfd_create: (c, ctx) => {
    const name = stringArg(arg(c, 0))?.value;
    if (name === undefined) throw new CallShapeError(unreadableString(c, 'name', arg(c, 0)));
    const fd = c.result.value;
    if (fd !== null && fd >= 0 && c.result.decoration !== undefined) ctx.opened(c.pid, fd, c.result.decoration);
    return fileEvent(c, 'memfd', `memfd:${name}`, { flags: flagList(arg(c, 1)) });
  },
  // file: metadata
  chmod: (c, ctx) => fileEvent(c, 'chmod', throughProcFd(c, ctx, resolve(c, ctx, undefined, arg(c, 0))), { mode: arg(c, 1) }),
  fchmod: (c) => fileEvent(c, 'chmod', fdPath(c, arg(c, 0)), { mode: arg(c, 1) }),
  fchmodat: (c, ctx) => withFlags(fileEvent(c, 'chmod', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }), c.args[3]),
  fchmodat2: (c, ctx) => withFlags(fileEvent(c, 'chmod', resolve(c, ctx, arg(c, 0), arg(c, 1)), { mode: arg(c, 2) }), c.args[3]),
  chown: (c, ctx) => fileEvent(c, 'chown', throughProcFd(c, ctx, resolve(c, ctx, undefined, arg(c, 0)))),
  lchown: (c, ctx) => fileEvent(c, 'chown', resolve(c, ctx, undefined, arg(c, 0))),
  fchown: (c) => fileEvent(c, 'chown', fdPath(c, arg(c, 0))),
  fchownat: (c, ctx) => withFlags(fileEvent(c, 'chown', resolve(c, ctx, arg(c, 0), arg(c, 1))), c.args[4]),
  // network
  socket: (c) => {
    const domain = arg(c, 0);
    const type = flagList(arg(c, 1)).find((t) => !t.startsWith('SOCK_CLOEXEC') && !t.startsWith('SOCK_NONBLOCK'));
    return {
      kind: 'network',
      ...head(c),
      ...outcome(c),
      op: 'socket',
      family: familyOf(domain),
      domain,
      ...(type === undefined ? {} : { socket_type: type }),
    };
  },
  connect: (c) => networkEvent(c, 'connect', arg(c, 1)),
  bind: (c) => networkEvent(c, 'bind', arg(c, 1)),
  sendto: (c) => {
    const dest = arg(c, 4);
    return dest === 'NULL' ? undefined : networkEvent(c, 'sendto', dest);
  },
  sendmsg: (c) => {
    const name = structField(arg(c, 1), 'msg_name');
    return name === undefined || name === 'NULL' ? undefined : networkEvent(c, 'sendto', name);
  },
  sendmmsg: (c) => sendmmsgEvents(c),
};

/**
 * sendmmsg(fd, [{msg_hdr={msg_name=…, …}, msg_len=N}, …], vlen, flags) = sent: every message sent
 * to an explicit destination is a send there, as one sendmsg would be — a datagram per message,
 * so a batch cannot carry data past the trace that a loop of sendmsg would show. One event per
 * distinct destination (a batch to one address is one send there). The call returns how many
 * messages went: only those are sends; a failed or unfinished call makes each destination a
 * send with the call's outcome, as sendmsg's is. strace printing fewer messages than went (its array
 * cut short) is an unreadable call, never a shorter list.
 */
function sendmmsgEvents(c: Call): readonly TraceEvent[] {
  const raw = arg(c, 1);
  const messages = arrayElements(raw);
  if (messages === undefined) throw new CallShapeError(`${c.name}: unreadable message array ${raw.slice(0, 80)}`);
  const sent = c.result.value;
  // Unfinished (`= ?`: killed mid-call) or failed: every printed message was attempted.
  const went = sent === null || sent < 0 ? messages.length : sent;
  if (messages.length < went || (messages.length > 0 && messages[messages.length - 1] === '...')) {
    throw new CallShapeError(`${c.name}: ${went} message(s) went, strace printed ${messages.length}`);
  }
  const seen = new Set<string>();
  const events: TraceEvent[] = [];
  for (const message of messages.slice(0, went)) {
    const name = structField(structField(message, 'msg_hdr') ?? '', 'msg_name');
    if (name === undefined || name === 'NULL' || seen.has(name)) continue;
    seen.add(name);
    events.push(networkEvent(c, 'sendto', name));
  }
  return events;
}
