import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import { cgroup2MountOf, judgeEbpf, kernelVersion, requireEbpf, type EbpfFacts } from './probe.ts';
import { cgroupCandidates } from './run.ts';

const ok: EbpfFacts = { uid: 0, bpftraceVersion: 'bpftrace v0.17.0\n', tracefs: true, btf: true, cgroup2Mount: '/sys/fs/cgroup/unified' };

describe('judgeEbpf', () => {
  it('accepts a root host with bpftrace 0.17, tracefs, BTF and cgroup v2 for bpftrace', () => {
    expect(judgeEbpf(ok, 'bpftrace')).toEqual({ available: true, backend: 'bpftrace', cgroup2Mount: '/sys/fs/cgroup/unified', version: 'bpftrace v0.17.0' });
  });

  it('accepts the native backend (the default) without bpftrace', () => {
    expect(judgeEbpf({ ...ok, bpftraceVersion: undefined })).toEqual({ available: true, backend: 'native', cgroup2Mount: '/sys/fs/cgroup/unified' });
    expect(judgeEbpf({ ...ok, bpftraceVersion: 'bpftrace v0.16.0' }, 'native').available).toBe(true);
  });

  it('refuses the native backend on a kernel older than 5.15, and reads a release string', () => {
    expect(judgeEbpf({ ...ok, kernelRelease: '5.10.0-28-amd64' })).toEqual({ available: false, reason: expect.stringMatching(/kernel 5\.10\.0-28-amd64 is older than 5\.15/) as unknown });
    expect(judgeEbpf({ ...ok, kernelRelease: '5.15.0' }).available).toBe(true);
    expect(judgeEbpf({ ...ok, kernelRelease: '6.18.44-fc-v1045' }).available).toBe(true);
    expect(judgeEbpf({ ...ok, kernelRelease: '5.10.0' }, 'bpftrace').available).toBe(true);
    expect(kernelVersion('6.1.0-17-cloud-amd64')).toEqual([6, 1]);
    expect(kernelVersion('weird')).toBeUndefined();
  });

  const both = ['native', 'bpftrace'] as const;
  it.each<[string, Partial<EbpfFacts>, RegExp, readonly ('native' | 'bpftrace')[]]>([
    ['non-root', { uid: 1000 }, /not root/, both],
    ['no bpftrace', { bpftraceVersion: undefined }, /not installed/, ['bpftrace']],
    ['old bpftrace', { bpftraceVersion: 'bpftrace v0.16.0' }, /older than 0\.17/, ['bpftrace']],
    ['no tracefs', { tracefs: false }, /tracefs/, both],
    ['no BTF', { btf: false }, /BTF/, both],
    ['no cgroup v2', { cgroup2Mount: undefined }, /cgroup v2/, both],
    ['Docker Desktop', { engine: { operatingSystem: 'Docker Desktop' } }, /VM/, both],
    ['rootless Docker', { engine: { securityOptions: ['name=seccomp,profile=default', 'name=rootless'] } }, /rootless/, both],
    ['a remote engine', { engine: { host: 'ssh://me@build-1' } }, /remote/, both],
  ])('refuses %s with a reason (for the backends that need it)', (_name, patch, reason, refusing) => {
    for (const backend of both) {
      const v = judgeEbpf({ ...ok, ...patch }, backend);
      expect(v.available, backend).toBe(!refusing.includes(backend));
      if (!v.available) expect(v.reason).toMatch(reason);
    }
  });

  it('requireEbpf throws TRACER_UNAVAILABLE with the reason', () => {
    expect(() => requireEbpf({ ...ok, btf: false })).toThrow(AuthbenchError);
    try {
      requireEbpf({ ...ok, btf: false });
    } catch (e) {
      expect((e as AuthbenchError).code).toBe('TRACER_UNAVAILABLE');
      expect((e as AuthbenchError).message).toMatch(/BTF/);
    }
  });
});

describe('cgroup lookup', () => {
  it('finds the cgroup2 mount in mountinfo (hybrid host: the unified one)', () => {
    const mountinfo = [
      '30 24 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755',
      '31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw',
      '32 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu',
    ].join('\n');
    expect(cgroup2MountOf(mountinfo)).toBe('/sys/fs/cgroup/unified');
    expect(cgroup2MountOf('32 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu')).toBeUndefined();
  });

  it('looks for both the cgroupfs and the systemd driver layouts', () => {
    const id = 'a'.repeat(64);
    expect(cgroupCandidates('/sys/fs/cgroup', id)).toEqual([`/sys/fs/cgroup/docker/${id}`, `/sys/fs/cgroup/system.slice/docker-${id}.scope`]);
    expect(() => cgroupCandidates('/sys/fs/cgroup', '../../etc')).toThrow(/container id/);
  });
});
