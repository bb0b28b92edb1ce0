import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { resolveTracer, straceVersionOf, tracerProvenance } from './tracer.ts';

const available = { available: true, backend: 'bpftrace', cgroup2Mount: '/sys/fs/cgroup', version: 'bpftrace v0.17.0' } as const;
const availableNative = { available: true, backend: 'native', cgroup2Mount: '/sys/fs/cgroup' } as const;
const native = { path: '/cache/ebpf/abc/ab-ebpf', contentHash: '0123456789abcdef0123' };
const unavailable = { available: false, reason: 'not root: loading BPF programs needs CAP_BPF and CAP_PERFMON (run as root)' } as const;

describe('resolveTracer', () => {
  it('strace needs no probe', () => {
    expect(resolveTracer('strace', undefined, false)).toEqual({ kind: 'strace' });
  });

  it('eBPF where it is available, with the version number alone', () => {
    expect(resolveTracer('ebpf', available, false)).toEqual({ kind: 'ebpf', backend: 'bpftrace', cgroup2Mount: '/sys/fs/cgroup', version: '0.17.0' });
  });

  it('native eBPF with its binary, versioned by its build', () => {
    expect(resolveTracer('ebpf', availableNative, false, native)).toEqual({
      kind: 'ebpf',
      backend: 'native',
      cgroup2Mount: '/sys/fs/cgroup',
      version: '0123456789abcdef',
      abEbpf: '/cache/ebpf/abc/ab-ebpf',
    });
    expect(() => resolveTracer('ebpf', availableNative, false)).toThrow(/binary/);
  });

  it('refuses eBPF where it is unavailable, with the probe\'s reason and the way out', () => {
    let error: unknown;
    try {
      resolveTracer('ebpf', unavailable, false);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).code).toBe('TRACER_UNAVAILABLE');
    expect((error as AuthbenchError).message).toContain('not root');
    expect((error as AuthbenchError).hint).toContain('--tracer-fallback');
  });

  it('falls back to strace when allowed, saying why', () => {
    expect(resolveTracer('ebpf', unavailable, true)).toEqual({ kind: 'strace', fallback: `eBPF unavailable: ${unavailable.reason}` });
  });
});

describe('tracerProvenance', () => {
  it('names the tracer, its version and a fallback', () => {
    expect(tracerProvenance({ kind: 'strace' }, '6.1')).toEqual({ tracer: 'strace', strace_version: '6.1' });
    expect(tracerProvenance({ kind: 'strace' }, undefined)).toEqual({ tracer: 'strace' });
    expect(tracerProvenance({ kind: 'strace', fallback: 'eBPF unavailable: no BTF' }, '6.1')).toEqual({
      tracer: 'strace',
      strace_version: '6.1',
      tracer_fallback: 'eBPF unavailable: no BTF',
    });
    expect(tracerProvenance({ kind: 'ebpf', backend: 'bpftrace', cgroup2Mount: '/sys/fs/cgroup', version: '0.17.0' }, '6.1')).toEqual({
      tracer: 'ebpf',
      ebpf_backend: 'bpftrace',
      bpftrace_version: '0.17.0',
    });
    expect(tracerProvenance({ kind: 'ebpf', backend: 'native', cgroup2Mount: '/sys/fs/cgroup', version: '0123456789abcdef', abEbpf: '/x' }, '6.1')).toEqual({
      tracer: 'ebpf',
      ebpf_backend: 'native',
      ab_ebpf_version: '0123456789abcdef',
    });
  });
});

describe('straceVersionOf', () => {
  it.each([
    ['strace -- version 6.1\nCopyright (c) 1991-2022 The strace developers <https://strace.io>.\n', '6.1'],
    ['strace -- version 5.10\n', '5.10'],
    ['some other strace\n', 'some other strace'],
    ['', undefined],
  ])('%j → %s', (output, version) => {
    expect(straceVersionOf(output)).toBe(version);
  });
});
