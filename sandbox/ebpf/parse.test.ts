import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../trace/index.ts';
import { commandEvents, EbpfParser, parseEbpf } from './parse.ts';
import { FIELD_SEP, RECORD_START } from './program.ts';

const NONCE = 'testnonce123';
let clock = 1_000_000n;

/** One record as the program prints it; ts increases per record unless given. */
function rec(type: string, fields: readonly (string | number)[], ts?: bigint): string {
  clock += 1000n;
  return `${RECORD_START}${NONCE}${FIELD_SEP}${[type, String(ts ?? clock), ...fields.map(String), ''].join(FIELD_SEP)}\n`;
}

/** S (with the first string) + P records (the others) + R for one call of tid (tgid = tid). */
function call(tid: number, name: string, scalars: readonly (string | number)[], strings: Readonly<Record<number, string>>, ret: number): string {
  const [first, ...rest] = Object.entries(strings);
  const s = rec('S', [tid, tid, name, ...scalars, ...(first === undefined ? [] : [first[1]])]);
  return [s, ...rest.map(([i, str]) => rec('P', [tid, tid, i, str])), rec('R', [tid, tid, name, ret])].join('');
}

const parse = (text: string) => parseEbpf(text, { nonce: NONCE });
const files = (events: readonly TraceEvent[]) => events.flatMap((e) => (e.kind === 'file' ? [`${e.op} ${e.path}${e.path2 === undefined ? '' : ` -> ${e.path2}`} ${e.errno ?? 'ok'}`] : []));
const unparsedReasons = (events: readonly TraceEvent[]) => events.flatMap((e) => (e.kind === 'unparsed' ? [e.reason] : []));

describe('parseEbpf', () => {
  it('reads the kill family as strace does: target, signal by name, and a refusal as denied', () => {
    const text =
      call(50, 'kill', [1, 19], {}, -1) + call(50, 'tgkill', [7, 8, 9], {}, -1) + call(50, 'kill', [-50, 0], {}, 0) + call(50, 'pidfd_send_signal', [4, 15], {}, -3);
    const kills = parse(text).events.flatMap((e) => (e.kind === 'process' && e.op === 'kill' ? [[e.syscall, e.target, e.signal, e.errno ?? 'ok', e.denied ?? false]] : []));
    expect(kills).toEqual([
      ['kill', 1, 'SIGSTOP', 'EPERM', true],
      ['tgkill', 7, 'SIGKILL', 'EPERM', true],
      ['kill', -50, '0', 'ok', false],
      ['pidfd_send_signal', undefined, 'SIGTERM', 'ESRCH', false],
    ]);
  });

  it('reads socket() as strace does: family and domain, the type without its flags, and a refusal', () => {
    // SOCK_STREAM|SOCK_CLOEXEC (0x80001), SOCK_DGRAM|SOCK_NONBLOCK (0x802), AF_NETLINK raw, AF_INET6 refused.
    const text = call(60, 'socket', [2, 0x80001, 0], {}, 3) + call(60, 'socket', [1, 0x802, 0], {}, 4) + call(60, 'socket', [16, 3, 0], {}, 5) + call(60, 'socket', [10, 1, 6], {}, -1);
    const sockets = parse(text).events.flatMap((e) => (e.kind === 'network' && e.op === 'socket' ? [[e.family, e.domain, e.socket_type, e.errno ?? 'ok', e.denied]] : []));
    expect(sockets).toEqual([
      ['inet', 'AF_INET', 'SOCK_STREAM', 'ok', false],
      ['unix', 'AF_UNIX', 'SOCK_DGRAM', 'ok', false],
      ['netlink', 'AF_NETLINK', 'SOCK_RAW', 'ok', false],
      ['inet6', 'AF_INET6', 'SOCK_STREAM', 'EPERM', true],
    ]);
  });

  it('keeps a call in flight for the next parse when not final (a hub\'s take), and ends it when final', () => {
    const parser = new EbpfParser({ nonce: NONCE });
    const entry = rec('S', [30, 30, 'openat', -100, 0, 0, '/tmp/fifo']);
    expect(parser.parse(entry, { final: false }).events).toEqual([]);
    const later = parser.parse(rec('R', [30, 30, 'openat', 3]), { final: false });
    expect(files(later.events)).toEqual(['read /tmp/fifo ok']);
    const cut = new EbpfParser({ nonce: NONCE });
    expect(files(cut.parse(entry).events)).toEqual(['read /tmp/fifo ok']);
    expect(unparsedReasons(cut.parse(rec('R', [30, 30, 'openat', 3])).events)).toEqual(['openat returned without a traced entry']);
  });

  it('resolves relative paths against the cwd set by chdir and inherited across fork', () => {
    const text =
      call(10, 'chdir', [], { 0: '/app' }, 0) +
      rec('F', [10, 10, 11]) +
      call(11, 'openat', [-100, 0o1101, 0o644], { 1: 'out/report.txt' }, 3) +
      call(10, 'openat', [-100, 0, 0], { 1: '../etc/passwd' }, 3);
    const { events } = parse(text);
    expect(files(events)).toEqual(['truncate /app/out/report.txt ok', 'read /etc/passwd ok']);
    const open = events.find((e) => e.kind === 'file' && e.pid === 11);
    expect(open).toMatchObject({ flags: ['O_WRONLY', 'O_CREAT', 'O_TRUNC'], may_create: true, mode: '0644', result: 3 });
  });

  it('marks a relative path whose cwd it never learned instead of guessing', () => {
    const { events } = parse(call(20, 'openat', [-100, 0, 0], { 1: 'notes.txt' }, 3));
    expect(files(events)).toEqual([]);
    expect(unparsedReasons(events)).toEqual([expect.stringContaining('the cwd is unknown')]);
  });

  it('never resolves an unreadable path ("" on a call that succeeded) to the cwd; AT_EMPTY_PATH is the dirfd itself', () => {
    const text =
      call(30, 'chdir', [], { 0: '/app/repo' }, 0) +
      call(30, 'openat', [-100, 2, 0], { 1: '' }, 3) +
      call(30, 'openat', [-100, 0, 0], { 1: '' }, -2) +
      call(30, 'openat', [-100, 0o200000, 0], { 1: '/app/d' }, 4) +
      call(30, 'fchownat', [4, 0x1000], { 1: '' }, 0);
    const { events } = parse(text);
    // The failed open of "" is the kernel's ENOENT, harmless either way; the chown acts on /app/d.
    expect(files(events)).toEqual(['read /app/repo ENOENT', 'read /app/d ok', 'chown /app/d ok']);
    expect(unparsedReasons(events)).toEqual([expect.stringContaining('read as "" on a call that succeeded')]);
  });

  it('follows memfd_create into ftruncate and a fileless execveat, as the strace parser does', () => {
    const text =
      call(31, 'memfd_create', [1], { 0: 'payload' }, 4) +
      call(31, 'ftruncate', [4], {}, 0) +
      rec('S', [31, 31, 'execveat', 4, 0x1000, '']) +
      rec('A', [31, 31, 0, 'payload']) +
      // The kernel reports a successful execveat's return through sys_exit_execve.
      rec('R', [31, 31, 'execve', 0]);
    const { events } = parse(text);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'file', op: 'memfd', path: 'memfd:payload', flags: ['MFD_CLOEXEC'] }),
      expect.objectContaining({ kind: 'file', op: 'truncate', path: '/memfd:payload' }),
      expect.objectContaining({ kind: 'exec', path: '/memfd:payload', argv: ['payload'], syscall: 'execveat', result: 0 }),
    ]);
  });

  it('pairs a return printed before its entry (another CPU) by kernel time', () => {
    const s = rec('S', [5, 5, 'rename', '/app/old.log'], 100n);
    const p = rec('P', [5, 5, 1, '/app/new.log'], 101n);
    const r = rec('R', [5, 5, 'rename', -2], 200n);
    const { events } = parse(r + p + s);
    expect(files(events)).toEqual(['rename /app/old.log -> /app/new.log ENOENT']);
  });

  it('follows dirfds through opens, fcntl(F_DUPFD_CLOEXEC) and close', () => {
    const text =
      call(7, 'openat', [-100, 0o200000, 0], { 1: '/app/d' }, 3) +
      call(7, 'fcntl', [3, 1030, 3], {}, 4) +
      call(7, 'close', [3], {}, 0) +
      call(7, 'unlinkat', [4, 0], { 1: 'y' }, 0) +
      call(7, 'unlinkat', [3, 0], { 1: 'z' }, 0) +
      call(7, 'unlinkat', [-100, 0x200], { 1: '/app/d' }, 0);
    const { events } = parse(text);
    expect(files(events)).toEqual(['read /app/d ok', 'unlink /app/d/y ok', 'rmdir /app/d ok']);
    expect(unparsedReasons(events)).toEqual([expect.stringContaining('against fd 3, whose path is unknown')]);
  });

  it('names the fd of an O_TMPFILE open by its inode, as the kernel does', () => {
    const text =
      rec('S', [8, 8, 'openat', -100, 0o20200002, 0o600, '/app']) +
      rec('I', [8, 8, 4242]) +
      rec('R', [8, 8, 'openat', 5]) +
      call(8, 'ftruncate', [5], {}, 0);
    expect(files(parse(text).events)).toEqual(['create /app ok', 'truncate /app/#4242 ok']);
  });

  describe('resolved paths (D records: the returned fd\'s path, as strace\'s -y gives real_path)', () => {
    /** One open of tid with a D record (cut: 1) between its entry and its return. */
    const openVia = (tid: number, name: string, scalars: readonly (string | number)[], path: string, resolved: string, ret: number, cut = 0): string =>
      rec('S', [tid, tid, name, ...scalars, path]) + rec('D', [tid, tid, cut, resolved]) + rec('R', [tid, tid, name, ret]);
    const fileEvents = (events: readonly TraceEvent[]) => events.flatMap((e) => (e.kind === 'file' ? [e] : []));

    it('attaches to the open its tid has in flight, and the fd then names the resolved file', () => {
      const text =
        openVia(40, 'openat', [-100, 0, 0], '/tmp/x/logs/app.log', '/app/logs/app.log', 3) +
        call(40, 'fchmod', [3, 0o600], {}, 0) +
        openVia(40, 'open', [0o1101, 0o644], '/tmp/out', '/etc/cron.d/job', 4) +
        openVia(40, 'creat', [0o644], '/tmp/c', '/etc/c', 5) +
        openVia(40, 'openat2', [-100, 0], '/tmp/o2', '/etc/o2', 6);
      const { events } = parse(text);
      expect(fileEvents(events).map((e) => [e.syscall, e.op, e.path, e.real_path])).toEqual([
        ['openat', 'read', '/tmp/x/logs/app.log', '/app/logs/app.log'],
        ['fchmod', 'chmod', '/app/logs/app.log', undefined],
        ['open', 'truncate', '/tmp/out', '/etc/cron.d/job'],
        ['creat', 'truncate', '/tmp/c', '/etc/c'],
        ['openat2', 'read', '/tmp/o2', '/etc/o2'],
      ]);
      expect(unparsedReasons(events)).toEqual([]);
    });

    it('is omitted when equal to the lexical path, and for a failed open', () => {
      const text = openVia(41, 'openat', [-100, 0, 0], '/etc/passwd', '/etc/passwd', 3) + openVia(41, 'openat', [-100, 0, 0], '/tmp/l/shadow', '/etc/shadow', -13);
      const events = fileEvents(parse(text).events);
      expect(events.map((e) => [e.path, e.errno ?? 'ok'])).toEqual([
        ['/etc/passwd', 'ok'],
        ['/tmp/l/shadow', 'EACCES'],
      ]);
      expect(events.map((e) => 'real_path' in e)).toEqual([false, false]);
    });

    it('drops a trailing " (deleted)", as strace\'s decoration is cleaned', () => {
      const events = fileEvents(parse(openVia(42, 'openat', [-100, 0, 0], '/tmp/link', '/tmp/gone (deleted)', 3)).events);
      expect(events[0]?.real_path).toBe('/tmp/gone');
    });

    it('is ignored while the call in flight is no open (execve opens its binary), or none is', () => {
      const text =
        rec('D', [43, 43, 0, '/etc/stray']) +
        rec('S', [43, 43, 'execve', '/bin/sh']) +
        rec('D', [43, 43, 0, '/usr/bin/dash']) +
        rec('R', [43, 43, 'execve', 0]) +
        call(43, 'openat', [-100, 0, 0], { 1: '/tmp/plain' }, 3);
      const { events } = parse(text);
      expect(events).toEqual([expect.objectContaining({ kind: 'exec', path: '/bin/sh', result: 0 }), expect.objectContaining({ kind: 'file', path: '/tmp/plain' })]);
      expect(events.some((e) => e.kind === 'file' && e.real_path !== undefined)).toBe(false);
    });

    it('keeps its bytes as data: newlines, quotes, the field separator, non-UTF-8', () => {
      const odd = `/app/we"ird\nna${FIELD_SEP}me\\x`;
      const text = Buffer.from(openVia(44, 'openat', [-100, 0, 0], '/tmp/a', odd, 3) + openVia(44, 'openat', [-100, 0, 0], '/tmp/b', '/app/caf\xe9', 4) + call(44, 'openat', [-100, 0, 0], { 1: '/app/caf\xe9' }, 5), 'latin1');
      const events = parseEbpf(text, { nonce: NONCE }).events;
      const opened = fileEvents(events);
      expect(opened.map((e) => e.real_path)).toEqual([odd, opened[2]?.path, undefined]);
      expect(opened[2]?.path).toBe('/app/caf\uFFFD');
      expect(unparsedReasons(events)).toEqual([]);
    });

    it('one flagged cut gives no real_path and says so, never a guess', () => {
      const { events } = parse(openVia(45, 'openat', [-100, 0, 0], '/tmp/deep', '', 3, 1));
      expect(fileEvents(events).map((e) => e.real_path)).toEqual([undefined]);
      expect(unparsedReasons(events)).toEqual([expect.stringContaining('too deep or too long')]);
    });
  });

  it('keeps a newline inside a path, and reports a string holding the field separator as unparsed', () => {
    const text = call(3, 'mkdir', [0o755], { 0: '/app/two\nlines' }, 0) + call(3, 'unlink', [], { 0: `/app/a${FIELD_SEP}b` }, 0);
    const { events } = parse(text);
    expect(files(events)).toEqual(['mkdir /app/two\nlines ok']);
    expect(unparsedReasons(events).some((r) => r.includes('separator'))).toBe(true);
  });

  it('never reads a record forged inside a string without the run nonce', () => {
    const forged = `${RECORD_START}othernonce${FIELD_SEP}S${FIELD_SEP}1${FIELD_SEP}3${FIELD_SEP}3${FIELD_SEP}unlink`;
    const { events } = parse(call(3, 'unlink', [], { 0: `/app/x${forged}` }, 0));
    expect(files(events)).toEqual([]);
    expect(events.some((e) => e.kind === 'unparsed')).toBe(true);
  });

  it('marks a path of the string limit as possibly cut', () => {
    const { events } = parse(call(3, 'unlink', [], { 0: `/${'a'.repeat(198)}` }, 0));
    expect(unparsedReasons(events)).toEqual([expect.stringContaining('may have been cut')]);
  });

  it('takes the possibly-cut length from the backend (the native one copies 4095 bytes)', () => {
    const long = `/${'a'.repeat(300)}`;
    const argv = rec('S', [9, 9, 'execve', '/bin/echo']) + rec('A', [9, 9, 0, 'b'.repeat(300)]) + rec('R', [9, 9, 'execve', 0]);
    const text = call(3, 'unlink', [], { 0: long }, 0) + argv;
    const native = parseEbpf(text, { nonce: NONCE, stringLimit: 4096 });
    expect(files(native.events)).toEqual([`unlink ${long} ok`]);
    expect(native.events.find((e) => e.kind === 'exec')).not.toHaveProperty('argv_truncated');
    const bpftrace = parseEbpf(text, { nonce: NONCE });
    expect(files(bpftrace.events)).toEqual([]);
    expect(bpftrace.events.find((e) => e.kind === 'exec')).toMatchObject({ argv_truncated: true });
    const atLimit = parseEbpf(call(3, 'unlink', [], { 0: `/${'a'.repeat(4094)}` }, 0), { nonce: NONCE, stringLimit: 4096 });
    expect(unparsedReasons(atLimit.events)).toEqual([expect.stringContaining('may have been cut')]);
  });

  it('reads execve argv, truncation, and decodes sockaddrs', () => {
    const text =
      rec('S', [9, 9, 'execve', '/usr/bin/curl']) +
      rec('A', [9, 9, 0, 'curl']) +
      rec('A', [9, 9, 1, 'http://10.0.0.5:8080/']) +
      rec('M', [9, 9]) +
      rec('R', [9, 9, 'execve', 0]) +
      call(9, 'connect', [3, '\\x02\\x00\\x1f\\x90\\x0a\\x00\\x00\\x05\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'], {}, -111) +
      call(9, 'connect', [4, '\\x01\\x00\\x00\\x62\\x75\\x73'], {}, 0) +
      call(9, 'sendto', [5, ''], {}, 12) +
      call(9, 'sendmsg', [6, '\\x02\\x00\\x27\\x0f\\x7f\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'], {}, 6) +
      call(9, 'sendmsg', [7, ''], {}, 6);
    const { events } = parse(text);
    expect(events.find((e) => e.kind === 'exec')).toMatchObject({ path: '/usr/bin/curl', argv: ['curl', 'http://10.0.0.5:8080/'], argv_truncated: true, result: 0 });
    const net = events.filter((e) => e.kind === 'network');
    expect(net).toEqual([
      expect.objectContaining({ op: 'connect', family: 'inet', address: '10.0.0.5', port: 8080, errno: 'ECONNREFUSED', denied: false }),
      expect.objectContaining({ op: 'connect', family: 'unix', address: '@bus', result: 0 }),
      // sendmsg's destination (msg_name) as sendto's; a connected socket's sendmsg (none) is no event.
      expect.objectContaining({ op: 'sendto', syscall: 'sendmsg', family: 'inet', address: '127.0.0.1', port: 9999, result: 6 }),
    ]);
  });

  it("reads sendmmsg's destinations from its N records: one send per destination among the messages that went", () => {
    const inet = (last: number, port: number) => `\\x02\\x00${`\\x${(port >> 8).toString(16).padStart(2, '0')}\\x${(port & 255).toString(16).padStart(2, '0')}`}\\x7f\\x00\\x00\\x${last.toString(16).padStart(2, '0')}${'\\x00'.repeat(8)}`;
    const batch = (tid: number, vlen: number, names: readonly [number, string][], ret: number) =>
      rec('S', [tid, tid, 'sendmmsg', 3, vlen]) + names.map(([i, bytes]) => rec('N', [tid, tid, i, bytes])).join('') + rec('R', [tid, tid, 'sendmmsg', ret]);
    const sends = (text: string) => parse(text).events.map((e) => (e.kind === 'network' ? `${e.address}:${e.port}${e.errno === undefined ? '' : ` ${e.errno}`}` : `unparsed: ${e.kind === 'unparsed' ? e.reason : e.kind}`));
    // Two destinations, three messages (two to the first), all went: two sends.
    expect(sends(batch(5, 3, [[0, inet(2, 9998)], [1, inet(3, 9997)], [2, inet(2, 9998)]], 3))).toEqual(['127.0.0.2:9998', '127.0.0.3:9997']);
    // Only the first went: the second is no send.
    expect(sends(batch(5, 2, [[0, inet(2, 9998)], [1, inet(3, 9997)]], 1))).toEqual(['127.0.0.2:9998']);
    // Refused: each destination is a refused send. A message without a destination (connected) has no N record.
    expect(sends(batch(5, 2, [[1, inet(4, 53)]], -1))).toEqual(['127.0.0.4:53 EPERM']);
    // More went than the tracer reads: what it read, and an unparsed event saying the rest was not.
    expect(sends(batch(5, 20, [[0, inet(2, 1)]], 20))).toEqual(['127.0.0.2:1', 'unparsed: sendmmsg: 20 messages went, destinations read for the first 8']);
  });

  it('counts events bpftrace reports lost, and flushes calls that never returned', () => {
    const text = rec('S', [4, 4, 'rmdir', '/app/tmp']) + 'Lost 17 events\n';
    const r = parse(text);
    expect(r.lost).toBe(17);
    expect(r.events).toEqual([expect.objectContaining({ kind: 'file', op: 'rmdir', path: '/app/tmp', result: null })]);
  });
});

describe('commandEvents', () => {
  it("keeps the root exec's process tree after its setup, and nothing else in the cgroup", () => {
    const text =
      call(1, 'chdir', [], { 0: '/' }, 0) +
      rec('F', [1, 1, 30]) +
      [rec('S', [30, 30, 'execve', '/opt/launch']), rec('A', [30, 30, 0, '/opt/launch']), rec('A', [30, 30, 1, 'solve.sh']), rec('R', [30, 30, 'execve', 0])].join('') +
      call(30, 'openat', [-100, 0, 0], { 1: '/opt/launch.rules' }, 3) +
      [rec('S', [30, 30, 'execve', '/bin/bash']), rec('R', [30, 30, 'execve', 0])].join('') +
      rec('F', [30, 30, 31]) +
      call(31, 'unlink', [], { 0: '/app/x' }, 0) +
      call(1, 'unlink', [], { 0: '/app/agent-only' }, 0);
    const own = commandEvents(parse(text).events, (e) => e.path === '/opt/launch' && e.argv.includes('solve.sh'));
    expect(own.map((e) => (e.kind === 'exec' ? `exec ${e.path}` : e.kind === 'file' ? `${e.op} ${e.path}` : e.kind))).toEqual(['exec /bin/bash', 'process', 'unlink /app/x']);
  });
});
