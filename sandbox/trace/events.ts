/**
 * Typed events parsed from strace output: one discriminated union on `kind`,
 * one zod schema per kind, types only via z.infer. Serialised as JSONL by
 * consumers, hence snake_case fields and a schema_version on every event.
 */
import { z } from 'zod';

export const TRACE_EVENT_SCHEMA_VERSION = 1 as const;

const common = {
  schema_version: z.literal(TRACE_EVENT_SCHEMA_VERSION).describe('Version of this event format'),
  pid: z.number().int().describe('Process (thread) id the line belongs to, as strace printed it'),
  ts: z.number().describe('Unix time in seconds (strace -ttt) when the syscall was entered'),
};

const outcome = {
  syscall: z.string().describe('The syscall as strace named it (openat, renameat2, ...)'),
  result: z
    .number()
    .nullable()
    .describe('Return value; null when strace printed `?` (the process ended or was replaced inside the call)'),
  errno: z.string().optional().describe('Error name when the call failed (ENOENT, EACCES, ...)'),
  denied: z
    .boolean()
    .describe('The call failed with EACCES or EPERM: a permission check (DAC, Landlock, seccomp) refused it'),
};

export const ExecEventSchema = z
  .object({
    kind: z.literal('exec'),
    ...common,
    ...outcome,
    path: z.string().describe('Executable path as requested, made absolute against the cwd and normalised'),
    argv: z.array(z.string()).describe('Arguments as printed (empty when strace printed a pointer)'),
    argv_truncated: z
      .boolean()
      .optional()
      .describe('True when strace cut an argument or the argument list (its -s limit)'),
    cwd: z.string().describe('Working directory of the process at the call'),
  })
  .describe('execve / execveat');

export const FILE_OPS = [
  'read',
  'write',
  'create',
  'truncate',
  'unlink',
  'rename',
  'mkdir',
  'rmdir',
  'chmod',
  'chown',
  'link',
  'symlink',
  'access',
  'memfd',
] as const;

export const FileEventSchema = z
  .object({
    kind: z.literal('file'),
    ...common,
    ...outcome,
    op: z
      .enum(FILE_OPS)
      .describe(
        'What the call does to the path. Opens: access mode gives read/write; O_TRUNC gives truncate; ' +
          'O_CREAT|O_EXCL gives create (the file cannot have existed). A plain O_CREAT open stays read/write ' +
          'with may_create, because strace cannot tell whether the file existed. mknod is create. ' +
          'access = access()/faccessat() and O_PATH opens (no content touched). memfd = memfd_create.',
      ),
    path: z
      .string()
      .describe(
        'Absolute normalised path (lexical: `..` is collapsed without following symlinks; ' +
          '/proc/self/fd/N is replaced by the path of the open that returned N). ' +
          'rename/link: the source; symlink: the target the link points to, resolved against the link directory; ' +
          'memfd: `memfd:<name>`',
      ),
    path2: z.string().optional().describe('rename/link/symlink: the new name that was created'),
    real_path: z
      .string()
      .optional()
      .describe('The path the kernel reported for the opened fd (symlinks resolved), when it differs from path'),
    flags: z.array(z.string()).optional().describe('Flags as printed (open flags, AT_* flags, RENAME_* flags)'),
    may_create: z.boolean().optional().describe('The open had O_CREAT: it created the file if it did not exist'),
    mode: z.string().optional().describe('Mode argument as printed (chmod, mkdir, O_CREAT opens, mknod)'),
  })
  .describe('A filesystem syscall on a path');

export const NETWORK_OPS = ['socket', 'connect', 'bind', 'sendto'] as const;
export const SOCKET_FAMILIES = ['inet', 'inet6', 'unix', 'netlink', 'packet', 'other'] as const;

export const NetworkEventSchema = z
  .object({
    kind: z.literal('network'),
    ...common,
    ...outcome,
    op: z
      .enum(NETWORK_OPS)
      .describe('sendto covers sendto, sendmsg and sendmmsg (one per destination among the messages sent) with an explicit destination (sends on connected sockets are not events)'),
    family: z.enum(SOCKET_FAMILIES).describe('Address family'),
    domain: z.string().describe('Address family as strace printed it (AF_INET, AF_VSOCK, ...)'),
    address: z
      .string()
      .optional()
      .describe('inet/inet6: the IP; unix: sun_path (`@name` for abstract sockets); other families: the raw sockaddr'),
    port: z.number().int().optional().describe('inet/inet6 port'),
    socket_type: z.string().optional().describe('socket(): SOCK_STREAM, SOCK_DGRAM, ... (without SOCK_CLOEXEC etc.)'),
  })
  .describe('A socket creation or an address-bearing network syscall');

export const PROCESS_OPS = ['fork', 'exit', 'signal', 'kill'] as const;

export const ProcessEventSchema = z
  .object({
    kind: z.literal('process'),
    ...common,
    op: z
      .enum(PROCESS_OPS)
      .describe(
        'fork: clone/fork/vfork/clone3 returned in the parent; exit: exit_group or an exit line; signal: a --- SIG --- line; ' +
          'kill: the process sent a signal (kill, tkill, tgkill, pidfd_send_signal, rt_sigqueueinfo)',
      ),
    syscall: z.string().optional().describe('fork: the syscall; exit: exit_group when it came from the syscall'),
    result: z.number().nullable().optional().describe('fork: return value (the child id, or -1); kill: the return value'),
    errno: z.string().optional().describe('fork, kill: error name when it failed'),
    denied: z.boolean().optional().describe('kill: refused with EPERM/EACCES (Landlock signal scoping refuses signals to processes outside the sandbox)'),
    target: z.number().int().optional().describe('kill: the process (or, negative, the process group) signalled; absent when it was named by a pidfd strace could not resolve'),
    child: z.number().int().optional().describe('fork: the new process or thread id'),
    thread: z.boolean().optional().describe('fork: CLONE_THREAD was set (a thread, not a process)'),
    parent: z.number().int().optional().describe('The parent of pid, when the trace showed its creation'),
    exit_code: z.number().int().optional().describe('exit: the status passed to exit_group'),
    signal: z.string().optional().describe('exit: the signal that killed it; signal: the signal delivered; kill: the signal sent'),
  })
  .describe('Process lifecycle');

export const SeccompEventSchema = z
  .object({
    kind: z.literal('seccomp'),
    ...common,
    syscall: z.string().describe('The refused syscall by name (x86_64), or `syscall_<nr>`'),
    nr: z.number().int().describe('Its x86_64 number'),
    args: z.array(z.string()).describe('The six raw arguments as hex; pointers (paths) are addresses, not strings'),
    result: z.literal(-1),
    errno: z.literal('EPERM'),
    denied: z.literal(true),
    target: z.number().int().optional().describe('For calls that act on another process (ptrace, prlimit64, sched_*, process_vm_*): the pid named'),
    detail: z.string().describe('The arguments that made the filter refuse it, decoded (socket domain, clone flags, ptrace request, ...)'),
  })
  .describe(
    "A syscall the launcher's seccomp filter refused. strace never sees these (a filter's ERRNO outranks its TRACE), so the " +
      'filter hands them to the session agent, which records them and answers EPERM.',
  );

export const UnparsedEventSchema = z
  .object({
    kind: z.literal('unparsed'),
    schema_version: common.schema_version,
    pid: common.pid.optional(),
    ts: common.ts.optional(),
    raw: z.string().describe('The line (or joined unfinished/resumed line) as strace wrote it'),
    reason: z.string().describe('Why it could not be turned into an event'),
  })
  .describe('A line the parser could not interpret; never dropped silently');

export const TraceEventSchema = z.discriminatedUnion('kind', [
  ExecEventSchema,
  FileEventSchema,
  NetworkEventSchema,
  ProcessEventSchema,
  SeccompEventSchema,
  UnparsedEventSchema,
]);

export type ExecEvent = z.infer<typeof ExecEventSchema>;
export type FileEvent = z.infer<typeof FileEventSchema>;
export type NetworkEvent = z.infer<typeof NetworkEventSchema>;
export type ProcessEvent = z.infer<typeof ProcessEventSchema>;
export type SeccompEvent = z.infer<typeof SeccompEventSchema>;
export type UnparsedEvent = z.infer<typeof UnparsedEventSchema>;
export type TraceEvent = z.infer<typeof TraceEventSchema>;
export type TraceEventKind = TraceEvent['kind'];
export type FileOp = (typeof FILE_OPS)[number];

/**
 * The policy axis each file op is judged on: an open for reading is a read;
 * every op that changes the filesystem (an open for writing, create, truncate,
 * unlink/rmdir, rename, mkdir, chmod/chown, link, symlink) is a write; `access`
 * (no content touched) and `memfd` (no path) are on neither. Exec events are
 * the execute axis. An O_RDWR open also reads: its flags say so, not its op.
 */
export const FILE_OP_AXIS = {
  read: 'read',
  write: 'write',
  create: 'write',
  truncate: 'write',
  unlink: 'write',
  rename: 'write',
  mkdir: 'write',
  rmdir: 'write',
  chmod: 'write',
  chown: 'write',
  link: 'write',
  symlink: 'write',
  access: undefined,
  memfd: undefined,
} as const satisfies Record<FileOp, 'read' | 'write' | undefined>;

/** The file ops that change the filesystem: those on the write axis. */
export type WriteFileOp = { [K in FileOp]: (typeof FILE_OP_AXIS)[K] extends 'write' ? K : never }[FileOp];

export function isWriteOp(op: string): op is WriteFileOp {
  return (FILE_OP_AXIS as Readonly<Record<string, unknown>>)[op] === 'write';
}
export type NetworkOp = (typeof NETWORK_OPS)[number];
export type SocketFamily = (typeof SOCKET_FAMILIES)[number];

const DENYING_ERRNOS: ReadonlySet<string> = new Set(['EACCES', 'EPERM']);

export function isDenial(errno: string | undefined): boolean {
  return errno !== undefined && DENYING_ERRNOS.has(errno);
}

function outcomeText(e: { result: number | null; errno?: string | undefined; denied: boolean }): string {
  if (e.errno !== undefined) return e.denied ? `DENIED ${e.errno}` : e.errno;
  return e.result === null ? '?' : 'ok';
}

type Renderers = { [K in TraceEventKind]: (e: Extract<TraceEvent, { kind: K }>) => string };

const RENDERERS: Renderers = {
  exec: (e) => `[${e.pid}] exec ${e.path} ${JSON.stringify(e.argv)}${e.argv_truncated ? '…' : ''} -> ${outcomeText(e)}`,
  file: (e) => {
    const target = e.path2 === undefined ? e.path : `${e.path} -> ${e.path2}`;
    const extra = e.may_create ? ' (may create)' : '';
    return `[${e.pid}] ${e.op} ${target}${extra} -> ${outcomeText(e)}`;
  },
  network: (e) => {
    const where = [e.address, e.port].filter((x) => x !== undefined).join(':');
    const what = e.op === 'socket' ? `${e.domain} ${e.socket_type ?? ''}`.trim() : `${e.family} ${where}`.trim();
    return `[${e.pid}] ${e.op} ${what} -> ${outcomeText(e)}`;
  },
  process: (e) => {
    switch (e.op) {
      case 'fork':
        return e.child === undefined
          ? `[${e.pid}] ${e.syscall ?? 'fork'} failed ${e.errno ?? ''}`.trimEnd()
          : `[${e.pid}] ${e.thread ? 'thread' : 'fork'} -> ${e.child}`;
      case 'exit':
        return e.signal === undefined ? `[${e.pid}] exit ${e.exit_code ?? '?'}` : `[${e.pid}] killed by ${e.signal}`;
      case 'signal':
        return `[${e.pid}] signal ${e.signal ?? '?'}`;
      case 'kill': {
        const outcome = e.errno === undefined ? 'ok' : e.denied === true ? `DENIED ${e.errno}` : e.errno;
        return `[${e.pid}] kill ${e.target ?? '?'} ${e.signal ?? ''} -> ${outcome}`;
      }
    }
  },
  seccomp: (e) => `[${e.pid}] ${e.syscall} ${e.detail} -> DENIED EPERM (seccomp)`,
  unparsed: (e) => `[${e.pid ?? '?'}] unparsed (${e.reason}): ${e.raw}`,
};

/** One line for a human. */
export function renderEvent(event: TraceEvent): string {
  const render = RENDERERS[event.kind] as (e: TraceEvent) => string;
  return render(event);
}
