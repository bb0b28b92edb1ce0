/**
 * Can this host trace a container with eBPF, with a given backend? The facts
 * are gathered once (gatherEbpfFacts: files, uid, `bpftrace --version`); the
 * verdict is pure (judgeEbpf), so every refusal reason is table-tested.
 * Callers refuse with requireEbpf's error, or fall back to strace and record
 * the reason. The native backend (ab-ebpf, built in Docker) needs no bpftrace;
 * both need root, tracefs's syscall events, BTF (bpftrace for its types,
 * ab-ebpf for its CO-RE read of the O_TMPFILE inode), cgroup v2 and an engine
 * whose containers run on this kernel.
 */
import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { release } from 'node:os';
import { AuthbenchError } from '../../core/index.ts';
import { DockerEngine, type Engine } from '../../docker/index.ts';
import type { EbpfBackend } from './run.ts';

export interface EbpfFacts {
  uid: number;
  /** `bpftrace --version` output; undefined when it could not be run. */
  bpftraceVersion: string | undefined;
  /** /sys/kernel/tracing (or the debugfs one) has the syscall tracepoints. */
  tracefs: boolean;
  /** /sys/kernel/btf/vmlinux exists. */
  btf: boolean;
  /** Where cgroup v2 is mounted (the unified hierarchy of a hybrid host included); undefined: none. */
  cgroup2Mount: string | undefined;
  /** The kernel's release (`uname -r`, os.release()); undefined: not known (facts written before). */
  kernelRelease?: string;
  /** The Docker engine as it describes itself (`docker info`), when the caller asked it. */
  engine?: { operatingSystem?: string; securityOptions?: readonly string[]; host?: string };
}

export type EbpfVerdict =
  | {
      available: true;
      backend: EbpfBackend;
      cgroup2Mount: string;
      /** bpftrace's version (the bpftrace backend); the native one's is its build's content hash, known once built. */
      version?: string;
    }
  | { available: false; reason: string };

/** bpftrace 0.17 is the oldest measured (Debian 12): `cgroup` builtin, `%rx`, `uptr`, unroll. */
const MIN_VERSION = [0, 17] as const;
const VERSION_RE = /v?(\d+)\.(\d+)/;

/** The oldest kernel ab-ebpf loads on: bpf_get_attach_cookie for tracepoints came in 5.15. */
const NATIVE_MIN_KERNEL = [5, 15] as const;

/** `6.18.44-fc-v1045` → [6, 18]; undefined for a release that does not start with major.minor. Pure. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release.trim());
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}

export function judgeEbpf(f: EbpfFacts, backend: EbpfBackend = 'native'): EbpfVerdict {
  const refuse = (reason: string): EbpfVerdict => ({ available: false, reason });
  if (f.uid !== 0) return refuse('not root: loading BPF programs needs CAP_BPF and CAP_PERFMON (run as root)');
  if (backend === 'bpftrace') {
    if (f.bpftraceVersion === undefined) return refuse('bpftrace is not installed (apt-get install bpftrace; scripts/setup-host.sh does)');
    const m = VERSION_RE.exec(f.bpftraceVersion);
    const major = Number(m?.[1] ?? -1);
    const minor = Number(m?.[2] ?? -1);
    if (m === null || major < MIN_VERSION[0] || (major === MIN_VERSION[0] && minor < MIN_VERSION[1])) {
      return refuse(`bpftrace ${f.bpftraceVersion.trim()} is older than ${MIN_VERSION.join('.')}`);
    }
  }
  if (!f.tracefs) return refuse('tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing; scripts/setup-host.sh does)');
  if (!f.btf) return refuse('the kernel has no BTF (/sys/kernel/btf/vmlinux is missing)');
  if (f.cgroup2Mount === undefined) return refuse('no cgroup v2 hierarchy is mounted: containers cannot be told apart by cgroup id');
  const os = f.engine?.operatingSystem ?? '';
  if (/docker desktop/i.test(os)) return refuse(`the Docker engine runs in a VM (${os}): its containers are not this kernel's processes`);
  if ((f.engine?.securityOptions ?? []).some((o) => /rootless/.test(o))) return refuse('the Docker engine is rootless: its containers live in a user namespace this tracer does not map');
  const host = f.engine?.host;
  if (host !== undefined && !host.startsWith('unix://') && host !== '') return refuse(`the Docker engine is remote (${host}): its containers run on another kernel`);
  if (backend === 'native') {
    const release = f.kernelRelease === undefined ? undefined : kernelVersion(f.kernelRelease);
    if (release !== undefined && (release[0] < NATIVE_MIN_KERNEL[0] || (release[0] === NATIVE_MIN_KERNEL[0] && release[1] < NATIVE_MIN_KERNEL[1]))) {
      return refuse(`kernel ${f.kernelRelease ?? ''} is older than ${NATIVE_MIN_KERNEL.join('.')}: ab-ebpf needs BPF attach cookies (5.15) and a ring buffer (5.8)`);
    }
    return { available: true, backend, cgroup2Mount: f.cgroup2Mount };
  }
  return { available: true, backend, cgroup2Mount: f.cgroup2Mount, version: f.bpftraceVersion?.trim() ?? '' };
}

/** The cgroup2 mount point from /proc/self/mountinfo text (the 5th field of the line whose fs type is cgroup2). Pure. */
export function cgroup2MountOf(mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right?.split(' ')[0] === 'cgroup2') return left?.split(' ')[4];
  }
  return undefined;
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

export async function gatherEbpfFacts(options: { bpftrace?: string; engine?: EbpfFacts['engine'] } = {}): Promise<EbpfFacts> {
  const version = await promisify(execFile)(options.bpftrace ?? 'bpftrace', ['--version'], { timeout: 10_000 }).then(
    (r) => r.stdout,
    () => undefined,
  );
  const tracefs = (await exists('/sys/kernel/tracing/events/syscalls')) || (await exists('/sys/kernel/debug/tracing/events/syscalls'));
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return {
    uid: process.getuid?.() ?? -1,
    bpftraceVersion: version,
    tracefs,
    btf: await exists('/sys/kernel/btf/vmlinux'),
    cgroup2Mount: cgroup2MountOf(mountinfo),
    kernelRelease: release(),
    ...(options.engine === undefined ? {} : { engine: options.engine }),
  };
}

/** The verdict, or the error to refuse with. */
export function requireEbpf(facts: EbpfFacts, backend: EbpfBackend = 'native'): Extract<EbpfVerdict, { available: true }> {
  const v = judgeEbpf(facts, backend);
  if (!v.available) {
    throw new AuthbenchError('TRACER_UNAVAILABLE', `the eBPF tracer is unavailable: ${v.reason}`, { hint: 'trace with strace (the default) instead' });
  }
  return v;
}

/** What the Docker engine says of itself that decides whether its containers are this kernel's processes. */
export async function engineFacts(engine: Engine): Promise<NonNullable<EbpfFacts['engine']>> {
  // Only a real engine can be asked; fakes (tests) describe a local one.
  if (!(engine instanceof DockerEngine)) return { host: engine.endpoint };
  const info = (await engine.docker.info()) as { OperatingSystem?: string; SecurityOptions?: string[] };
  return {
    host: engine.endpoint,
    ...(info.OperatingSystem === undefined ? {} : { operatingSystem: info.OperatingSystem }),
    ...(info.SecurityOptions === undefined ? {} : { securityOptions: info.SecurityOptions }),
  };
}
