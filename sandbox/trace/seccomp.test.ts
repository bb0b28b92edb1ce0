import { describe, expect, it } from 'vitest';
import { renderEvent, TraceEventSchema } from './events.ts';
import { seccompEvent } from './seccomp.ts';

const at = (nr: number, ...args: bigint[]) => seccompEvent({ time: 1700000000.123456, pid: 42, nr, args: [...args, 0n, 0n, 0n, 0n, 0n, 0n].slice(0, 6) });

describe('seccompEvent', () => {
  it.each([
    [at(41, 17n, 3n), 'socket', 'AF_PACKET SOCK_RAW', undefined],
    [at(56, 0x00800000n | 17n), 'clone', 'CLONE_UNTRACED', undefined],
    [at(101, 16n, 8n), 'ptrace', 'PTRACE_ATTACH pid 8', 8],
    [at(101, 0n), 'ptrace', 'PTRACE_TRACEME pid 0', undefined],
    [at(302, 7n, 7n, 0x7ffdn), 'prlimit64', 'pid 7', 7],
    [at(141, 0n, 9n, 19n), 'setpriority', 'which 0 who 9', 9],
    [at(141, 2n, 0n, 19n), 'setpriority', 'which 2 who 0', undefined],
    [at(268, 0xffffff9cn, 0x1000n, 0o2770n), 'fchmodat', 'mode 02770', undefined],
    [at(425, 4n), 'io_uring_setup', 'always denied', undefined],
    [at(999), 'syscall_999', 'always denied', undefined],
  ])('%#: decodes %s', (event, syscall, detail, target) => {
    expect(TraceEventSchema.parse(event)).toEqual(event);
    expect([event.syscall, event.detail, event.target]).toEqual([syscall, detail, target]);
    expect(event).toMatchObject({ kind: 'seccomp', pid: 42, ts: 1700000000.123456, result: -1, errno: 'EPERM', denied: true });
  });

  it('renders as a denial', () => {
    expect(renderEvent(at(41, 2n, 1n))).toBe('[42] socket AF_INET SOCK_STREAM -> DENIED EPERM (seccomp)');
  });
});
