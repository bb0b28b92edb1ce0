/**
 * The escape suite: attempts to get past ab-launch, each run twice — under
 * rules that must deny it, and under matching rules that must allow it (so a
 * probe that cannot succeed at all never passes as "denied").
 *
 * Where no rule can permit an action (the seccomp filter denies it
 * unconditionally, or the launcher always closes inherited descriptors), the
 * allow run is a control: the same argv outside the launcher, in a container
 * deliberately more privileged than a task container (see run.ts).
 *
 * Every probe works in its own directory /abst/<id>: `secret/` holds a file
 * `f` (TOPSECRET) and a copy of echo; `work/` and `ro/` are empty. Paths are
 * fixed so the rules stay data.
 */
import type { FsAccess, FsRule, LauncherRules } from '../launcher/index.ts';

export type ProbeMode = 'deny' | 'allow';
export type Observed = 'allowed' | 'denied' | 'error';

export type Expectation =
  /** The probe prints AB_ALLOWED, or AB_DENIED <errno> for an errno it counts as a denial; anything else is an error. */
  | { kind: 'marker' }
  /** Exit 0 is allowed; a non-zero exit with stderr matching `deniedStderr` is denied. */
  | { kind: 'exit'; deniedStderr: string };

export interface Probe {
  id: string;
  description: string;
  /** Shell lines run as root outside the launcher before the probe (fresh for each mode). */
  setup: readonly string[];
  /** Replaces `setup` for the allow run when the allowed path needs another arrangement. */
  allowSetup?: readonly string[];
  /** Run under the launcher. */
  argv: readonly string[];
  denyRules: LauncherRules;
  /** 'control': run argv without the launcher (no rule can permit this action). */
  allowRules: LauncherRules | 'control';
  expectation: Expectation;
  /** Opened by the launcher's parent on this fd and inherited (the launcher must close it). */
  inheritFd?: { fd: number; path: string };
}

export const SELFTEST_ROOT = '/abst';
/** Loopback TCP port with a listener started by the suite's global setup. */
export const LISTEN_PORT = 47011;
export const OTHER_PORT = 47012;
export const ABSTRACT_SOCKET = 'authbench-selftest';
/** An unsandboxed process the suite starts, for ptrace and signal probes; its pid is in this file. */
export const SLEEPER_PID_FILE = `${SELFTEST_ROOT}/sleeper.pid`;

const dir = (id: string): string => `${SELFTEST_ROOT}/${id}`;

const RO: readonly FsAccess[] = ['read_file', 'read_dir'];
const RX: readonly FsAccess[] = [...RO, 'execute'];
const RW: readonly FsAccess[] = [
  ...RO,
  'write_file',
  'make_reg',
  'make_dir',
  'make_sym',
  'make_sock',
  'make_fifo',
  'remove_file',
  'remove_dir',
  'truncate',
];
const RW_REFER: readonly FsAccess[] = [...RW, 'refer'];

/** What python3, perl and coreutils need to start. */
const SYSTEM: readonly FsRule[] = [
  { path: '/usr', access: RX },
  { path: '/etc', access: RO },
  { path: '/dev/null', access: ['read_file', 'write_file'] },
];

function rules(fs: readonly FsRule[], extra: Partial<LauncherRules> = {}): LauncherRules {
  return { fs: [...SYSTEM, ...fs], connectTcp: [], bindTcp: [], socketDomains: [], scope: [], ...extra };
}

/**
 * Python prelude: attempt(fn, deny) prints AB_ALLOWED when fn returns, AB_DENIED
 * when it raises one of the errnos named in `deny`, AB_ERROR otherwise. sc() is a
 * raw syscall through ctypes.
 */
const PRELUDE = `
import os, sys, errno, socket, ctypes, signal, time
def _out(s):
    sys.stdout.write(s + "\\n"); sys.stdout.flush()
def attempt(fn, deny=("EACCES", "EPERM")):
    try:
        r = fn()
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        _out(("AB_DENIED " if name in deny else "AB_ERROR ") + name + " " + str(e))
        os._exit(3)
    _out("AB_ALLOWED " + repr(r)[:80])
    os._exit(0)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    if r == -1:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
    return r
`;

const py = (code: string): string[] => ['python3', '-c', `${PRELUDE}\n${code}`];

/** Every probe's directory layout; per-probe setup lines follow it. */
export function baseSetup(id: string): string[] {
  const d = dir(id);
  return [
    `rm -rf ${d}`,
    `mkdir -p ${d}/secret ${d}/work ${d}/ro`,
    `echo TOPSECRET > ${d}/secret/f`,
    `cp /usr/bin/echo ${d}/secret/echo`,
  ];
}

const MARKER: Expectation = { kind: 'marker' };
const EACCES_STDERR: Expectation = { kind: 'exit', deniedStderr: 'Permission denied' };

function fsProbes(): Probe[] {
  const p: Probe[] = [];
  const add = (id: string, description: string, body: (d: string) => Omit<Probe, 'id' | 'description'>): void => {
    p.push({ id, description, ...body(dir(id)) });
  };

  add('read-cat', 'cat a file in a directory with no rule', (d) => ({
    setup: [],
    argv: ['cat', `${d}/secret/f`],
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RO }]),
    expectation: EACCES_STDERR,
  }));
  add('read-python', 'python3 os.open of a denied file', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.read(os.open("${d}/secret/f", os.O_RDONLY), 64))`),
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RO }]),
    expectation: MARKER,
  }));
  add('read-perl', 'perl open of a denied file', (d) => ({
    setup: [],
    argv: [
      'perl',
      '-e',
      `if (open(my $f, "<", "${d}/secret/f")) { print "AB_ALLOWED\\n" } elsif ($!{EACCES} || $!{EPERM}) { print "AB_DENIED $!\\n"; exit 3 } else { print "AB_ERROR $!\\n"; exit 4 }`,
    ],
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RO }]),
    expectation: MARKER,
  }));
  add('read-file-rule-only', 'read a sibling of the one file a rule grants', (d) => ({
    setup: [`echo other > ${d}/secret/g`],
    argv: ['cat', `${d}/secret/g`],
    denyRules: rules([{ path: `${d}/secret/f`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret/g`, access: RO }]),
    expectation: EACCES_STDERR,
  }));
  add('list-dir', 'ls a denied directory', (d) => ({
    setup: [],
    argv: ['ls', `${d}/secret`],
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: ['read_dir'] }]),
    expectation: EACCES_STDERR,
  }));
  add('list-dir-python', 'python3 os.listdir of a directory granted read_file only', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.listdir("${d}/secret"))`),
    denyRules: rules([{ path: `${d}/secret`, access: ['read_file'] }]),
    allowRules: rules([{ path: `${d}/secret`, access: RO }]),
    expectation: MARKER,
  }));
  add('symlink-existing', 'read a denied file through a symlink placed in an allowed directory', (d) => ({
    setup: [`ln -s ${d}/secret/f ${d}/work/link`],
    argv: ['cat', `${d}/work/link`],
    denyRules: rules([{ path: `${d}/work`, access: RO }]),
    allowRules: rules([{ path: `${d}/work`, access: RO }, { path: `${d}/secret`, access: RO }]),
    expectation: EACCES_STDERR,
  }));
  add('symlink-create', 'create a symlink to a denied file in a writable directory, then read it', (d) => ({
    setup: [],
    argv: py(
      `os.symlink("${d}/secret/f", "${d}/work/l2")\nattempt(lambda: os.read(os.open("${d}/work/l2", os.O_RDONLY), 64))`,
    ),
    denyRules: rules([{ path: `${d}/work`, access: RW }]),
    allowRules: rules([{ path: `${d}/work`, access: RW }, { path: `${d}/secret`, access: RO }]),
    expectation: MARKER,
  }));
  add('hardlink-create', 'hard-link a denied file into a writable directory', (d) => ({
    setup: [],
    argv: py(
      `attempt(lambda: (os.link("${d}/secret/f", "${d}/work/hl"), os.read(os.open("${d}/work/hl", os.O_RDONLY), 64)), deny=("EACCES", "EPERM", "EXDEV"))`,
    ),
    denyRules: rules([{ path: `${d}/work`, access: RW_REFER }]),
    allowRules: rules([
      { path: `${d}/work`, access: RW_REFER },
      { path: `${d}/secret`, access: RW_REFER },
    ]),
    expectation: MARKER,
  }));
  add('rename-out', 'rename a denied file out into a writable directory', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.rename("${d}/secret/f", "${d}/work/f"), deny=("EACCES", "EPERM", "EXDEV"))`),
    denyRules: rules([{ path: `${d}/work`, access: RW_REFER }]),
    allowRules: rules([
      { path: `${d}/work`, access: RW_REFER },
      { path: `${d}/secret`, access: RW_REFER },
    ]),
    expectation: MARKER,
  }));
  add('rename-in', 'rename a file into a read-only directory', (d) => ({
    setup: [`echo x > ${d}/work/x`],
    argv: py(`attempt(lambda: os.rename("${d}/work/x", "${d}/secret/x"), deny=("EACCES", "EPERM", "EXDEV"))`),
    denyRules: rules([
      { path: `${d}/work`, access: RW_REFER },
      { path: `${d}/secret`, access: RO },
    ]),
    allowRules: rules([
      { path: `${d}/work`, access: RW_REFER },
      { path: `${d}/secret`, access: RW_REFER },
    ]),
    expectation: MARKER,
  }));
  add('rename-escalate', 'move a read-only file into a writable directory to gain write access', (d) => ({
    setup: [`echo x > ${d}/ro/f`],
    argv: py(`attempt(lambda: os.rename("${d}/ro/f", "${d}/work/f"), deny=("EACCES", "EPERM", "EXDEV"))`),
    denyRules: rules([
      { path: `${d}/ro`, access: [...RO, 'remove_file', 'refer'] },
      { path: `${d}/work`, access: RW_REFER },
    ]),
    allowRules: rules([
      { path: `${d}/ro`, access: RW_REFER },
      { path: `${d}/work`, access: RW_REFER },
    ]),
    expectation: MARKER,
  }));
  add('mv-coreutils', 'mv (rename, then copy fallback) a denied file into a writable directory', (d) => ({
    setup: [],
    argv: ['mv', `${d}/secret/f`, `${d}/work/`],
    denyRules: rules([{ path: `${d}/work`, access: RW_REFER }]),
    allowRules: rules([
      { path: `${d}/work`, access: RW_REFER },
      { path: `${d}/secret`, access: RW_REFER },
    ]),
    expectation: { kind: 'exit', deniedStderr: 'Permission denied|Invalid cross-device link' },
  }));
  add('proc-self-root', 'read a denied file through /proc/self/root', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.read(os.open("/proc/self/root${d}/secret/f", os.O_RDONLY), 64))`),
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RO }]),
    expectation: MARKER,
  }));
  add('proc-pid-fd', "read a denied file through /proc/<pid>/fd of another process holding it open", (d) => ({
    // Deny: the holder is outside the sandbox. Allow: Landlock never lets a sandboxed process
    // reach into a process outside its domain, so the probe starts its own holder inside.
    setup: [
      `(exec 7<${d}/secret/f; exec sleep 120) >/dev/null 2>&1 </dev/null & echo $! > ${d}/work/holder.pid`,
    ],
    allowSetup: [],
    argv: py(`
import subprocess
pf = "${d}/work/holder.pid"
holder = None
if os.path.exists(pf):
    pid = int(open(pf).read())
else:
    holder = subprocess.Popen(["sh", "-c", "exec 7<${d}/secret/f; exec sleep 120"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = holder.pid
    for _ in range(100):
        if os.path.exists("/proc/%d/fd/7" % pid): break
        time.sleep(0.02)
def go():
    try:
        return os.read(os.open("/proc/%d/fd/7" % pid, os.O_RDONLY), 64)
    finally:
        if holder is not None: holder.kill()
attempt(go)`),
    denyRules: rules([{ path: `${d}/work`, access: RO }]),
    allowRules: rules([
      { path: `${d}/work`, access: RO },
      { path: `${d}/secret`, access: RO },
    ]),
    expectation: MARKER,
  }));
  add('proc-self-fd-reopen', 'reopen a read-only descriptor for writing through /proc/self/fd', (d) => ({
    setup: [`echo x > ${d}/ro/f`],
    argv: py(
      `fd = os.open("${d}/ro/f", os.O_RDONLY)\nattempt(lambda: os.write(os.open("/proc/self/fd/%d" % fd, os.O_WRONLY), b"y"))`,
    ),
    denyRules: rules([{ path: `${d}/ro`, access: RO }]),
    allowRules: rules([{ path: `${d}/ro`, access: RW }]),
    expectation: MARKER,
  }));
  add('inherited-fd', 'write through a descriptor the parent opened before the launcher ran', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.write(7, b"pwned\\n"), deny=("EBADF",))`),
    denyRules: rules([]),
    allowRules: 'control',
    expectation: MARKER,
    inheritFd: { fd: 7, path: `${d}/secret/f` },
  }));
  add('write-append', 'append to a read-only file', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.write(os.open("${d}/secret/f", os.O_WRONLY | os.O_APPEND), b"x"))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: MARKER,
  }));
  add('write-shell-redirect', 'shell redirection over a read-only file', (d) => ({
    setup: [],
    argv: ['sh', '-c', `echo pwned > ${d}/secret/f`],
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: { kind: 'exit', deniedStderr: 'Permission denied' },
  }));
  add('create-file', 'create a file in a read-only directory', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.open("${d}/secret/new", os.O_CREAT | os.O_WRONLY, 0o644))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: MARKER,
  }));
  add('create-touch', 'touch a new file in a denied directory', (d) => ({
    setup: [],
    argv: ['touch', `${d}/secret/new`],
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: EACCES_STDERR,
  }));
  add('mkdir', 'make a directory in a read-only directory', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.mkdir("${d}/secret/sub"))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: MARKER,
  }));
  add('unlink', 'delete a file in a read-only directory', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.unlink("${d}/secret/f"))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: MARKER,
  }));
  add('truncate', 'truncate(2) a file granted write but not truncate', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.truncate("${d}/secret/f", 0))`),
    denyRules: rules([{ path: `${d}/secret`, access: [...RO, 'write_file'] }]),
    allowRules: rules([{ path: `${d}/secret`, access: [...RO, 'write_file', 'truncate'] }]),
    expectation: MARKER,
  }));
  add('truncate-o-trunc', 'open with O_TRUNC a file granted write but not truncate', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.open("${d}/secret/f", os.O_WRONLY | os.O_TRUNC))`),
    denyRules: rules([{ path: `${d}/secret`, access: [...RO, 'write_file'] }]),
    allowRules: rules([{ path: `${d}/secret`, access: [...RO, 'write_file', 'truncate'] }]),
    expectation: MARKER,
  }));
  add('chmod', 'chmod a denied file (Landlock has no right for it; seccomp denies chmod without `setattr`)', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.chmod("${d}/secret/f", 0o777))`),
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }], { setattr: true }),
    expectation: MARKER,
  }));
  add('setgid-dir', 'make a directory set-group-ID (ordinary task work: allowed exactly when chmod is)', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.chmod("${d}/work", 0o2770))`),
    denyRules: rules([{ path: `${d}/work`, access: RW }]),
    allowRules: rules([{ path: `${d}/work`, access: RW }], { setattr: true }),
    expectation: MARKER,
  }));
  add('no-new-privs', 'gain privileges through exec (set-id bits may be set under setattr, so no_new_privs must hold)', (d) => ({
    setup: [],
    argv: py(
      [
        'def probe():',
        '    if libc.prctl(39, 0, 0, 0, 0) == 1:',
        '        raise PermissionError(errno.EPERM, "no_new_privs is set: exec cannot raise privileges")',
        '    return "exec could raise privileges"',
        'attempt(probe)',
      ].join('\n'),
    ),
    denyRules: rules([{ path: `${d}/secret`, access: RW }], { setattr: true }),
    allowRules: 'control',
    expectation: MARKER,
  }));
  add('chown', 'chown a denied file', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.chown("${d}/secret/f", 1000, 1000))`),
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }], { setattr: true }),
    expectation: MARKER,
  }));
  add('exec-denied', 'execute a binary that is readable but not executable', (d) => ({
    setup: [],
    argv: [`${d}/secret/echo`, 'AB_ALLOWED'],
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RX }]),
    expectation: EACCES_STDERR,
  }));
  add('exec-copied', 'copy a binary into a writable, non-executable directory and run it', (d) => ({
    setup: [],
    argv: py(`
fd = os.open("${d}/work/e", os.O_CREAT | os.O_WRONLY, 0o755)
os.write(fd, open("/usr/bin/echo", "rb").read()); os.close(fd)
attempt(lambda: os.execv("${d}/work/e", ["e", "AB_ALLOWED"]))`),
    denyRules: rules([{ path: `${d}/work`, access: RW }]),
    allowRules: rules([{ path: `${d}/work`, access: [...RW, 'execute'] }]),
    expectation: MARKER,
  }));
  add('exec-ldso', 'run a denied binary through the dynamic loader (ld.so maps it as a library)', (d) => ({
    setup: [],
    argv: ['/lib64/ld-linux-x86-64.so.2', `${d}/secret/echo`, 'AB_ALLOWED'],
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RX }]),
    expectation: EACCES_STDERR,
  }));
  add('exec-python-execv', 'python3 os.execv of a non-executable binary', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.execv("${d}/secret/echo", ["echo", "AB_ALLOWED"]))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RX }]),
    expectation: MARKER,
  }));
  add('exec-perl', 'perl exec of a non-executable binary', (d) => ({
    setup: [],
    argv: [
      'perl',
      '-e',
      `exec("${d}/secret/echo", "AB_ALLOWED"); if ($!{EACCES} || $!{EPERM}) { print "AB_DENIED $!\\n"; exit 3 } print "AB_ERROR $!\\n"; exit 4`,
    ],
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RX }]),
    expectation: MARKER,
  }));
  add('exec-o-path-fexecve', 'open a denied binary with O_PATH (needs no right) and fexecve it', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.execve(os.open("${d}/secret/echo", os.O_PATH), ["echo", "AB_ALLOWED"], {}))`),
    denyRules: rules([]),
    allowRules: rules([{ path: `${d}/secret`, access: RX }]),
    expectation: MARKER,
  }));
  add('exec-memfd', 'write a binary into a memfd and execute it (memfd_create + fexecve)', () => ({
    setup: [],
    argv: py(`
def go():
    fd = os.memfd_create("x", 0)
    os.write(fd, open("/usr/bin/echo", "rb").read())
    os.execve(fd, ["echo", "AB_ALLOWED"], {})
attempt(go)`),
    denyRules: rules([]),
    allowRules: 'control',
    expectation: MARKER,
  }));
  add('exec-shebang', 'run a script whose #! interpreter is denied', (d) => ({
    setup: [
      `cp /usr/bin/dash ${d}/secret/sh`,
      `printf '#!${d}/secret/sh\\necho AB_ALLOWED\\n' > ${d}/work/s.sh`,
      `chmod 755 ${d}/work/s.sh`,
    ],
    argv: [`${d}/work/s.sh`],
    denyRules: rules([{ path: `${d}/work`, access: RX }, { path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/work`, access: RX }, { path: `${d}/secret`, access: RX }]),
    expectation: EACCES_STDERR,
  }));
  add('unix-bind', 'bind a unix socket in a read-only directory', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: socket.socket(socket.AF_UNIX).bind("${d}/secret/sock"))`),
    denyRules: rules([{ path: `${d}/secret`, access: RO }]),
    allowRules: rules([{ path: `${d}/secret`, access: RW }]),
    expectation: MARKER,
  }));
  add('mkfifo', 'make a FIFO in a directory granted everything but make_fifo', (d) => ({
    setup: [],
    argv: py(`attempt(lambda: os.mkfifo("${d}/work/fifo"))`),
    denyRules: rules([{ path: `${d}/work`, access: RW.filter((a) => a !== 'make_fifo') }]),
    allowRules: rules([{ path: `${d}/work`, access: RW }]),
    expectation: MARKER,
  }));
  return p;
}

function netProbes(): Probe[] {
  const sock = (family: string, type: string, proto = 0): string[] =>
    py(`attempt(lambda: socket.socket(socket.${family}, socket.${type}, ${proto}))`);
  const p: Probe[] = [
    {
      id: 'socket-inet-tcp',
      description: 'create an AF_INET stream socket without `socket inet`',
      setup: [],
      argv: sock('AF_INET', 'SOCK_STREAM'),
      denyRules: rules([]),
      allowRules: rules([], { socketDomains: ['inet'] }),
      expectation: MARKER,
    },
    {
      id: 'socket-inet-udp',
      description: 'create an AF_INET datagram socket (UDP, which Landlock cannot restrict) without `socket inet`',
      setup: [],
      argv: sock('AF_INET', 'SOCK_DGRAM'),
      denyRules: rules([]),
      allowRules: rules([], { socketDomains: ['inet'] }),
      expectation: MARKER,
    },
    {
      id: 'socket-inet6',
      description: 'create an AF_INET6 socket with only `socket inet`',
      setup: [],
      argv: sock('AF_INET6', 'SOCK_STREAM'),
      denyRules: rules([], { socketDomains: ['inet'] }),
      allowRules: rules([], { socketDomains: ['inet6'] }),
      expectation: MARKER,
    },
    {
      id: 'socket-raw',
      description: 'create a raw ICMP socket although inet sockets are allowed',
      setup: [],
      argv: sock('AF_INET', 'SOCK_RAW', 1),
      denyRules: rules([], { socketDomains: ['inet', 'inet6'] }),
      allowRules: 'control',
      expectation: MARKER,
    },
    {
      id: 'socket-packet',
      description: 'create an AF_PACKET socket although inet sockets are allowed',
      setup: [],
      argv: sock('AF_PACKET', 'SOCK_RAW'),
      denyRules: rules([], { socketDomains: ['inet', 'inet6'] }),
      allowRules: 'control',
      expectation: MARKER,
    },
    {
      id: 'socket-netlink',
      description: 'create a NETLINK_ROUTE socket',
      setup: [],
      argv: sock('AF_NETLINK', 'SOCK_RAW', 0),
      denyRules: rules([], { socketDomains: ['inet', 'inet6'] }),
      allowRules: 'control',
      expectation: MARKER,
    },
    {
      id: 'tcp-connect-port',
      description: `TCP connect to 127.0.0.1:${LISTEN_PORT} when only port ${OTHER_PORT} is allowed`,
      setup: [],
      argv: py(`
s = socket.socket()
attempt(lambda: s.connect(("127.0.0.1", ${LISTEN_PORT})))`),
      denyRules: rules([], { socketDomains: ['inet'], connectTcp: [OTHER_PORT] }),
      allowRules: rules([], { socketDomains: ['inet'], connectTcp: [LISTEN_PORT] }),
      expectation: MARKER,
    },
    {
      id: 'tcp-bind-port',
      description: `TCP bind of port ${OTHER_PORT} when only port ${LISTEN_PORT + 10} may be bound`,
      setup: [],
      argv: py(`
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
attempt(lambda: s.bind(("127.0.0.1", ${OTHER_PORT})))`),
      denyRules: rules([], { socketDomains: ['inet'], bindTcp: [LISTEN_PORT + 10] }),
      allowRules: rules([], { socketDomains: ['inet'], bindTcp: [OTHER_PORT] }),
      expectation: MARKER,
    },
    {
      id: 'abstract-unix-scope',
      description: 'connect to an abstract unix socket bound outside the sandbox (Landlock scope, ABI 6)',
      setup: [],
      argv: py(`
s = socket.socket(socket.AF_UNIX)
attempt(lambda: s.connect("\\0${ABSTRACT_SOCKET}"))`),
      denyRules: rules([], { scope: ['abstract-unix'] }),
      allowRules: rules([]),
      expectation: MARKER,
    },
    {
      id: 'signal-scope',
      description: 'send a signal to a process outside the sandbox (Landlock scope, ABI 6)',
      setup: [],
      argv: py(`attempt(lambda: os.kill(int(open("${SLEEPER_PID_FILE}").read()), signal.SIGCONT))`),
      denyRules: rules([{ path: SELFTEST_ROOT, access: RO }], { scope: ['signal'] }),
      allowRules: rules([{ path: SELFTEST_ROOT, access: RO }]),
      expectation: MARKER,
    },
  ];
  return p;
}

/** Actions the seccomp filter denies whatever the rules say; their allow run is a control. */
function seccompProbes(): Probe[] {
  const probe = (id: string, description: string, code: string, extra: Partial<Probe> = {}): Probe => ({
    id,
    description,
    setup: [],
    argv: py(code),
    denyRules: rules([{ path: SELFTEST_ROOT, access: RW }, { path: '/proc', access: RO }]),
    allowRules: 'control',
    expectation: MARKER,
    ...extra,
  });
  const d = (id: string): string => dir(id);
  return [
    probe(
      'ptrace-attach',
      'PTRACE_ATTACH to a process outside the sandbox',
      `pid = int(open("${SLEEPER_PID_FILE}").read())
def go():
    sc(101, 16, pid, 0, 0)  # PTRACE_ATTACH
    os.waitpid(pid, 0x40000000)  # __WALL: the attach stop
    sc(101, 17, pid, 0, 0)  # PTRACE_DETACH, so the sleeper runs on
attempt(go)`,
    ),
    probe(
      'process-vm-readv',
      'process_vm_readv (even of its own memory)',
      `buf = ctypes.create_string_buffer(b"abc", 8); dst = ctypes.create_string_buffer(8)
class iov(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("n", ctypes.c_size_t)]
l = iov(ctypes.addressof(dst), 3); r = iov(ctypes.addressof(buf), 3)
attempt(lambda: sc(310, os.getpid(), ctypes.byref(l), 1, ctypes.byref(r), 1, 0))`,
    ),
    probe(
      'mount-tmpfs',
      'mount a tmpfs',
      `os.makedirs("${d('mount-tmpfs')}/m", exist_ok=True)
def go():
    sc(165, b"none", "${d('mount-tmpfs')}/m".encode(), b"tmpfs", 0, 0)
    sc(166, "${d('mount-tmpfs')}/m".encode(), 2)
attempt(go)`,
    ),
    probe(
      'clone-untraced',
      'clone(CLONE_UNTRACED): a child the tracer would not follow',
      `def go():
    pid = sc(56, 0x00800000 | 17, 0, 0, 0, 0)
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0)
attempt(go)`,
    ),
    probe(
      'prlimit-other',
      'prlimit64 on a process outside the sandbox (its limits, not the caller\'s)',
      `pid = int(open("${SLEEPER_PID_FILE}").read())
import resource
attempt(lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)))`,
    ),
    probe(
      'setpriority-other',
      'setpriority on a process outside the sandbox',
      `pid = int(open("${SLEEPER_PID_FILE}").read())
attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid)))`,
    ),
    probe(
      'setpriority-user',
      'setpriority(PRIO_USER): every process of the user, the harness\'s too',
      `attempt(lambda: os.setpriority(os.PRIO_USER, 0, os.getpriority(os.PRIO_USER, 0)))`,
    ),
    probe(
      'sched-affinity-other',
      'sched_setaffinity of a process outside the sandbox',
      `pid = int(open("${SLEEPER_PID_FILE}").read())
attempt(lambda: os.sched_setaffinity(pid, os.sched_getaffinity(pid)))`,
    ),
    probe(
      'pidfd-getfd',
      'pidfd_getfd: take a descriptor out of another process',
      `pid = int(open("${SLEEPER_PID_FILE}").read())
fd = os.pidfd_open(pid)
attempt(lambda: sc(438, fd, 0, 0))`,
    ),
    probe('unshare-user', 'unshare(CLONE_NEWUSER)', `attempt(lambda: sc(272, 0x10000000))`),
    probe(
      'unshare-net',
      'unshare(CLONE_NEWNET) (new network namespace)',
      `attempt(lambda: sc(272, 0x40000000))`,
    ),
    probe(
      'clone-newuser',
      'clone(CLONE_NEWUSER) through the raw syscall',
      `def go():
    pid = sc(56, 0x10000000 | 17, 0, 0, 0, 0)
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0)
attempt(go)`,
    ),
    probe(
      'clone3-newuser',
      'clone3 with CLONE_NEWUSER (clone3 answers ENOSYS: its flags are out of the filter\'s reach)',
      `args = (ctypes.c_uint64 * 11)(0x10000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
def go():
    pid = sc(435, ctypes.byref(args), 88)
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0)
attempt(go, deny=("ENOSYS", "EPERM"))`,
    ),
    probe('chroot', 'chroot into a writable directory', `attempt(lambda: os.chroot("${d('chroot')}/work"))`),
    probe(
      'setns',
      'setns into a namespace file',
      `fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
attempt(lambda: sc(308, fd, 0))`,
    ),
    probe(
      'tiocsti',
      'TIOCSTI: push input into a terminal',
      `import fcntl, termios
m, s = os.openpty()
attempt(lambda: fcntl.ioctl(s, termios.TIOCSTI, b"x"))`,
      {
        denyRules: rules([
          { path: '/dev/pts', access: ['read_file', 'write_file', 'ioctl_dev'] },
          { path: '/dev/ptmx', access: ['read_file', 'write_file', 'ioctl_dev'] },
        ]),
      },
    ),
    probe(
      'io-uring-setup',
      'io_uring_setup (io_uring bypasses syscall filtering)',
      `params = ctypes.create_string_buffer(120)
attempt(lambda: sc(425, 4, params))`,
    ),
    probe(
      'mknod-char',
      'mknod a character device where the rules grant make_char',
      `attempt(lambda: os.mknod("${d('mknod-char')}/work/null", 0o20666, os.makedev(1, 3)))`,
      { denyRules: rules([{ path: `${d('mknod-char')}/work`, access: [...RW, 'make_char'] }]) },
    ),
    probe(
      'keyctl-add-key',
      'add_key to the session keyring',
      `attempt(lambda: sc(248, b"user", b"authbench-selftest", b"x", 1, ctypes.c_long(-3).value))`,
    ),
    probe(
      'bpf-map-create',
      'bpf(BPF_MAP_CREATE)',
      `attr = (ctypes.c_uint32 * 30)(2, 4, 4, 1)
attempt(lambda: sc(321, 0, ctypes.byref(attr), 120))`,
    ),
    probe(
      'perf-event-open',
      'perf_event_open on itself (user space only)',
      `attr = (ctypes.c_uint8 * 128)()
ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)  # PERF_TYPE_SOFTWARE, size
flags = ctypes.c_uint64((1 << 5) | (1 << 6))  # exclude_kernel, exclude_hv
ctypes.memmove(ctypes.addressof(attr) + 40, ctypes.byref(flags), 8)
attempt(lambda: sc(298, ctypes.byref(attr), 0, -1, -1, 0))`,
    ),
    probe(
      'userfaultfd',
      'userfaultfd (user-mode only)',
      `attempt(lambda: sc(323, 1))`,
    ),
    probe(
      'name-to-handle-at',
      'name_to_handle_at (file handles bypass path checks when reopened)',
      `h = ctypes.create_string_buffer(136); ctypes.memmove(h, (ctypes.c_uint32 * 1)(128), 4)
mnt = ctypes.c_int()
attempt(lambda: sc(303, -100, b"/etc/hostname", h, ctypes.byref(mnt), 0))`,
    ),
  ];
}

export function allProbes(): Probe[] {
  return [...fsProbes(), ...netProbes(), ...seccompProbes()];
}
