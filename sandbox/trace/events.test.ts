import { describe, expect, it } from 'vitest';
import { FILE_OPS, isWriteOp, renderEvent, TraceEventSchema, type TraceEvent } from './events.ts';

const base = { schema_version: 1, pid: 7, ts: 1700000000.5 } as const;

describe('renderEvent', () => {
  it.each<[TraceEvent, string]>([
    [{ kind: 'exec', ...base, syscall: 'execve', result: 0, denied: false, path: '/usr/bin/ls', argv: ['ls', '-l'], cwd: '/app' }, '[7] exec /usr/bin/ls ["ls","-l"] -> ok'],
    [
      { kind: 'file', ...base, syscall: 'openat', result: -1, errno: 'EACCES', denied: true, op: 'read', path: '/app/secret' },
      '[7] read /app/secret -> DENIED EACCES',
    ],
    [
      { kind: 'file', ...base, syscall: 'rename', result: 0, denied: false, op: 'rename', path: '/app/a', path2: '/app/b' },
      '[7] rename /app/a -> /app/b -> ok',
    ],
    [
      { kind: 'file', ...base, syscall: 'openat', result: 3, denied: false, op: 'write', path: '/app/log', may_create: true },
      '[7] write /app/log (may create) -> ok',
    ],
    [
      { kind: 'network', ...base, syscall: 'connect', result: -1, errno: 'ECONNREFUSED', denied: false, op: 'connect', family: 'inet', domain: 'AF_INET', address: '127.0.0.1', port: 9 },
      '[7] connect inet 127.0.0.1:9 -> ECONNREFUSED',
    ],
    [
      { kind: 'network', ...base, syscall: 'socket', result: 3, denied: false, op: 'socket', family: 'inet6', domain: 'AF_INET6', socket_type: 'SOCK_DGRAM' },
      '[7] socket AF_INET6 SOCK_DGRAM -> ok',
    ],
    [{ kind: 'process', ...base, op: 'fork', syscall: 'clone', result: 8, child: 8 }, '[7] fork -> 8'],
    [{ kind: 'process', ...base, op: 'fork', syscall: 'clone3', result: 8, child: 8, thread: true }, '[7] thread -> 8'],
    [{ kind: 'process', ...base, op: 'fork', syscall: 'fork', result: -1, errno: 'EAGAIN' }, '[7] fork failed EAGAIN'],
    [{ kind: 'process', ...base, op: 'exit', exit_code: 2 }, '[7] exit 2'],
    [{ kind: 'process', ...base, op: 'exit', signal: 'SIGKILL' }, '[7] killed by SIGKILL'],
    [{ kind: 'process', ...base, op: 'signal', signal: 'SIGTERM' }, '[7] signal SIGTERM'],
    [{ kind: 'unparsed', ...base, raw: 'x', reason: 'not a syscall line' }, '[7] unparsed (not a syscall line): x'],
  ])('%#', (event, want) => {
    expect(TraceEventSchema.safeParse(event).error).toBeUndefined();
    expect(renderEvent(event)).toBe(want);
  });
});

describe('TraceEventSchema', () => {
  it('rejects an unknown kind, a wrong version and an unknown op', () => {
    expect(TraceEventSchema.safeParse({ kind: 'mystery', ...base }).success).toBe(false);
    expect(TraceEventSchema.safeParse({ kind: 'process', ...base, schema_version: 2, op: 'exit' }).success).toBe(false);
    expect(TraceEventSchema.safeParse({ kind: 'process', ...base, op: 'teleport' }).success).toBe(false);
  });
});

describe('isWriteOp', () => {
  it('puts every op that changes the filesystem on the write axis, and read, access and memfd off it', () => {
    expect(FILE_OPS.filter((op) => isWriteOp(op))).toEqual(['write', 'create', 'truncate', 'unlink', 'rename', 'mkdir', 'rmdir', 'chmod', 'chown', 'link', 'symlink']);
    expect(isWriteOp('connect')).toBe(false);
    expect(isWriteOp('toString')).toBe(false);
  });
});
