import { describe, expect, it } from 'vitest';
import { straceArgv, TRACED_SYSCALLS } from './argv.ts';
import { HANDLERS } from './syscalls.ts';

describe('straceArgv', () => {
  it('builds the strace command with the command after --', () => {
    const argv = straceArgv({ outputPath: '/tmp/t.strace', cmd: ['sh', '-c', 'echo "a b"'] });
    expect(argv.slice(0, 9)).toEqual(['strace', '-f', '--seccomp-bpf', '-y', '-qq', '-ttt', '-e', 'signal=none', '-e']);
    expect(argv[9]).toMatch(/^trace=/);
    expect(argv.slice(10)).toEqual(['-s', '4096', '-o', '/tmp/t.strace', '--', 'sh', '-c', 'echo "a b"']);
  });

  it('starts strace the way it is told (the harness passes its own copy and loader)', () => {
    const argv = straceArgv({ outputPath: '/proc/self/fd/3', cmd: ['true'], strace: ['/h/lib/ld.so', '--library-path', '/h/lib', '/h/bin/strace'] });
    expect(argv.slice(0, 5)).toEqual(['/h/lib/ld.so', '--library-path', '/h/lib', '/h/bin/strace', '-f']);
    expect(argv.at(-1)).toBe('true');
  });

  it.each([
    [{ outputPath: '/o', cmd: [] }, /empty command/],
    [{ outputPath: '/o', cmd: ['x'], strace: [] }, /empty strace/],
  ])('rejects %j', (options, message) => {
    expect(() => straceArgv(options)).toThrow(message);
  });

  it('traces the signals a command sends (a refused one is evidence of tampering)', () => {
    const traced = straceArgv({ outputPath: '/o', cmd: ['x'] })[9]?.slice('trace='.length).split(',') ?? [];
    for (const name of ['kill', 'tkill', 'tgkill', '?pidfd_send_signal']) expect(traced).toContain(name);
  });

  it('traces the syscalls every event kind needs', () => {
    const traced = straceArgv({ outputPath: '/o', cmd: ['x'] })[9]?.slice('trace='.length).split(',') ?? [];
    for (const name of ['execve', 'openat', '?openat2', 'renameat', '?renameat2', 'unlinkat', 'clone', '?clone3', 'exit_group', 'chdir', 'fchdir', 'connect', 'socket']) {
      expect(traced).toContain(name);
    }
    expect(traced.some((s) => /stat/.test(s))).toBe(false);
  });

  it('has a parser handler for every traced syscall, and traces every handled one', () => {
    const traced = TRACED_SYSCALLS.map((s) => s.replace(/^\?/, '')).sort();
    expect(Object.keys(HANDLERS).sort()).toEqual(traced);
  });
});
