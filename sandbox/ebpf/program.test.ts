import { describe, expect, it } from 'vitest';
import { buildProgram } from './program.ts';
import { EBPF_SYSCALLS } from './syscalls.ts';

const base = { cgroupId: 685868n, nonce: 'abcdef123456', readyPid: 4242, readyPath: '/tmp/authbench-ebpf-ready-abcdef123456' };

describe('buildProgram', () => {
  const program = buildProgram(base);

  it('filters every syscall probe, entry and return, on the container cgroup', () => {
    for (const name of Object.keys(EBPF_SYSCALLS)) {
      expect(program).toContain(`tracepoint:syscalls:sys_enter_${name} /cgroup == 685868/`);
      expect(program).toContain(`tracepoint:syscalls:sys_exit_${name} /cgroup == 685868/`);
    }
    expect(program).toContain('tracepoint:sched:sched_process_fork /cgroup == 685868/');
    // Only the readiness probe is not filtered on the cgroup, and it is filtered on our pid and path.
    expect(program).toContain('sys_enter_openat /pid == 4242/');
    expect(program).toContain(`str(args->filename) == "${base.readyPath}"`);
  });

  it('writes the separators as escapes and starts every record with the nonce', () => {
    expect(program).not.toMatch(/[\x1e\x1f]/);
    const printfs = program.match(/printf\("[^"]*"/g) ?? [];
    expect(printfs.length).toBeGreaterThan(Object.keys(EBPF_SYSCALLS).length * 2);
    for (const p of printfs) expect(p.startsWith('printf("\\x1eabcdef123456\\x1f')).toBe(true);
    for (const p of printfs) expect(p.endsWith('\\x1f\\n"')).toBe(true);
  });

  it('prints at most one string per printf (two overflow the BPF stack)', () => {
    for (const p of program.match(/printf\([^;]*\);/g) ?? []) expect((p.match(/str\(/g) ?? []).length).toBeLessThanOrEqual(1);
  });

  it('re-reads at return a path the entry read as "" (a page not faulted in yet), except for exec', () => {
    const exit = (name: string): string => {
      const start = program.indexOf(`sys_exit_${name} `);
      return program.slice(start, program.indexOf('\n\n', start));
    };
    expect(program).toContain('if (str(args->filename) == "") { @str1[tid] = (uint64)args->filename; }');
    expect(exit('openat')).toContain('if (@str1[tid]) {');
    expect(exit('openat')).toContain('str(uptr(@str1[tid]))');
    // Both names of a rename, each under its own argument index.
    expect(exit('renameat2')).toContain('@str1[tid]');
    expect(exit('renameat2')).toContain('@str3[tid]');
    // Printed before the return record, so the parser has it when it completes the call.
    expect(exit('openat').indexOf('@str1[tid]')).toBeLessThan(exit('openat').indexOf('\\x1fR\\x1f'));
    expect(exit('execve')).not.toContain('@str');
    expect(program).toMatch(/END \{[^}]*clear\(@str1\);/);
  });

  it.each([
    [{ nonce: 'short' }, /nonce/],
    [{ nonce: 'has space 123' }, /nonce/],
    [{ readyPath: '/tmp/x"; system("id' }, /ready path/],
    [{ cgroupId: 1n }, /root cgroup/],
    [{ readyPid: 0 }, /ready pid/],
  ])('refuses %o', (patch, message) => {
    expect(() => buildProgram({ ...base, ...patch })).toThrow(message);
  });
});
