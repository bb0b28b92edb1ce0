import { describe, expect, it } from 'vitest';
import { TRACE_EVENT_SCHEMA_VERSION, type TraceEvent } from '../trace/index.ts';
import { compareTraces, goldRelevant } from './agreement.ts';

const v = TRACE_EVENT_SCHEMA_VERSION;
const file = (pid: number, op: 'read' | 'write' | 'access' | 'unlink', path: string, result = 3, errno?: string): TraceEvent => ({
  kind: 'file', schema_version: v, pid, ts: pid / 10, syscall: 'openat', result, denied: errno === 'EACCES', op, path, ...(errno === undefined ? {} : { errno }),
});
const exec = (pid: number, path: string, result = 0): TraceEvent => ({ kind: 'exec', schema_version: v, pid, ts: 0, syscall: 'execve', result, denied: false, path, argv: [path], cwd: '/app' });

describe('compareTraces', () => {
  it('ignores pids, timestamps, order and events gold never reads', () => {
    const a = [exec(1, '/usr/bin/cat'), file(1, 'read', '/app/a'), file(1, 'access', '/etc/ld.so.preload', -1, 'ENOENT'), file(1, 'read', '/lib/x.so', -1, 'ENOENT')];
    const b = [file(77, 'read', '/app/a'), exec(77, '/usr/bin/cat')];
    expect(compareTraces(a, b)).toEqual({ rate: 1, matched: 2, totalA: 2, totalB: 2, differences: [] });
  });

  it('counts repeated events as a multiset and lists every difference with both counts', () => {
    const a = [file(1, 'read', '/app/a'), file(1, 'read', '/app/a'), file(1, 'unlink', '/app/b', 0)];
    const b = [file(2, 'read', '/app/a'), file(2, 'unlink', '/app/c', 0), file(2, 'write', '/app/d', -1, 'EACCES')];
    const r = compareTraces(a, b);
    expect(r.matched).toBe(1);
    expect(r.rate).toBeCloseTo(1 / 5);
    expect(r.differences.map((d) => [d.key, d.a, d.b])).toEqual([
      ['file read /app/a   ok', 2, 1],
      ['file unlink /app/b   ok', 1, 0],
      ['file unlink /app/c   ok', 0, 1],
      ['file write /app/d   EACCES', 0, 1],
    ]);
  });

  it('keeps denials (derive lists them) and drops failed probes', () => {
    expect(goldRelevant(file(1, 'write', '/etc/shadow', -1, 'EACCES'))).toBe('file write /etc/shadow   EACCES');
    expect(goldRelevant(file(1, 'read', '/nope', -1, 'ENOENT'))).toBeUndefined();
    expect(goldRelevant(exec(1, '/usr/local/bin/x', -1))).toBeUndefined();
  });

  it("tells a read through a symlink by its real_path (gold reads the target)", () => {
    const through = (real?: string): TraceEvent => ({ ...file(1, 'read', '/tmp/x/logs/app.log'), ...(real === undefined ? {} : { real_path: real }) });
    expect(goldRelevant(through('/app/logs/app.log'))).toBe('file read /tmp/x/logs/app.log  /app/logs/app.log ok');
    expect(compareTraces([through('/app/logs/app.log')], [through()]).rate).toBe(0);
  });

  it('counts an IP socket (gold: network.ip_sockets), not a unix one', () => {
    const socket = (family: 'inet' | 'unix', result = 3): TraceEvent => ({ kind: 'network', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid: 1, ts: 0, syscall: 'socket', op: 'socket', family, domain: family === 'inet' ? 'AF_INET' : 'AF_UNIX', result, denied: false });
    expect(goldRelevant(socket('inet'))).toBe('network socket inet ok');
    expect(goldRelevant(socket('unix'))).toBeUndefined();
  });
});
