import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import { callSpec, NATIVE_SOURCE_DIR, nativeArgs, parseTracepointFormat, type TracepointField } from './native.ts';
import { ARGV_LIMIT, EBPF_SYSCALLS, MMSG_LIMIT, MMSGHDR_SIZE, type ArgSpec } from './syscalls.ts';

const COMMON = [
  '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
  '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;',
  '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;',
  '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;',
  '',
  '\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;',
];

/** A sys_enter format file as the kernel writes it, for these argument declarations in order. */
function enterFormat(name: string, decls: readonly string[]): string {
  const fields = decls.map((d, i) => `\tfield:${d};\toffset:${16 + 8 * i};\tsize:8;\tsigned:0;`);
  return [`name: sys_enter_${name}`, 'ID: 1', 'format:', ...COMMON, ...fields, '', 'print fmt: "..."'].join('\n');
}

const FORK = [
  'name: sched_process_fork',
  'format:',
  ...COMMON.slice(0, 4),
  '',
  '\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;',
  '\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;',
  '\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;',
  '\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;',
].join('\n');

/** The kernel's declarations of the traced syscalls (x86_64), in argument order. */
const DECLS: Readonly<Record<string, readonly string[]>> = {
  execve: ['const char * filename', 'const char *const * argv', 'const char *const * envp'],
  execveat: ['int fd', 'const char * filename', 'const char *const * argv', 'const char *const * envp', 'int flags'],
  open: ['const char * filename', 'int flags', 'umode_t mode'],
  openat: ['int dfd', 'const char * filename', 'int flags', 'umode_t mode'],
  openat2: ['int dfd', 'const char * filename', 'struct open_how * how', 'size_t usize'],
  sendto: ['int fd', 'void * buff', 'size_t len', 'unsigned int flags', 'struct sockaddr * addr', 'int addr_len'],
  connect: ['int fd', 'struct sockaddr * uservaddr', 'int addrlen'],
  bind: ['int fd', 'struct sockaddr * umyaddr', 'int addrlen'],
  sendmsg: ['int fd', 'struct user_msghdr * msg', 'unsigned int flags'],
  sendmmsg: ['int fd', 'struct mmsghdr * mmsg', 'unsigned int vlen', 'unsigned int flags'],
};

/** Every traced syscall: the declarations above, else the table's own argument names as ints. */
function formats(): Map<string, Map<string, TracepointField>> {
  const out = new Map<string, Map<string, TracepointField>>();
  for (const [name, specs] of Object.entries(EBPF_SYSCALLS) as [string, readonly ArgSpec[]][]) {
    const decls = DECLS[name] ?? specs.map((s) => `${s.kind === 'str' ? 'const char *' : 'int'} ${s.name}`);
    out.set(name, parseTracepointFormat(enterFormat(name, decls)));
  }
  return out;
}

describe('parseTracepointFormat', () => {
  it('reads every field with its type, offset and size', () => {
    const fields = parseTracepointFormat(enterFormat('openat', DECLS.openat ?? []));
    expect(fields.get('filename')).toEqual({ type: 'const char *', offset: 24, size: 8 });
    expect(fields.get('mode')).toEqual({ type: 'umode_t', offset: 40, size: 8 });
    expect(fields.get('__syscall_nr')).toEqual({ type: 'int', offset: 8, size: 4 });
    expect(parseTracepointFormat(FORK).get('child_pid')).toEqual({ type: 'pid_t', offset: 20, size: 4 });
    expect(parseTracepointFormat(FORK).get('parent_comm')).toMatchObject({ offset: 8, size: 4 });
  });
});

describe('callSpec', () => {
  const f = formats();
  it.each([
    // The argv slot for exec, the flags slot for O_TMPFILE, the path slot for the readiness open, d for
    // the opens whose returned fd's resolved path ab-ebpf records.
    ['execve', 'execve:x1:s0'],
    ['execveat', 'execveat:x2:i0,s1,i4'],
    ['openat', 'openat:t2r1d:i0,s1,i2,i3'],
    ['open', 'open:t1d:s0,i1,i2'],
    ['openat2', 'openat2:d:i0,s1,h2'],
    // A sockaddr names its length's slot; arguments the table skips (buff, len) are skipped.
    ['sendto', 'sendto:-:i0,a45'],
    ['connect', 'connect:-:i0,a12'],
    // The msghdr pointer: ab-ebpf reads the destination through it.
    ['sendmsg', 'sendmsg:-:i0,m1'],
    // The message vector and vlen's slots: ab-ebpf reads each message's destination.
    ['sendmmsg', 'sendmmsg:n12:i0,i2'],
    ['renameat2', 'renameat2:-:i0,s1,i2,s3,i4'],
  ])('%s → %s', (name, spec) => {
    expect(callSpec(name, EBPF_SYSCALLS[name as keyof typeof EBPF_SYSCALLS], f.get(name) ?? new Map())).toBe(spec);
  });

  it('refuses a kernel whose tracepoint lacks a field or puts it where no argument is', () => {
    expect(() => callSpec('openat', EBPF_SYSCALLS.openat, parseTracepointFormat(enterFormat('openat', ['int dfd', 'const char * filename'])))).toThrow(AuthbenchError);
    const odd = new Map(f.get('unlink'));
    odd.set('pathname', { type: 'const char *', offset: 12, size: 8 });
    expect(() => callSpec('unlink', EBPF_SYSCALLS.unlink, odd)).toThrow(/pathname/);
  });
});

describe('nativeArgs', () => {
  const base = { cgroupId: { id: 4242n, pidLevel: 1 }, nonce: 'abcdefgh1234', readyPid: 77, readyPath: '/tmp/authbench-ebpf-ready-x', formats: formats() };

  it('passes the cgroup and its pid namespace level, nonce, readiness and one --call per traced syscall', () => {
    const args = nativeArgs(base);
    expect(args.slice(0, 10)).toEqual(['--cgroup-id', '4242', '--pid-level', '1', '--nonce', 'abcdefgh1234', '--ready-pid', '77', '--ready-path', '/tmp/authbench-ebpf-ready-x']);
    const calls = args.slice(10);
    expect(calls.filter((a) => a === '--call')).toHaveLength(Object.keys(EBPF_SYSCALLS).length);
    expect(calls.filter((a) => a !== '--call').map((c) => c.split(':')[0])).toEqual(Object.keys(EBPF_SYSCALLS));
  });

  it('starts a hub with --hub in place of the cgroup', () => {
    const args = nativeArgs({ ...base, cgroupId: 'hub' });
    expect(args.slice(0, 3)).toEqual(['--hub', '--nonce', 'abcdefgh1234']);
    expect(args).not.toContain('--cgroup-id');
    expect(args).not.toContain('--pid-level');
  });

  it('refuses a kernel without a traced syscall', () => {
    const missing = new Map(base.formats);
    missing.delete('creat');
    expect(() => nativeArgs({ ...base, formats: missing })).toThrow(/sys_enter_creat/);
  });
});

describe('limits shared with ab-ebpf.h', () => {
  it('reads as many sendmmsg messages, of the same size, as the BPF side copies', async () => {
    const header = await readFile(join(NATIVE_SOURCE_DIR, 'ab-ebpf.h'), 'utf8');
    const define = (name: string) => Number(new RegExp(`#define ${name} (\\d+)`).exec(header)?.[1]);
    expect(define('AB_MMSG_LIMIT')).toBe(MMSG_LIMIT);
    expect(define('AB_MMSGHDR_SIZE')).toBe(MMSGHDR_SIZE);
    expect(define('AB_ARGV_LIMIT')).toBe(ARGV_LIMIT);
  });
});
