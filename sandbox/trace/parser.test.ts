import { describe, expect, it } from 'vitest';
import { parseStrace, StraceParser } from './parser.ts';
import { TraceEventSchema, type FileEvent, type TraceEvent } from './events.ts';

let tick = 0;
/** A line as `strace -f -ttt` writes it. */
function line(pid: number, body: string): string {
  tick += 1;
  return `${pid}    1700000000.${String(tick).padStart(6, '0')} ${body}`;
}

function parse(lines: readonly string[], cwd = '/app'): TraceEvent[] {
  const events = parseStrace(`${lines.join('\n')}\n`, { cwd });
  for (const e of events) expect(TraceEventSchema.safeParse(e).error).toBeUndefined();
  return events;
}

function files(events: readonly TraceEvent[]): FileEvent[] {
  return events.filter((e): e is FileEvent => e.kind === 'file');
}

const CLONE = 'clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f5a88407a10)';

describe('unfinished / resumed', () => {
  it('joins a call interrupted by another pid, keeping the entry time', () => {
    const first = line(10, 'openat(AT_FDCWD</app>, "x", O_RDONLY <unfinished ...>');
    const events = parse([
      first,
      line(11, 'execve("/bin/true", ["true"], 0x7ffe /* 1 var */) = 0'),
      line(10, '<... openat resumed>) = 3</app/x>'),
    ]);
    expect(events.map((e) => e.kind)).toEqual(['exec', 'file']);
    expect(events[1]).toMatchObject({ pid: 10, ts: Number(first.split(/\s+/)[1]), op: 'read', path: '/app/x', result: 3 });
  });

  it('joins a resumed line that carries the remaining arguments', () => {
    const events = parse([
      line(10, 'renameat2(AT_FDCWD</app>, "a", AT_FDCWD</app> <unfinished ...>'),
      line(10, '<... renameat2 resumed>, "b", RENAME_NOREPLACE) = 0'),
    ]);
    expect(events).toEqual([expect.objectContaining({ op: 'rename', path: '/app/a', path2: '/app/b', flags: ['RENAME_NOREPLACE'] })]);
  });

  it('reports a resumed line without its unfinished half', () => {
    const events = parse([line(10, '<... openat resumed>) = 3</app/x>')]);
    expect(events).toEqual([expect.objectContaining({ kind: 'unparsed', pid: 10, reason: expect.stringMatching(/without a matching/) })]);
  });

  it('reports a resumed line for a different call', () => {
    const events = parse([line(10, 'vfork( <unfinished ...>'), line(10, '<... openat resumed>) = 3')]);
    expect(events[0]).toMatchObject({ kind: 'unparsed', reason: expect.stringMatching(/resumed openat/) });
  });

  it('emits a call that never resumed, with a null result, when the process ends or the input does', () => {
    const events = parse([
      line(10, 'connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.0.0.1")}, 16 <unfinished ...>'),
      line(11, 'openat(AT_FDCWD</app>, "slow", O_RDONLY <unfinished ...>'),
      line(10, '+++ killed by SIGKILL +++'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'network', op: 'connect', address: '10.0.0.1', port: 443, result: null }),
      expect.objectContaining({ kind: 'process', op: 'exit', pid: 10, signal: 'SIGKILL' }),
      expect.objectContaining({ kind: 'file', pid: 11, path: '/app/slow', result: null, denied: false }),
    ]);
  });
});

describe('cwd tracking', () => {
  it('follows chdir and fchdir and resolves relative paths', () => {
    const events = parse([
      line(10, 'chdir("/srv") = 0'),
      line(10, 'mkdir("a", 0777) = 0'),
      line(10, 'chdir("a") = 0'),
      line(10, 'open("../b/./c//d/", O_RDONLY) = 3</srv/b/c/d>'),
      line(10, 'chdir("/missing") = -1 ENOENT (No such file or directory)'),
      line(10, 'unlink("e") = 0'),
      line(10, 'fchdir(3</opt/x>) = 0'),
      line(10, 'rmdir("y") = 0'),
    ]);
    expect(files(events).map((e) => e.path)).toEqual(['/srv/a', '/srv/b/c/d', '/srv/a/e', '/opt/x/y']);
  });

  it('gives a child its parent cwd at fork time, then keeps them apart', () => {
    const events = parse([
      line(10, 'chdir("/srv") = 0'),
      line(10, `${CLONE} = 11`),
      line(10, 'chdir("/") = 0'),
      line(11, 'unlink("c") = 0'),
      line(10, 'unlink("d") = 0'),
    ]);
    expect(files(events).map((e) => [e.pid, e.path])).toEqual([
      [11, '/srv/c'],
      [10, '/d'],
    ]);
    expect(events.find((e) => e.kind === 'process')).toMatchObject({ op: 'fork', child: 11, syscall: 'clone' });
  });

  it('lets a child whose lines come before the clone result inherit the forker cwd', () => {
    const events = parse([
      line(10, 'chdir("/src") = 0'),
      line(10, 'vfork( <unfinished ...>'),
      line(11, 'execve("./build", ["./build"], 0x5 /* 4 vars */) = 0'),
      line(10, '<... vfork resumed>) = 11'),
      line(11, 'exit_group(0) = ?'),
    ]);
    expect(events[0]).toMatchObject({ kind: 'exec', pid: 11, path: '/src/build', cwd: '/src' });
    expect(events[2]).toMatchObject({ kind: 'process', op: 'exit', pid: 11, parent: 10, exit_code: 0 });
  });

  it('shares the cwd with a CLONE_FS thread', () => {
    const events = parse([
      line(10, 'clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, child_tid=0x1, parent_tid=0x1, exit_signal=0, stack=0x1, stack_size=0x7fff00, tls=0x1} => {parent_tid=[12]}, 88) = 12'),
      line(12, 'chdir("/tmp") = 0'),
      line(10, 'unlink("x") = 0'),
    ]);
    expect(events[0]).toMatchObject({ kind: 'process', op: 'fork', child: 12, thread: true, syscall: 'clone3' });
    expect(files(events)[0]?.path).toBe('/tmp/x');
  });

  it('trusts the cwd strace prints on AT_FDCWD over its own bookkeeping', () => {
    const events = parse([
      line(10, 'openat(AT_FDCWD</elsewhere>, "f", O_RDONLY) = 3</elsewhere/f>'),
      line(10, 'unlink("g") = 0'),
    ]);
    expect(files(events).map((e) => e.path)).toEqual(['/elsewhere/f', '/elsewhere/g']);
  });

  it('falls back to the tracked cwd when AT_FDCWD has no decoration', () => {
    const events = parse([line(10, 'openat(AT_FDCWD, "f", O_RDONLY) = 3')], '/start/');
    expect(files(events)[0]?.path).toBe('/start/f');
  });

  it('rejects a relative starting cwd', () => {
    expect(() => new StraceParser({ cwd: 'app' })).toThrow(/absolute/);
  });
});

describe('open flags', () => {
  it.each([
    ['O_RDONLY|O_CLOEXEC', 'read', undefined],
    ['O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY', 'read', undefined],
    ['O_WRONLY|O_APPEND', 'write', undefined],
    ['O_RDWR', 'write', undefined],
    ['O_WRONLY|O_CREAT|O_APPEND', 'write', true],
    ['O_RDONLY|O_CREAT', 'read', true],
    ['O_WRONLY|O_CREAT|O_TRUNC', 'truncate', true],
    ['O_RDWR|O_TRUNC', 'truncate', undefined],
    ['O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC', 'create', undefined],
    ['O_RDWR|O_TMPFILE', 'create', undefined],
    ['O_RDONLY|O_PATH', 'access', undefined],
  ])('%s -> %s', (flags, op, mayCreate) => {
    const [event] = parse([line(10, `openat(AT_FDCWD</app>, "f", ${flags}, 0644) = 3</app/f>`)]);
    expect(event).toMatchObject({ kind: 'file', op, flags: flags.split('|') });
    expect((event as FileEvent).may_create).toBe(mayCreate);
    expect((event as FileEvent).mode).toBe(/O_CREAT|O_TMPFILE/.test(flags) ? '0644' : undefined);
  });

  it('reads flags out of openat2 and maps creat to a truncating open', () => {
    const events = parse([
      line(10, 'openat2(AT_FDCWD</app>, "a", {flags=O_WRONLY|O_CREAT|O_EXCL, mode=0600, resolve=RESOLVE_BENEATH}, 24) = 3</app/a>'),
      line(10, 'creat("b", 0666) = 4</app/b>'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ op: 'create', path: '/app/a', mode: '0600', syscall: 'openat2' }),
      expect.objectContaining({ op: 'truncate', path: '/app/b', may_create: true, syscall: 'creat' }),
    ]);
  });

  it('reports where a symlink led as real_path', () => {
    const [event] = parse([line(10, 'openat(AT_FDCWD</app>, "/etc/localtime", O_RDONLY|O_CLOEXEC) = 3</usr/share/zoneinfo/Etc/UTC>')]);
    expect(event).toMatchObject({ path: '/etc/localtime', real_path: '/usr/share/zoneinfo/Etc/UTC' });
  });

  it('marks EACCES and EPERM as denied, other errors not', () => {
    const events = parse([
      line(10, 'openat(AT_FDCWD</app>, "a", O_RDONLY) = -1 EACCES (Permission denied)'),
      line(10, 'unlinkat(AT_FDCWD</app>, "b", 0) = -1 EPERM (Operation not permitted)'),
      line(10, 'openat(AT_FDCWD</app>, "c", O_RDONLY) = -1 ENOENT (No such file or directory)'),
    ]);
    expect(events.map((e) => [(e as FileEvent).errno, (e as FileEvent).denied])).toEqual([
      ['EACCES', true],
      ['EPERM', true],
      ['ENOENT', false],
    ]);
  });
});

describe('path syscalls', () => {
  it.each<[string, Partial<FileEvent>]>([
    ['unlinkat(3</app/d>, "sub", AT_REMOVEDIR) = 0', { op: 'rmdir', path: '/app/d/sub' }],
    ['unlinkat(AT_FDCWD</app>, "f", 0) = 0', { op: 'unlink', path: '/app/f' }],
    ['renameat(3</a>, "x", 4</b>, "y") = 0', { op: 'rename', path: '/a/x', path2: '/b/y' }],
    ['rename("/abs", "rel") = 0', { op: 'rename', path: '/abs', path2: '/app/rel' }],
    ['linkat(3</tmp/#12 (deleted)>, "", AT_FDCWD</app>, "f", AT_EMPTY_PATH) = 0', { op: 'link', path: '/tmp/#12', path2: '/app/f', flags: ['AT_EMPTY_PATH'] }],
    ['link("a", "b") = 0', { op: 'link', path: '/app/a', path2: '/app/b' }],
    ['symlinkat("../t", 3</app/d>, "l") = 0', { op: 'symlink', path: '/app/t', path2: '/app/d/l' }],
    ['symlink("/etc/passwd", "pw") = 0', { op: 'symlink', path: '/etc/passwd', path2: '/app/pw' }],
    ['mkdirat(3</app>, "n", 0700) = 0', { op: 'mkdir', path: '/app/n', mode: '0700' }],
    ['mknodat(AT_FDCWD</app>, "fifo", S_IFIFO|0644) = 0', { op: 'create', path: '/app/fifo', mode: 'S_IFIFO|0644' }],
    ['fchmodat(AT_FDCWD</app>, "f", 0755) = 0', { op: 'chmod', path: '/app/f', mode: '0755' }],
    ['fchmod(3</app/f>, 0700) = 0', { op: 'chmod', path: '/app/f', mode: '0700' }],
    ['fchownat(3</app/f>, "", 0, 0, AT_EMPTY_PATH) = 0', { op: 'chown', path: '/app/f', flags: ['AT_EMPTY_PATH'] }],
    ['lchown("l", 1000, 1000) = 0', { op: 'chown', path: '/app/l' }],
    ['truncate("t", 0) = 0', { op: 'truncate', path: '/app/t' }],
    ['ftruncate(3</app/t>, 10) = 0', { op: 'truncate', path: '/app/t' }],
    ['access("/usr/bin/x", X_OK) = -1 EACCES (Permission denied)', { op: 'access', path: '/usr/bin/x', mode: 'X_OK', denied: true }],
    ['faccessat2(AT_FDCWD</app>, "f", R_OK, AT_EACCESS) = 0', { op: 'access', path: '/app/f', flags: ['AT_EACCESS'] }],
    ['openat(AT_FDCWD</app>, "caf\\303\\251\\n\\"q\\"", O_RDONLY) = 3</app/caf\\303\\251\\n\\"q\\">', { op: 'read', path: '/app/café\n"q"' }],
  ])('%s', (body, want) => {
    const events = parse([line(10, body)]);
    expect(events).toEqual([expect.objectContaining({ kind: 'file', ...want })]);
  });

  it('names a file reached through /proc/self/fd by the open that returned the fd', () => {
    const events = parse([
      line(10, 'openat(AT_FDCWD</app>, "d", O_RDONLY|O_NOFOLLOW|O_CLOEXEC|O_PATH) = 3</app/d>'),
      line(10, 'chmod("/proc/self/fd/3", 0755) = 0'),
      line(10, `${CLONE} = 11`),
      line(11, 'chmod("/proc/11/fd/3", 0700) = 0'),
      line(11, 'chmod("/proc/self/fd/9", 0700) = 0'),
    ]);
    expect(files(events).map((e) => e.path)).toEqual(['/app/d', '/app/d', '/app/d', '/proc/self/fd/9']);
  });

  it('follows memfd_create into ftruncate and execveat', () => {
    const events = parse([
      line(10, 'memfd_create("payload", MFD_CLOEXEC) = 4</memfd:payload>(deleted)'),
      line(10, 'ftruncate(4</memfd:payload>(deleted), 4096) = 0'),
      line(10, 'execveat(4</memfd:payload (deleted)>, "", ["payload"], 0x7ffd /* 3 vars */, AT_EMPTY_PATH) = 0'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'file', op: 'memfd', path: 'memfd:payload', flags: ['MFD_CLOEXEC'] }),
      expect.objectContaining({ kind: 'file', op: 'truncate', path: '/memfd:payload' }),
      expect.objectContaining({ kind: 'exec', path: '/memfd:payload', argv: ['payload'], syscall: 'execveat' }),
    ]);
  });

  it('explains paths it cannot resolve instead of guessing', () => {
    const events = parse([
      line(10, 'openat(3, "rel", O_RDONLY) = 4'),
      line(10, 'execve(0x7ffc0d0a5d20, 0x7ffc0d0a6048, 0x7ffc0d0a6060) = 0'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'unparsed', reason: expect.stringMatching(/fd 3 has no path/) }),
      expect.objectContaining({ kind: 'unparsed', reason: expect.stringMatching(/pointer.*CAP_SYS_PTRACE/) }),
    ]);
  });
});

describe('exec', () => {
  it('records argv, marks truncation and failed PATH probes', () => {
    const events = parse([
      line(10, 'execve("/usr/local/bin/x", ["x", "-c", "long"...], 0x1 /* 2 vars */) = -1 ENOENT (No such file or directory)'),
      line(10, 'execve("/usr/bin/x", ["x", ...], 0x1 /* 2 vars */) = 0'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'exec', path: '/usr/local/bin/x', argv: ['x', '-c', 'long'], argv_truncated: true, errno: 'ENOENT', denied: false, cwd: '/app' }),
      expect.objectContaining({ kind: 'exec', path: '/usr/bin/x', argv: ['x'], argv_truncated: true, result: 0 }),
    ]);
  });

  it('moves an execve that a non-leader thread started to the leader pid', () => {
    const events = parse([
      line(12, 'execve("/bin/x", ["x"], 0x1 /* 0 vars */ <unfinished ...>'),
      line(10, '+++ superseded by execve in pid 12 +++'),
      line(10, '<... execve resumed>) = 0'),
    ]);
    expect(events).toEqual([expect.objectContaining({ kind: 'exec', pid: 10, path: '/bin/x', result: 0 })]);
  });
});

describe('process status lines', () => {
  it('counts an exit once whether it shows as exit_group, an exit line or both', () => {
    const events = parse([
      line(10, `${CLONE} = 11`),
      line(11, 'exit_group(3) = ?'),
      line(11, '+++ exited with 3 +++'),
      line(10, '+++ exited with 0 +++'),
    ]);
    expect(events.filter((e) => e.kind === 'process' && e.op === 'exit')).toEqual([
      expect.objectContaining({ pid: 11, exit_code: 3, parent: 10, syscall: 'exit_group' }),
      expect.objectContaining({ pid: 10, exit_code: 0 }),
    ]);
  });

  it('reads kills, signals and failed forks', () => {
    const events = parse([
      line(10, '+++ killed by SIGSEGV (core dumped) +++'),
      line(11, '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=29, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---'),
      line(11, '--- stopped by SIGTSTP ---'),
      line(11, 'fork() = -1 EAGAIN (Resource temporarily unavailable)'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ op: 'exit', pid: 10, signal: 'SIGSEGV' }),
      expect.objectContaining({ op: 'signal', pid: 11, signal: 'SIGCHLD' }),
      expect.objectContaining({ op: 'signal', pid: 11, signal: 'SIGTSTP' }),
      expect.objectContaining({ op: 'fork', syscall: 'fork', result: -1, errno: 'EAGAIN' }),
    ]);
    expect(events[3]).not.toHaveProperty('child');
  });
});

describe('network', () => {
  it('records only sends that name a destination', () => {
    const events = parse([
      line(10, 'sendto(3<socket:[1]>, "GET / HTTP/1.1\\r\\n"..., 4096, MSG_NOSIGNAL, NULL, 0) = 4096'),
      line(10, 'sendto(4<socket:[2]>, "\\1\\0", 2, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 2'),
      line(10, 'sendmsg(5<socket:[3]>, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="x", iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1'),
      line(10, 'sendmsg(5<socket:[3]>, {msg_name={sa_family=AF_UNIX, sun_path=@"/tmp/.X11-unix/X0"}, msg_namelen=20, msg_iov=[{iov_base="x", iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = -1 EPERM (Operation not permitted)'),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ op: 'sendto', syscall: 'sendto', family: 'inet', address: '127.0.0.53', port: 53 }),
      expect.objectContaining({ op: 'sendto', syscall: 'sendmsg', family: 'unix', address: '@/tmp/.X11-unix/X0', denied: true }),
    ]);
  });

  it('records each destination a sendmmsg batch sent to, once, and only the messages that went', () => {
    const msg = (name: string) => `{msg_hdr={msg_name=${name}, msg_namelen=16, msg_iov=[{iov_base="canary", iov_len=6}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=6}`;
    const to = (ip: string, port: number) => `{sa_family=AF_INET, sin_port=htons(${port}), sin_addr=inet_addr("${ip}")}`;
    const events = parse([
      // As strace 6.1 prints it (-y): two destinations, both sent.
      line(10, `sendmmsg(3<UDP:[0.0.0.0:52574]>, [${msg(to('127.0.0.2', 9998))}, ${msg(to('127.0.0.3', 9997))}], 2, 0) = 2`),
      // Three to one address and one never sent (the call returned 3): one event, not the fourth's.
      line(10, `sendmmsg(3<UDP:[0.0.0.0:52574]>, [${msg(to('10.0.0.1', 53))}, ${msg(to('10.0.0.1', 53))}, ${msg(to('10.0.0.1', 53))}, ${msg(to('10.9.9.9', 1))}], 4, 0) = 3`),
      // Connected socket: no destinations, no events.
      line(10, `sendmmsg(4<UDP:[1]>, [${msg('NULL')}], 1, 0) = 1`),
      // Refused: the destination is a refused send.
      line(10, `sendmmsg(5<UDP:[2]>, [${msg(to('10.1.1.1', 80))}], 1, 0) = -1 EPERM (Operation not permitted)`),
      // strace printed fewer messages than went: unreadable, never a shorter list.
      line(10, `sendmmsg(6<UDP:[3]>, [${msg(to('10.2.2.2', 80))}, ...], 2, 0) = 2`),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ op: 'sendto', syscall: 'sendmmsg', family: 'inet', address: '127.0.0.2', port: 9998, result: 2 }),
      expect.objectContaining({ op: 'sendto', syscall: 'sendmmsg', family: 'inet', address: '127.0.0.3', port: 9997 }),
      expect.objectContaining({ op: 'sendto', syscall: 'sendmmsg', address: '10.0.0.1', port: 53 }),
      expect.objectContaining({ op: 'sendto', syscall: 'sendmmsg', address: '10.1.1.1', denied: true }),
      expect.objectContaining({ kind: 'unparsed' }),
    ]);
  });

  it('names the socket type without its flags', () => {
    const [event] = parse([line(10, 'socket(AF_PACKET, SOCK_RAW|SOCK_CLOEXEC, htons(ETH_P_ALL)) = -1 EPERM (Operation not permitted)')]);
    expect(event).toMatchObject({ op: 'socket', family: 'packet', domain: 'AF_PACKET', socket_type: 'SOCK_RAW', denied: true });
  });
});

describe('line framing', () => {
  it('accepts lines without pid or timestamp, and [pid N] prefixes', () => {
    const events = parse(['unlink("/a") = 0', '[pid  42] 1700000000.5 unlink("/b") = 0', '1700000001.25 unlink("/c") = 0']);
    expect(events.map((e) => [e.pid, e.ts, (e as FileEvent).path])).toEqual([
      [0, 0, '/a'],
      [42, 1700000000.5, '/b'],
      [0, 1700000001.25, '/c'],
    ]);
  });

  it('turns every line it cannot read into an unparsed event', () => {
    const events = parse([
      line(10, 'getdents64(3</app>, 0x1, 32768) = 0'),
      line(10, 'this is not strace'),
      line(10, 'openat(AT_FDCWD</app>, "x", O_RDONLY'),
      line(10, 'openat(AT_FDCWD</app>, "x", O_RDONLY) garbage'),
      line(10, '+++ something new +++'),
      line(10, 'connect(3<socket:[1]>, 0x7ffd0000, 16) = 0'),
    ]);
    expect(events.map((e) => (e.kind === 'unparsed' ? e.reason : e.kind))).toEqual([
      'syscall getdents64 is not one authbench traces',
      'not a syscall line',
      'unbalanced argument list',
      'no result',
      'unknown status line',
      expect.stringMatching(/unreadable sockaddr/),
    ]);
  });

  it('carries a partial line across chunks, including a split UTF-8 sequence', () => {
    const parser = new StraceParser({ cwd: '/app' });
    const bytes = new TextEncoder().encode('10 1700000000.1 unlink("é") = 0\n10 1700000000.2 unlink("b") = 0');
    const split = bytes.indexOf(0xc3) + 1;
    expect(parser.push(bytes.subarray(0, split))).toEqual([]);
    expect(parser.push(bytes.subarray(split))).toEqual([expect.objectContaining({ path: '/app/é' })]);
    expect(parser.end()).toEqual([expect.objectContaining({ path: '/app/b' })]);
  });
});

describe('signals sent', () => {
  it('records kill, tgkill and pidfd_send_signal with their target, and a refusal as a denial', () => {
    const events = parse([
      line(10, 'kill(8, SIGSTOP) = -1 EPERM (Operation not permitted)'),
      line(10, 'kill(-1, SIGKILL) = 0'),
      line(10, 'tgkill(12, 13, SIGTERM) = 0'),
      line(10, 'pidfd_send_signal(3<pid:7>, SIGKILL, NULL, 0) = -1 EPERM (Operation not permitted)'),
    ]);
    expect(events.map((e) => (e.kind === 'process' ? [e.op, e.syscall, e.target, e.signal, e.denied ?? false] : e.kind))).toEqual([
      ['kill', 'kill', 8, 'SIGSTOP', true],
      ['kill', 'kill', -1, 'SIGKILL', false],
      ['kill', 'tgkill', 12, 'SIGTERM', false],
      ['kill', 'pidfd_send_signal', 7, 'SIGKILL', true],
    ]);
  });
});

describe('names written in the trace syntax', () => {
  // As strace 6.1 printed them: a directory named with a newline and a whole forged line, quotes,
  // angle brackets (escaped \74 \76 in -y decorations), ' (deleted)', a backslash, a control byte.
  const dir = '/tmp/n\n4242 1700000000.000001 openat(AT_FDCWD, "/etc/shadow", O_RDONLY|O_CLOEXEC) = 3</etc/shadow>\n<"> (deleted) = 0 \\ \x01 é';
  const quoted = String.raw`/tmp/n\n4242 1700000000.000001 openat(AT_FDCWD, \"/etc/shadow\", O_RDONLY|O_CLOEXEC) = 3</etc/shadow>\n<\"> (deleted) = 0 \\ \1 \303\251`;
  const decorated = String.raw`/tmp/n\n4242 1700000000.000001 openat(AT_FDCWD, \"/etc/shadow\", O_RDONLY|O_CLOEXEC) = 3\74/etc/shadow\76\n\74\"\76 (deleted) = 0 \\ \1 \303\251`;

  it('are one path each, as named: no forged line, no event of the path the name spells', () => {
    const events = parse([
      line(21160, `openat(AT_FDCWD</tmp>, "${quoted}/out>", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3<${decorated}/out\\76>`),
      line(21160, `ftruncate(3<${decorated}/out\\76>, 0) = 0`),
    ]);
    expect(events.filter((e) => e.kind === 'unparsed')).toEqual([]);
    const touched = files(events).flatMap((e) => [e.path, e.real_path]);
    expect(touched.filter((p) => p !== undefined && p.includes('shadow') && !p.startsWith('/tmp/n\n'))).toEqual([]);
    expect(files(events)).toEqual([
      expect.objectContaining({ syscall: 'openat', op: 'truncate', path: `${dir}/out>` }),
      expect.objectContaining({ syscall: 'ftruncate', op: 'truncate', path: `${dir}/out>` }),
    ]);
  });
});
