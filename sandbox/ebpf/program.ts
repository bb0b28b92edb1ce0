/**
 * The bpftrace program for one container: pure, returns the program text.
 *
 * Output format, one record per event, read back by parse.ts:
 *
 *   \x1e <nonce> \x1f <type> \x1f <field> \x1f <field> ... \x1f \n
 *
 * - Records START with RS (0x1e) and the run's nonce, and the parser splits
 *   the stream there, not on newlines: bpftrace prints strings raw, so a path
 *   holding a newline stays inside its record. The nonce is random per run
 *   and never enters the container, so a file name cannot forge a record.
 * - Fields are separated by US (0x1f). Every record type has a fixed field
 *   count (per syscall, from syscalls.ts); a string holding US shifts the
 *   count and the record is reported as unparsed, never read shifted.
 * - Strings are `str()`, cut at STRING_LIMIT - 1 bytes: the parser marks a
 *   string of exactly that length as possibly cut (unparsed for paths,
 *   argv_truncated for arguments). Sockaddrs are printed as hex bytes.
 *
 * Record types: S (syscall entered: ts, tgid, tid, name, its non-string
 * arguments in table order, then its first string argument if it has one),
 * P (a further string argument of the call just entered: ts, tgid, tid,
 * argument index, string), R (returned:
 * ts, tgid, tid, name, ret), A (one execve argument: ts, tgid, tid, index,
 * string), M (execve had more than ARGV_LIMIT arguments), N (one sendmmsg
 * message's destination: ts, tgid, tid, message index, sockaddr bytes), F (fork:
 * sched_process_fork — ts, parent tgid, parent tid, child tid), Y (the
 * readiness marker, see run.ts), I (the inode of an O_TMPFILE open's file:
 * ts, tgid, tid, inode). Enter and return are separate records and
 * paired by tid on the host: keeping strings in BPF maps until the return
 * would copy every path twice in the kernel for nothing (a thread is in at
 * most one syscall at a time, so the pairing is exact).
 *
 * Strings the entry probe could not read: `str()` reads user memory without
 * faulting it in, so a path in a page the process has not touched yet (a
 * constant in a binary's rodata, first use) reads as "". strace never sees
 * that (its ptrace read faults the page in), an untraced oracle does. An
 * entry that read "" keeps the pointer (@str<i>[tid]) and the return probe
 * reads it again — by then the kernel has copied the string in, so the page
 * is there — and prints it as a P record before R (the parser keeps the last
 * string per argument). execve/execveat are left out: after a successful
 * exec the pointer is the old image's.
 *
 * Filtering is on the container's cgroup v2 id (bpf_get_current_cgroup_id,
 * the `cgroup` builtin): the session agent and validator execs are in it
 * too; the parser keeps the command's process tree (parse.ts).
 */
import { ARGV_LIMIT, EBPF_SYSCALLS, MMSG_LIMIT, MMSGHDR_SIZE, SOCKADDR_LIMIT, type ArgSpec } from './syscalls.ts';

export const RECORD_START = '\x1e';
export const FIELD_SEP = '\x1f';

export interface ProgramOptions {
  /** The container's cgroup v2 id (the inode number of its cgroup directory). */
  cgroupId: bigint;
  /** Random per run, [A-Za-z0-9]{8,64}: starts every record. */
  nonce: string;
  /** The host process that opens the readiness path (run.ts), by tgid. */
  readyPid: number;
  /** The path whose openat by readyPid prints the Y record. */
  readyPath: string;
}

const NONCE_RE = /^[A-Za-z0-9]{8,64}$/;
const READY_PATH_RE = /^\/[A-Za-z0-9/._-]+$/;

function argFormat(spec: ArgSpec): { fmt: string; expr: string } {
  const a = `args->${spec.name}`;
  if (spec.kind === 'int') return { fmt: '%d', expr: a };
  if (spec.kind === 'str') return { fmt: '%s', expr: `str(${a})` };
  if (spec.kind === 'how_flags') return { fmt: '%llu', expr: `*uptr((uint64 *)${a})` };
  if (spec.kind === 'msg_name') {
    // struct user_msghdr starts { void *msg_name; int msg_namelen; }: the pointer, then the length 8 bytes in.
    const name = `*uptr((uint64 *)${a})`;
    const len = `*uptr((int32 *)((uint64)${a} + 8))`;
    return { fmt: '%rx', expr: `buf((uint8 *)${name}, ${name} == 0 ? 0 : (${len} > ${SOCKADDR_LIMIT} ? ${SOCKADDR_LIMIT} : (${len} < 0 ? 0 : ${len})))` };
  }
  const len = `args->${spec.kind.sockaddr}`;
  // A NULL destination (sendto on a connected socket) prints as no bytes.
  return { fmt: '%rx', expr: `buf(${a}, ${a} == 0 ? 0 : (${len} > ${SOCKADDR_LIMIT} ? ${SOCKADDR_LIMIT} : (${len} < 0 ? 0 : ${len})))` };
}

function head(nonce: string, type: string): string {
  return `${RECORD_START}${nonce}${FIELD_SEP}${type}`;
}

/** bpftrace's string escapes for the two separators (the program text itself stays printable). */
function escapeSeparators(text: string): string {
  return text.replaceAll(RECORD_START, '\\x1e').replaceAll(FIELD_SEP, '\\x1f');
}

function printf(parts: readonly string[], exprs: readonly string[]): string {
  // The closing separator marks the record's end: text bpftrace adds after it (lost-event notices) is not a field.
  const fmt = escapeSeparators([...parts, ''].join(FIELD_SEP));
  return `printf("${fmt}\\n"${exprs.map((e) => `, ${e}`).join('')});`;
}

function argvLoop(nonce: string): string {
  // Unrolled (bpftrace 0.17 has no bounded loops over user memory): print each
  // argument until the NULL, then say whether the list went on past the limit.
  const lines = [
    // The argv pointer as a number: `args->argv + $i` would be arithmetic on the tracepoint context.
    '    $argv = (uint64)args->argv;',
    '    $i = (uint64)0;',
    '    $end = 0;',
    `    unroll(${ARGV_LIMIT}) {`,
    '      $a = *uptr((uint64 *)($argv + $i * 8));',
    '      if ($a == 0) { $end = 1; }',
    `      if ($end == 0) { ${printf([head(nonce, 'A'), '%llu', '%d', '%d', '%d', '%s'], ['nsecs', 'pid', 'tid', '$i', 'str($a)'])} }`,
    '      $i++;',
    '    }',
    `    if ($end == 0 && *uptr((uint64 *)($argv + ${ARGV_LIMIT * 8})) != 0) { ${printf([head(nonce, 'M'), '%llu', '%d', '%d'], ['nsecs', 'pid', 'tid'])} }`,
  ];
  return lines.join('\n');
}

/**
 * sendmmsg's destinations: for each of the first MMSG_LIMIT messages (no further than vlen) that
 * names one, an N record (its index, the sockaddr bytes), as ab-ebpf prints them.
 */
function mmsgLoop(nonce: string): string {
  const lines = [
    '    $vec = (uint64)args->mmsg;',
    '    $n = (uint64)args->vlen;',
    '    $j = (uint64)0;',
    `    unroll(${MMSG_LIMIT}) {`,
    '      if ($j < $n) {',
    `        $name = *uptr((uint64 *)($vec + $j * ${MMSGHDR_SIZE}));`,
    `        $len = *uptr((int32 *)($vec + $j * ${MMSGHDR_SIZE} + 8));`,
    `        if ($name != 0) { ${printf([head(nonce, 'N'), '%llu', '%d', '%d', '%d', '%rx'], ['nsecs', 'pid', 'tid', '$j', `buf((uint8 *)$name, $len > ${SOCKADDR_LIMIT} ? ${SOCKADDR_LIMIT} : ($len < 0 ? 0 : $len))`])} }`,
    '      }',
    '      $j++;',
    '    }',
  ];
  return lines.join('\n');
}

/**
 * An O_TMPFILE open makes an unnamed inode the kernel calls `<dir>/#<inode>`
 * (what strace's -y prints for its fd). The inode number is only known in the
 * kernel, so the return probe prints it (I record, before R) from the task's
 * fd table. openat2 is left out: its flags are behind a user pointer.
 */
const TMPFILE_OPENS: ReadonlySet<string> = new Set(['open', 'openat']);
const O_TMPFILE_BIT = 0o20000000;

function tmpfileInode(nonce: string): string {
  const print = printf([head(nonce, 'I'), '%llu', '%d', '%d', '%llu'], ['nsecs', 'pid', 'tid', '((struct file *)$f)->f_inode->i_ino']);
  return [
    '    if (@tmpfile[tid]) {',
    '      delete(@tmpfile[tid]);',
    // bpftrace 0.17 indexes arrays by literals only: the fd slot by pointer arithmetic.
    `      if (args->ret >= 0) { $f = *((uint64 *)curtask->files->fdt->fd + args->ret); ${print} }`,
    '    }',
  ].join('\n');
}

export function buildProgram(options: ProgramOptions): string {
  const { cgroupId, nonce, readyPid, readyPath } = options;
  if (!NONCE_RE.test(nonce)) throw new RangeError(`buildProgram: nonce must be 8-64 letters or digits, got ${JSON.stringify(nonce)}`);
  if (!READY_PATH_RE.test(readyPath)) throw new RangeError(`buildProgram: unusable ready path ${JSON.stringify(readyPath)}`);
  if (!Number.isInteger(readyPid) || readyPid <= 0) throw new RangeError(`buildProgram: bad ready pid ${readyPid}`);
  if (cgroupId <= 1n) throw new RangeError(`buildProgram: cgroup id ${cgroupId} is the root cgroup, not a container's`);
  const filter = `/cgroup == ${cgroupId}/`;
  const who = ['nsecs', 'pid', 'tid'];
  const out: string[] = [];
  const rereadMaps = new Set<string>();
  for (const [name, specs] of Object.entries(EBPF_SYSCALLS) as [string, readonly ArgSpec[]][]) {
    const scalars = specs.filter((s) => s.kind !== 'str').map(argFormat);
    // The first string rides in the S record (its last field); any further one gets a P record of its
    // own: two 200-byte strings in one printf overflow the 512-byte BPF stack.
    const strings = specs.flatMap((s, i) => (s.kind === 'str' ? [{ index: i, expr: `str(args->${s.name})` }] : []));
    const [first, ...rest] = strings;
    const enter = printf(
      [head(nonce, 'S'), '%llu', '%d', '%d', name, ...scalars.map((a) => a.fmt), ...(first === undefined ? [] : ['%s'])],
      [...who, ...scalars.map((a) => a.expr), ...(first === undefined ? [] : [first.expr])],
    );
    const lines = [`    ${enter}`];
    for (const s of rest) lines.push(`    ${printf([head(nonce, 'P'), '%llu', '%d', '%d', String(s.index), '%s'], [...who, s.expr])}`);
    const exec = name === 'execve' || name === 'execveat';
    if (exec) lines.push(argvLoop(nonce));
    if (name === 'sendmmsg') lines.push(mmsgLoop(nonce));
    const rereads = exec ? [] : strings;
    for (const s of rereads) {
      const arg = `args->${(specs[s.index] as ArgSpec).name}`;
      lines.push(`    if (${s.expr} == "") { @str${s.index}[tid] = (uint64)${arg}; }`);
      rereadMaps.add(`@str${s.index}`);
    }
    const reread = rereads.map((s) => {
      const map = `@str${s.index}[tid]`;
      return `    if (${map}) { ${printf([head(nonce, 'P'), '%llu', '%d', '%d', String(s.index), '%s'], [...who, `str(uptr(${map}))`])} delete(${map}); }\n`;
    });
    const tmpfile = TMPFILE_OPENS.has(name);
    if (tmpfile) lines.push(`    if (args->flags & ${O_TMPFILE_BIT}) { @tmpfile[tid] = 1; }`);
    out.push(`tracepoint:syscalls:sys_enter_${name} ${filter}\n  {\n${lines.join('\n')}\n  }`);
    const ret = printf([head(nonce, 'R'), '%llu', '%d', '%d', name, '%lld'], [...who, 'args->ret']);
    out.push(`tracepoint:syscalls:sys_exit_${name} ${filter}\n  {\n${tmpfile ? `${tmpfileInode(nonce)}\n` : ''}${reread.join('')}    ${ret}\n  }`);
  }
  out.push(`END { ${['@tmpfile', ...[...rereadMaps].sort()].map((m) => `clear(${m});`).join(' ')} }`);
  // Forks in the container, by its parent: the parser builds the command's tree and copies cwd and fds.
  out.push(`tracepoint:sched:sched_process_fork ${filter}\n  { ${printf([head(nonce, 'F'), '%llu', '%d', '%d', '%d'], ['nsecs', 'pid', 'args->parent_pid', 'args->child_pid'])} }`);
  // Readiness: the host opens readyPath until this record comes back (run.ts).
  out.push(`tracepoint:syscalls:sys_enter_openat /pid == ${readyPid}/\n  { if (str(args->filename) == "${readyPath}") { ${printf([head(nonce, 'Y'), '%llu'], ['nsecs'])} } }`);
  return `${out.join('\n\n')}\n`;
}
