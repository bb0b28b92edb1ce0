/**
 * The eBPF tracer's output (program.ts) → the strace parser's event types
 * (sandbox/trace/events.ts), so everything downstream (gold derivation,
 * containment) reads either tracer alike. Pure: no I/O.
 *
 * Ordering: bpftrace drains one perf buffer per CPU, so a thread that moved
 * CPUs between entering and leaving a call can have its return printed before
 * its entry. The parser reads every record first and orders them by their
 * kernel timestamp (stable, so the records one probe printed keep their order)
 * before pairing entries with returns by tid.
 *
 * Paths: the kernel hands the tracer the path as the process passed it, so
 * relative paths are resolved here, against the process's cwd or the dirfd's
 * path — the same rules as the strace parser, with the state strace's `-y`
 * gave for free tracked instead:
 * - cwd per process (tgid): set by successful chdir/fchdir, copied at fork
 *   (sched_process_fork, printed in the parent) into the child. Reading
 *   /proc/<pid>/cwd from the host instead would race the process (it may
 *   have moved on or exited by the time the record is read).
 * - fd → path per process: from successful opens, copied at fork. dup,
 *   fcntl(F_DUPFD) and fds passed over sockets are not traced.
 * A path that cannot be resolved (the cwd or a dirfd unknown, or a string
 * that may have been cut at the backend's string limit) becomes an `unparsed` event with
 * the reason: never guessed. Processes the trace did not see start (they
 * existed before tracing) have an unknown cwd until they chdir.
 *
 * Threads share their process's cwd and fd table (keyed by tgid), which is
 * what pthreads ask for (CLONE_FS | CLONE_FILES); a raw clone with a thread
 * of its own fs is not told apart.
 *
 * Resolved paths (the native backend only; bpftrace prints none): a D record
 * between an open's entry and return (open, openat, openat2, creat) holds the
 * path of the file the returned fd names, as the kernel resolves it (symlinks
 * followed, as the container's root names it: native/ab-ebpf.bpf.c). It
 * becomes the open's `real_path` under the strace parser's rule
 * (sandbox/trace/syscalls.ts): only for a call that succeeded, only an
 * absolute path, a trailing " (deleted)" dropped, omitted when equal to the
 * lexical path; and, as strace's `-y` path does, it is what the fd table
 * remembers for that fd (fchmod, fchdir, a dirfd). A D record while the tid's
 * call in flight is no open (execve opens its binary) or none is, is ignored;
 * one flagged cut (the path too deep or long for the walk) gives no real_path
 * and an unparsed event saying so, never a guess.
 */
import { posix } from 'node:path';
import {
  isDenial,
  normalizeAbsolute,
  openOp,
  TRACE_EVENT_SCHEMA_VERSION,
  type ExecEvent,
  type FileEvent,
  type FileOp,
  type NetworkEvent,
  type NetworkOp,
  type ProcessEvent,
  type TraceEvent,
  type UnparsedEvent,
} from '../trace/index.ts';
import { atFlagNames, decodeSockaddr, errnoName, memfdFlagNames, modeText, openFlagNames, renameFlagNames, signalName, socketDomain, socketTypeName } from './decode.ts';
import { FIELD_SEP, RECORD_START } from './program.ts';
import { EBPF_SYSCALLS, isEbpfSyscall, MMSG_LIMIT, STRING_LIMIT, type ArgSpec, type EbpfSyscall } from './syscalls.ts';

export interface EbpfParseOptions {
  /** The run's nonce (program.ts): only records starting with it are read. */
  nonce: string;
  /**
   * The backend's string buffer, NUL included (default STRING_LIMIT, bpftrace's): a string of
   * stringLimit - 1 bytes or more may have been cut (a path is then unparsed, argv truncated).
   */
  stringLimit?: number;
}

export interface EbpfParse {
  events: TraceEvent[];
  /** Events bpftrace reported lost (its perf buffers overflowed): the trace is incomplete when > 0. */
  lost: number;
  /** Kernel time (boot clock, ns) of the readiness record, when it was printed. */
  readyNs?: bigint;
}

const AT_FDCWD = -100;
const O_CREAT = 0o100;
const O_TMPFILE_BIT = 0o20000000;
const AT_REMOVEDIR = 0x200;
const O_CLOEXEC = 0o2000000;
/** creat(path, mode) is open(path, O_WRONLY | O_CREAT | O_TRUNC, mode). */
const O_CREAT_WRONLY_TRUNC = 0o1 | 0o100 | 0o1000;
const F_DUPFD = 0;
const F_SETFD = 2;
const F_DUPFD_CLOEXEC = 1030;
const FD_CLOEXEC = 1;
const CLOSE_RANGE_CLOEXEC = 4;
const MFD_CLOEXEC = 1;
const LOST_RE = /Lost (\d+) events/g;

interface Record_ {
  type: string;
  ts: bigint;
  tgid: number;
  tid: number;
  fields: readonly string[];
  raw: string;
}

interface Pending {
  name: EbpfSyscall;
  tgid: number;
  ts: bigint;
  scalars: readonly string[];
  strings: Map<number, string>;
  argv: string[];
  argvMore: boolean;
  /** sendmmsg: each message's destination (sockaddr bytes as printed), by message index. */
  names?: Map<number, string>;
  /** An O_TMPFILE open: the unnamed inode it made. */
  tmpInode?: string;
  /** An open: the returned fd's path as the kernel resolved it (D record), raw bytes; cut: unknown. */
  resolved?: { path: string; cut: boolean };
}

interface FdEntry {
  path: string;
  cloexec: boolean;
}

interface ProcState {
  cwd: string | undefined;
  fds: Map<number, FdEntry>;
}

/** Fields after `type`, per record type (S: per syscall, checked separately). */
const FIXED_FIELDS: Readonly<Record<string, number>> = { P: 5, A: 5, M: 3, N: 5, R: 5, F: 4, Y: 1, I: 4, D: 5 };
/** The calls a D record (the returned fd's resolved path) belongs to. */
const RESOLVED_OPENS: ReadonlySet<EbpfSyscall> = new Set<EbpfSyscall>(['open', 'openat', 'openat2', 'creat']);
const DELETED_SUFFIX = ' (deleted)';

function scalarCount(name: EbpfSyscall): number {
  return (EBPF_SYSCALLS[name] as readonly ArgSpec[]).filter((s) => s.kind !== 'str').length;
}

/** The index of the syscall's first string argument: printed as the S record's last field. */
function firstString(name: EbpfSyscall): number | undefined {
  const i = (EBPF_SYSCALLS[name] as readonly ArgSpec[]).findIndex((s) => s.kind === 'str');
  return i === -1 ? undefined : i;
}

/** A string field's bytes: the output is read as latin1 so one char = one byte, then decoded as UTF-8. */
function utf8(field: string): string {
  return Buffer.from(field, 'latin1').toString('utf8');
}

function printable(raw: string): string {
  return utf8(raw).replaceAll(RECORD_START, '\\x1e').replaceAll(FIELD_SEP, '\\x1f');
}

function unparsed(raw: string, reason: string, pid?: number, ts?: number): UnparsedEvent {
  return {
    kind: 'unparsed',
    schema_version: TRACE_EVENT_SCHEMA_VERSION,
    ...(pid === undefined ? {} : { pid }),
    ...(ts === undefined ? {} : { ts }),
    raw: printable(raw),
    reason,
  };
}

/** Why a resolution failed; turned into an `unparsed` event by the caller. */
class Unresolved extends Error {
  override readonly name = 'Unresolved';
}

export class EbpfParser {
  readonly #options: EbpfParseOptions;
  readonly #procs = new Map<number, ProcState>();
  /** Child tid → its parent's state at the fork, adopted when the child's tgid first shows up. */
  readonly #forkedFrom = new Map<number, ProcState>();
  readonly #parent = new Map<number, number>();
  readonly #pending = new Map<number, Pending>();

  constructor(options: EbpfParseOptions) {
    this.#options = options;
  }

  /**
   * Parse records. `final: false` (a hub's take, hub.ts) keeps calls still in flight for the
   * next parse, where their returns come; otherwise they end here as never returned.
   */
  parse(input: string | Uint8Array, { final = true }: { final?: boolean } = {}): EbpfParse {
    const text = typeof input === 'string' ? Buffer.from(input, 'utf8').toString('latin1') : Buffer.from(input).toString('latin1');
    const marker = `${RECORD_START}${this.#options.nonce}${FIELD_SEP}`;
    const chunks = text.split(marker);
    let lost = 0;
    const out: TraceEvent[] = [];
    const records: Record_[] = [];
    const countLost = (s: string) => {
      for (const m of s.matchAll(LOST_RE)) lost += Number(m[1]);
    };
    countLost(chunks[0] ?? '');
    for (const chunk of chunks.slice(1)) {
      // A record ends at its last `US \n`; what follows is bpftrace's own text (lost-event notices).
      const end = chunk.lastIndexOf(`${FIELD_SEP}\n`);
      if (end === -1) {
        out.push(unparsed(chunk, 'record without its end (output cut off?)'));
        continue;
      }
      countLost(chunk.slice(end + 2));
      const record = this.#record(chunk.slice(0, end));
      if ('reason' in record) out.push(record);
      else records.push(record);
    }
    records.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    let readyNs: bigint | undefined;
    for (const r of records) {
      if (r.type === 'Y') readyNs ??= r.ts;
      else this.#apply(r, out);
    }
    if (final) {
      // Calls that never returned (the process died inside them, or tracing stopped first).
      for (const [tid, p] of this.#pending) this.#complete(tid, p, null, out);
      this.#pending.clear();
    }
    return { events: out, lost, ...(readyNs === undefined ? {} : { readyNs }) };
  }

  #record(body: string): Record_ | UnparsedEvent {
    const parts = body.split(FIELD_SEP);
    const [type = '', ...fields] = parts;
    const ts = /^\d+$/.test(fields[0] ?? '') ? BigInt(fields[0] ?? '0') : undefined;
    if (ts === undefined) return unparsed(body, 'record without a timestamp');
    const tgid = Number(fields[1]);
    // F: the parent's tid; every other type: the tid the record is about.
    const tid = Number(fields[2]);
    let expected = FIXED_FIELDS[type];
    if (type === 'S') {
      const name = fields[3] ?? '';
      if (!isEbpfSyscall(name)) return unparsed(body, `syscall ${name} is not one the program traces`);
      expected = 4 + scalarCount(name) + (firstString(name) === undefined ? 0 : 1);
    }
    if (expected === undefined) return unparsed(body, `unknown record type ${JSON.stringify(type)}`);
    if (type === 'D' && fields.length > expected) {
      // The path is the last field: a separator in it is one of its bytes (the fields before it are the kernel's).
      return { type, ts, tgid, tid, fields: [...fields.slice(0, expected - 1), fields.slice(expected - 1).join(FIELD_SEP)], raw: body };
    }
    if (fields.length !== expected) {
      return unparsed(body, `${fields.length} fields where a ${type} record has ${expected} (a string holding the separator 0x1f?)`, tid);
    }
    return { type, ts, tgid, tid, fields, raw: body };
  }

  #tsSeconds(ts: bigint): number {
    // Kernel boot-clock seconds; run.ts shifts them to Unix time once it knows the offset.
    return Number(ts) / 1e9;
  }

  #proc(tgid: number): ProcState {
    let p = this.#procs.get(tgid);
    if (p === undefined) {
      const from = this.#forkedFrom.get(tgid);
      p = from === undefined ? { cwd: undefined, fds: new Map() } : { cwd: from.cwd, fds: new Map(from.fds) };
      this.#procs.set(tgid, p);
    }
    return p;
  }

  #apply(r: Record_, out: TraceEvent[]): void {
    switch (r.type) {
      case 'S': {
        const name = r.fields[3] as EbpfSyscall;
        const stale = this.#pending.get(r.tid);
        if (stale !== undefined) this.#complete(r.tid, stale, null, out);
        const n = scalarCount(name);
        const first = firstString(name);
        const strings = new Map<number, string>(first === undefined ? [] : [[first, r.fields[4 + n] ?? '']]);
        this.#pending.set(r.tid, { name, tgid: r.tgid, ts: r.ts, scalars: r.fields.slice(4, 4 + n), strings, argv: [], argvMore: false });
        this.#proc(r.tgid);
        return;
      }
      case 'P':
      case 'A':
      case 'M':
      case 'N':
      case 'I': {
        const p = this.#pending.get(r.tid);
        if (p === undefined) {
          out.push(unparsed(r.raw, 'argument record without its syscall', r.tid, this.#tsSeconds(r.ts)));
          return;
        }
        if (r.type === 'P') p.strings.set(Number(r.fields[3]), r.fields[4] ?? '');
        else if (r.type === 'A') p.argv.push(r.fields[4] ?? '');
        else if (r.type === 'I') p.tmpInode = r.fields[3] ?? '';
        else if (r.type === 'N') (p.names ??= new Map()).set(Number(r.fields[3]), r.fields[4] ?? '');
        else p.argvMore = true;
        return;
      }
      case 'D': {
        // Only an open's: an execve (its binary, its interpreter) or a call traced without its entry has none to give.
        const p = this.#pending.get(r.tid);
        if (p !== undefined && RESOLVED_OPENS.has(p.name)) p.resolved ??= { path: r.fields[4] ?? '', cut: r.fields[3] !== '0' };
        return;
      }
      case 'R': {
        const p = this.#pending.get(r.tid);
        const name = r.fields[3];
        if (p === undefined || (p.name !== name && !execveatAsExecve(p.name, name))) {
          // Entered before tracing began (a call in flight at attach): nothing to pair it with.
          out.push(unparsed(r.raw, `${name ?? '?'} returned without a traced entry`, r.tid, this.#tsSeconds(r.ts)));
          return;
        }
        this.#pending.delete(r.tid);
        this.#complete(r.tid, p, Number(r.fields[4]), out);
        return;
      }
      case 'F': {
        const parentTgid = r.tgid;
        const child = Number(r.fields[3]);
        const parentTid = Number(r.fields[2]);
        const state = this.#proc(parentTgid);
        this.#forkedFrom.set(child, { cwd: state.cwd, fds: new Map(state.fds) });
        this.#parent.set(child, parentTid);
        const grand = this.#parent.get(parentTid);
        out.push({
          kind: 'process',
          schema_version: TRACE_EVENT_SCHEMA_VERSION,
          pid: parentTid,
          ts: this.#tsSeconds(r.ts),
          op: 'fork',
          syscall: 'clone',
          result: child,
          child,
          ...(grand === undefined ? {} : { parent: grand }),
        } satisfies ProcessEvent);
        return;
      }
      default:
        out.push(unparsed(r.raw, `unexpected record type ${r.type}`, r.tid));
    }
  }

  #complete(tid: number, p: Pending, ret: number | null, out: TraceEvent[]): void {
    const call = new CallView(tid, this.#tsSeconds(p.ts), p, ret, this.#proc(p.tgid), this.#options.stringLimit ?? STRING_LIMIT);
    try {
      if (p.name === 'sendmmsg') {
        out.push(...call.sendmmsg());
        return;
      }
      const event = call.event();
      if (event !== undefined) out.push(event);
      if (p.resolved?.cut === true && ret !== null && ret >= 0) {
        out.push(unparsed([p.name, ...p.scalars].join(FIELD_SEP), `${p.name}: the path fd ${ret} resolves to was too deep or too long to read: no real_path`, tid, call.ts));
      }
    } catch (error) {
      if (!(error instanceof Unresolved)) throw error;
      const raw = [p.name, ...p.scalars, ...[...p.strings.values()]].join(FIELD_SEP);
      out.push(unparsed(raw, `${p.name}: ${error.message}`, tid, call.ts));
    }
  }
}

/**
 * A successful execveat returns through sys_exit_execve, not sys_exit_execveat (seen on this
 * kernel for fexecve of a memfd: the new image's return is reported as execve's). The thread
 * is in one syscall at a time, so the pairing by tid stays exact.
 */
function execveatAsExecve(entered: EbpfSyscall, returned: string | undefined): boolean {
  return entered === 'execveat' && returned === 'execve';
}

const AT_EMPTY_PATH = 0x1000;
/** The calls that may act on their dirfd with an empty path, and the argument holding AT_EMPTY_PATH. */
const AT_EMPTY_PATH_FIELD: Readonly<Record<string, string>> = { execveat: 'flags', linkat: 'flags', fchownat: 'flag' };

/** A sockaddr's bytes from their printed form (hex escapes `\xNN` as bpftrace's %rx prints them). */
function sockaddrBytes(raw: string): Uint8Array {
  const hex = raw.replaceAll('\\x', '');
  if (!/^(?:[0-9a-f]{2})*$/i.test(hex)) throw new Unresolved(`unreadable sockaddr bytes ${raw}`);
  return Buffer.from(hex, 'hex');
}

/** One completed call: resolution against its process's state, and the event it makes. */
class CallView {
  readonly pid: number;
  readonly ts: number;
  readonly p: Pending;
  readonly ret: number | null;
  readonly state: ProcState;
  readonly stringLimit: number;

  constructor(pid: number, ts: number, p: Pending, ret: number | null, state: ProcState, stringLimit: number) {
    this.pid = pid;
    this.ts = ts;
    this.p = p;
    this.ret = ret;
    this.state = state;
    this.stringLimit = stringLimit;
  }

  /** The scalar argument named `field` (a number). */
  int(field: string): number {
    const specs = EBPF_SYSCALLS[this.p.name] as readonly ArgSpec[];
    const scalars = specs.filter((s) => s.kind !== 'str');
    const i = scalars.findIndex((s) => s.name === field);
    const raw = this.p.scalars[i];
    if (i === -1 || raw === undefined) throw new Unresolved(`no argument ${field}`);
    return Number(raw);
  }

  /** The bytes of a sockaddr argument (hex escapes `\xNN` as bpftrace's %rx prints them). */
  bytes(field: string): Uint8Array {
    const specs = EBPF_SYSCALLS[this.p.name] as readonly ArgSpec[];
    const scalars = specs.filter((s) => s.kind !== 'str');
    return sockaddrBytes(this.p.scalars[scalars.findIndex((s) => s.name === field)] ?? '');
  }

  /**
   * sendmmsg: a send to each distinct destination among the messages that went (the call returns
   * how many; a failed or unfinished one, each it was given), as the strace parser reads it.
   * Destinations past the first MMSG_LIMIT messages are not read: such a call also makes an
   * unparsed event saying so, never a shorter list passed off as whole.
   */
  sendmmsg(): TraceEvent[] {
    const vlen = this.int('vlen') >>> 0;
    const went = this.ret === null || this.ret < 0 ? vlen : Math.min(this.ret, vlen);
    const seen = new Set<string>();
    const events: TraceEvent[] = [];
    for (const [index, raw] of [...(this.p.names ?? [])].sort(([a], [b]) => a - b)) {
      if (index >= went || seen.has(raw)) continue;
      seen.add(raw);
      const addr = decodeSockaddr(sockaddrBytes(raw));
      if (addr !== undefined) events.push({ kind: 'network', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: this.pid, ts: this.ts, ...this.outcome(), op: 'sendto', ...addr });
    }
    if (went > MMSG_LIMIT) {
      const raw = ['sendmmsg', ...this.p.scalars].join(FIELD_SEP);
      events.push(unparsed(raw, `sendmmsg: ${went} messages went, destinations read for the first ${MMSG_LIMIT}`, this.pid, this.ts));
    }
    return events;
  }

  /** The string argument named `field`, checked for a possible cut. */
  str(field: string): string {
    const specs = EBPF_SYSCALLS[this.p.name] as readonly ArgSpec[];
    const i = specs.findIndex((s) => s.name === field);
    const raw = this.p.strings.get(i);
    if (raw === undefined) throw new Unresolved(`the string argument ${field} was not printed`);
    if (raw.length >= this.stringLimit - 1) throw new Unresolved(`${field} is ${raw.length} bytes, the tracer's limit: it may have been cut`);
    return utf8(raw);
  }

  /** The call was asked to act on its dirfd itself (AT_EMPTY_PATH, for the calls that take it). */
  emptyPathAsked(): boolean {
    const field = AT_EMPTY_PATH_FIELD[this.p.name];
    return field !== undefined && (this.int(field) & AT_EMPTY_PATH) !== 0;
  }

  /** A path argument made absolute against `dirfd` (AT_FDCWD or undefined: the cwd). */
  path(field: string, dirfd?: number): string {
    const path = this.str(field);
    // The kernel refuses "" (ENOENT) unless AT_EMPTY_PATH: a call that succeeded on "" had a string
    // the probe could not read (its page not faulted in, even at return), never the cwd.
    if (path === '' && this.ret !== null && this.ret >= 0 && !this.emptyPathAsked()) throw new Unresolved(`${field} read as "" on a call that succeeded: the string was not readable`);
    if (path.startsWith('/')) return normalizeAbsolute(path);
    const base = dirfd === undefined || dirfd === AT_FDCWD ? this.state.cwd : this.state.fds.get(dirfd)?.path;
    if (base === undefined) {
      throw new Unresolved(dirfd === undefined || dirfd === AT_FDCWD ? `relative path ${JSON.stringify(path)} and the cwd is unknown` : `relative path ${JSON.stringify(path)} against fd ${dirfd}, whose path is unknown`);
    }
    return path === '' ? base : normalizeAbsolute(`${base}/${path}`);
  }

  fdPath(field: string): string {
    const fd = this.int(field);
    const entry = this.state.fds.get(fd);
    if (entry === undefined) throw new Unresolved(`fd ${fd} has no known path`);
    return entry.path;
  }

  outcome(): Pick<FileEvent, 'syscall' | 'result' | 'errno' | 'denied'> {
    const errno = this.ret !== null && this.ret < 0 ? errnoName(-this.ret) : undefined;
    return { syscall: this.p.name, result: this.ret === null ? null : this.ret < 0 ? -1 : this.ret, ...(errno === undefined ? {} : { errno }), denied: isDenial(errno) };
  }

  /** A signal sent: `target`, the argument naming the process (or, negative, its group). */
  kill(target: string | undefined): ProcessEvent {
    const { result, errno, denied } = this.outcome();
    return {
      kind: 'process',
      schema_version: TRACE_EVENT_SCHEMA_VERSION,
      pid: this.pid,
      ts: this.ts,
      op: 'kill',
      syscall: this.p.name,
      result,
      ...(errno === undefined ? {} : { errno, denied }),
      ...(target === undefined ? {} : { target: this.int(target) }),
      signal: signalName(this.int('sig')),
    };
  }

  file(op: FileOp, path: string, extras: Partial<Pick<FileEvent, 'path2' | 'real_path' | 'flags' | 'may_create' | 'mode'>> = {}): FileEvent {
    return { kind: 'file', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: this.pid, ts: this.ts, ...this.outcome(), op, path, ...extras };
  }

  open(dirfd: number | undefined, flagsWord: number, mode: number | undefined): FileEvent {
    return this.openPath('filename', dirfd, flagsWord, mode);
  }

  openPath(field: string, dirfd: number | undefined, flagsWord: number, mode: number | undefined): FileEvent {
    const path = this.path(field, dirfd);
    const flags = openFlagNames(flagsWord);
    const op = openOp(flags);
    const creating = (flagsWord & O_CREAT) !== 0 || (flagsWord & O_TMPFILE_BIT) !== 0;
    const ok = this.ret !== null && this.ret >= 0;
    const real = ok ? this.realPath() : undefined;
    // The fd names the file the kernel opened, as strace's -y path does; without a resolved path,
    // an O_TMPFILE open's names the unnamed inode as the kernel does.
    const fdPath = real ?? (this.p.tmpInode === undefined ? path : `${path}/#${this.p.tmpInode}`);
    if (this.ret !== null && this.ret >= 0) this.state.fds.set(this.ret, { path: fdPath, cloexec: (flagsWord & O_CLOEXEC) !== 0 });
    return this.file(op, path, {
      ...(real !== undefined && real !== path ? { real_path: real } : {}),
      flags,
      ...((flagsWord & O_CREAT) !== 0 && op !== 'create' ? { may_create: true } : {}),
      ...(creating && mode !== undefined ? { mode: modeText(mode) } : {}),
    });
  }

  /** The returned fd's path as the kernel resolved it (D record): absolute, " (deleted)" dropped; undefined when unknown. */
  realPath(): string | undefined {
    const r = this.p.resolved;
    if (r === undefined || r.cut) return undefined;
    const text = utf8(r.path);
    const real = text.endsWith(DELETED_SUFFIX) ? text.slice(0, -DELETED_SUFFIX.length) : text;
    return real.startsWith('/') ? real : undefined;
  }

  twoPath(op: FileOp, fromDir: number | undefined, toDir: number | undefined, flags: string[] = []): FileEvent {
    const path = this.path('oldname', fromDir);
    const path2 = this.path('newname', toDir);
    return this.file(op, path, { path2, ...(flags.length > 0 ? { flags } : {}) });
  }

  symlink(dirfd: number | undefined): FileEvent {
    const target = this.str('oldname');
    const link = this.path('newname', dirfd);
    const path = target.startsWith('/') ? normalizeAbsolute(target) : normalizeAbsolute(`${posix.dirname(link)}/${target}`);
    return this.file('symlink', path, { path2: link });
  }

  exec(dirfd: number | undefined): ExecEvent {
    const path = this.path('filename', dirfd);
    if (this.ret === 0) {
      for (const [fd, entry] of this.state.fds) if (entry.cloexec) this.state.fds.delete(fd);
    }
    const cut = this.p.argvMore || this.p.argv.some((a) => a.length >= this.stringLimit - 1);
    return {
      kind: 'exec',
      schema_version: TRACE_EVENT_SCHEMA_VERSION,
      pid: this.pid,
      ts: this.ts,
      ...this.outcome(),
      path,
      argv: this.p.argv.map(utf8),
      ...(cut ? { argv_truncated: true } : {}),
      cwd: this.state.cwd ?? '',
    };
  }

  network(op: NetworkOp, field: string): NetworkEvent | undefined {
    const addr = decodeSockaddr(this.bytes(field));
    // sendto without a destination (a connected socket) is no event, as in the strace parser.
    if (addr === undefined) return undefined;
    return { kind: 'network', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: this.pid, ts: this.ts, ...this.outcome(), op, ...addr };
  }

  socket(): NetworkEvent {
    const { domain, family } = socketDomain(this.int('family'));
    const type = socketTypeName(this.int('type'));
    return { kind: 'network', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: this.pid, ts: this.ts, ...this.outcome(), op: 'socket', family, domain, ...(type === undefined ? {} : { socket_type: type }) };
  }

  /** The fd-table calls: no event, only bookkeeping. */
  fdTable(name: 'close' | 'close_range' | 'dup' | 'dup2' | 'dup3' | 'fcntl'): undefined {
    const fds = this.state.fds;
    const copy = (from: number, to: number | null, cloexec: boolean) => {
      const entry = fds.get(from);
      if (to === null || to < 0) return;
      if (entry === undefined) fds.delete(to);
      else fds.set(to, { path: entry.path, cloexec });
    };
    switch (name) {
      case 'close':
        fds.delete(this.int('fd'));
        break;
      case 'close_range': {
        const lo = this.int('fd') >>> 0;
        const hi = this.int('max_fd') >>> 0;
        const mark = (this.int('flags') & CLOSE_RANGE_CLOEXEC) !== 0;
        if (this.ret !== 0) break;
        for (const [fd, entry] of fds) {
          if (fd < lo || fd > hi) continue;
          if (mark) fds.set(fd, { path: entry.path, cloexec: true });
          else fds.delete(fd);
        }
        break;
      }
      case 'dup':
        copy(this.int('fildes'), this.ret, false);
        break;
      case 'dup2':
        copy(this.int('oldfd'), this.ret, false);
        break;
      case 'dup3':
        copy(this.int('oldfd'), this.ret, (this.int('flags') & O_CLOEXEC) !== 0);
        break;
      case 'fcntl': {
        const cmd = this.int('cmd');
        if (cmd === F_DUPFD || cmd === F_DUPFD_CLOEXEC) copy(this.int('fd'), this.ret, cmd === F_DUPFD_CLOEXEC);
        else if (cmd === F_SETFD && this.ret === 0) {
          const entry = fds.get(this.int('fd'));
          if (entry !== undefined) fds.set(this.int('fd'), { path: entry.path, cloexec: (this.int('arg') & FD_CLOEXEC) !== 0 });
        }
        break;
      }
    }
    return undefined;
  }

  event(): TraceEvent | undefined {
    const ok = this.ret === 0;
    switch (this.p.name) {
      case 'close':
      case 'close_range':
      case 'dup':
      case 'dup2':
      case 'dup3':
      case 'fcntl':
        return this.fdTable(this.p.name);
      case 'execve':
        return this.exec(undefined);
      case 'execveat':
        return this.exec(this.int('fd'));
      case 'open':
        return this.open(undefined, this.int('flags'), this.int('mode'));
      case 'openat':
        return this.open(this.int('dfd'), this.int('flags'), this.int('mode'));
      case 'openat2':
        return this.open(this.int('dfd'), this.int('how'), undefined);
      case 'creat':
        return this.openPath('pathname', undefined, O_CREAT_WRONLY_TRUNC, this.int('mode'));
      case 'mknod':
        return this.file('create', this.path('filename'), { mode: modeText(this.int('mode')) });
      case 'mknodat':
        return this.file('create', this.path('filename', this.int('dfd')), { mode: modeText(this.int('mode')) });
      case 'memfd_create': {
        const name = this.str('uname');
        const flags = this.int('flags');
        if (this.ret !== null && this.ret >= 0) this.state.fds.set(this.ret, { path: `/memfd:${name}`, cloexec: (flags & MFD_CLOEXEC) !== 0 });
        return this.file('memfd', `memfd:${name}`, { flags: memfdFlagNames(flags) });
      }
      case 'rename':
        return this.twoPath('rename', undefined, undefined);
      case 'renameat':
        return this.twoPath('rename', this.int('olddfd'), this.int('newdfd'));
      case 'renameat2':
        return this.twoPath('rename', this.int('olddfd'), this.int('newdfd'), renameFlagNames(this.int('flags')));
      case 'link':
        return this.twoPath('link', undefined, undefined);
      case 'linkat':
        return this.twoPath('link', this.int('olddfd'), this.int('newdfd'), atFlagNames(this.int('flags')));
      case 'symlink':
        return this.symlink(undefined);
      case 'symlinkat':
        return this.symlink(this.int('newdfd'));
      case 'unlink':
        return this.file('unlink', this.path('pathname'));
      case 'unlinkat': {
        const op = (this.int('flag') & AT_REMOVEDIR) !== 0 ? 'rmdir' : 'unlink';
        return this.file(op, this.path('pathname', this.int('dfd')));
      }
      case 'rmdir':
        return this.file('rmdir', this.path('pathname'));
      case 'mkdir':
        return this.file('mkdir', this.path('pathname'), { mode: modeText(this.int('mode')) });
      case 'mkdirat':
        return this.file('mkdir', this.path('pathname', this.int('dfd')), { mode: modeText(this.int('mode')) });
      case 'chmod':
        return this.file('chmod', this.path('filename'), { mode: modeText(this.int('mode')) });
      case 'fchmod':
        return this.file('chmod', this.fdPath('fd'), { mode: modeText(this.int('mode')) });
      case 'fchmodat':
        return this.file('chmod', this.path('filename', this.int('dfd')), { mode: modeText(this.int('mode')) });
      case 'chown':
      case 'lchown':
        return this.file('chown', this.path('filename'));
      case 'fchown':
        return this.file('chown', this.fdPath('fd'));
      case 'fchownat': {
        const flags = atFlagNames(this.int('flag'));
        return this.file('chown', this.path('filename', this.int('dfd')), flags.length > 0 ? { flags } : {});
      }
      case 'truncate':
        return this.file('truncate', this.path('path'));
      case 'ftruncate':
        return this.file('truncate', this.fdPath('fd'));
      case 'chdir':
        if (ok) this.state.cwd = this.path('filename');
        return undefined;
      case 'fchdir':
        if (ok) this.state.cwd = this.fdPath('fd');
        return undefined;
      case 'socket':
        return this.socket();
      case 'connect':
        return this.network('connect', 'uservaddr');
      case 'bind':
        return this.network('bind', 'umyaddr');
      case 'sendto':
        return this.network('sendto', 'addr');
      case 'sendmsg':
        return this.network('sendto', 'msg');
      case 'sendmmsg':
        // Many events: #complete asks sendmmsg() for them.
        return undefined;
      case 'kill':
      case 'tkill':
      case 'rt_sigqueueinfo':
        return this.kill('pid');
      case 'tgkill':
      case 'rt_tgsigqueueinfo':
        // The process the thread is in, as strace's event names it.
        return this.kill('tgid');
      case 'pidfd_send_signal':
        // A pidfd names its process by a descriptor this tracer does not follow (pidfd_open): no target.
        return this.kill(undefined);
    }
  }
}

/** Parse one run's whole output. */
export function parseEbpf(input: string | Uint8Array, options: EbpfParseOptions): EbpfParse {
  return new EbpfParser(options).parse(input);
}

/**
 * The events of one command: the process tree under the first exec `isRoot`
 * accepts (the launcher exec the session started), found through fork events,
 * without the root's own events before its next exec (the launcher's setup;
 * as dropLauncherSetup does for strace). Everything else in the container's
 * cgroup — the session agent, validator execs — is left out. Unparsed events
 * without a pid are kept: they cannot be attributed, and hiding them would
 * hide a broken trace.
 */
export function commandEvents(events: readonly TraceEvent[], isRoot: (e: ExecEvent) => boolean): TraceEvent[] {
  const rootIndex = events.findIndex((e) => e.kind === 'exec' && e.result === 0 && isRoot(e));
  const root = events[rootIndex];
  if (root === undefined) return events.filter((e) => e.kind === 'unparsed' && e.pid === undefined);
  const tree = new Set<number>([root.pid ?? -1]);
  let inSetup = true;
  const out: TraceEvent[] = [];
  for (const [i, e] of events.entries()) {
    if (e.kind === 'unparsed' && e.pid === undefined) {
      out.push(e);
      continue;
    }
    if (i <= rootIndex || e.pid === undefined || !tree.has(e.pid)) continue;
    // A child forked during the launcher's setup is still the command's (none is, today).
    if (e.kind === 'process' && e.op === 'fork' && e.child !== undefined) tree.add(e.child);
    if (inSetup && e.pid === root.pid) {
      if (e.kind === 'exec') inSetup = false;
      else continue;
    }
    out.push(e);
  }
  return out;
}
