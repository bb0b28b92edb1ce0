/**
 * The native eBPF backend: ab-ebpf (C + libbpf, `native/`), built from
 * source in a builder image like the launcher and cached on the host by the
 * builder's content hash, and the argv that tells it what to trace.
 *
 * The argument table stays syscalls.ts's: this module turns it into ab-ebpf's
 * `--call` specs, with each argument's slot taken from the running kernel's
 * tracepoint format files (`field:int dfd; offset:16; ...`),
 * so neither the C side nor this file repeats a syscall signature. Pure except
 * readTracepointFormats and ensureEbpfTracer.
 */
import { chmod, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthbenchError, ENV, readEnv, writeFileAtomic } from '../../core/index.ts';
import type { BuildProgress, Engine } from '../../docker/index.ts';
import { EBPF_SYSCALLS, type ArgSpec } from './syscalls.ts';

/** ab-ebpf copies strings of up to 4095 bytes (PATH_MAX with its NUL): one that long may have been cut. */
export const NATIVE_STRING_LIMIT = 4096;

/** The directory holding ab-ebpf's sources and its builder Dockerfile. */
export const NATIVE_SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'native');

const BUILDER_REPOSITORY = 'authbench/ebpf-builder';
const BINARY_IN_BUILDER = '/out/ab-ebpf';

/** One field of a tracepoint's format file. */
export interface TracepointField {
  type: string;
  offset: number;
  size: number;
}

const FIELD_RE = /^\s*field:(.+?)\s+([A-Za-z_][A-Za-z0-9_]*)(?:\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);/;

/** A tracepoint `format` file's fields by name. Pure. */
export function parseTracepointFormat(text: string): Map<string, TracepointField> {
  const out = new Map<string, TracepointField>();
  for (const line of text.split('\n')) {
    const m = FIELD_RE.exec(line);
    if (m === null) continue;
    out.set(m[2] ?? '', { type: (m[1] ?? '').trim(), offset: Number(m[3]), size: Number(m[4]) });
  }
  return out;
}

/** The syscall argument slot of a sys_enter field (its args sit at 16 + 8 * slot). */
function slotOf(name: string, fields: ReadonlyMap<string, TracepointField>, field: string): number {
  const f = fields.get(field);
  const slot = f === undefined ? -1 : (f.offset - 16) / 8;
  if (f === undefined || f.size !== 8 || !Number.isInteger(slot) || slot < 0 || slot > 5) {
    throw new AuthbenchError('TRACER_UNAVAILABLE', `the kernel's sys_enter_${name} tracepoint has no usable field ${field}`, {
      details: f === undefined ? [] : [`${f.type} at offset ${f.offset}, size ${f.size}`],
    });
  }
  return slot;
}

const TMPFILE_OPENS: ReadonlySet<string> = new Set(['open', 'openat']);
/** The calls whose returned fd's resolved path ab-ebpf records (a D record: parse.ts's real_path). */
const RESOLVED_OPENS: ReadonlySet<string> = new Set(['open', 'openat', 'openat2', 'creat']);

/** ab-ebpf's `--call` spec for one syscall of the table: `NAME:FLAGS:ARGS` (native/ab-ebpf.c's header). Pure. */
export function callSpec(name: string, specs: readonly ArgSpec[], fields: ReadonlyMap<string, TracepointField>): string {
  const flags: string[] = [];
  if (name === 'execve' || name === 'execveat') flags.push(`x${slotOf(name, fields, 'argv')}`);
  if (TMPFILE_OPENS.has(name)) flags.push(`t${slotOf(name, fields, 'flags')}`);
  if (name === 'openat') flags.push(`r${slotOf(name, fields, 'filename')}`);
  if (name === 'sendmmsg') flags.push(`n${slotOf(name, fields, 'mmsg')}${slotOf(name, fields, 'vlen')}`);
  if (RESOLVED_OPENS.has(name)) flags.push('d');
  const args = specs.map((s) => {
    const slot = slotOf(name, fields, s.name);
    // Ints print as bpftrace's %d prints them (the low 32 bits, signed), whatever their C type.
    if (s.kind === 'int') return `i${slot}`;
    if (s.kind === 'str') return `s${slot}`;
    if (s.kind === 'how_flags') return `h${slot}`;
    if (s.kind === 'msg_name') return `m${slot}`;
    return `a${slot}${slotOf(name, fields, s.kind.sockaddr)}`;
  });
  return `${name}:${flags.length === 0 ? '-' : flags.join('')}:${args.join(',')}`;
}

export interface NativeArgsOptions {
  /**
   * One container's cgroup and its pid namespace's level (event pids are as that namespace
   * numbers them), or `hub`: cgroups added and removed on stdin, each with its level (hub.ts).
   */
  cgroupId: { id: bigint; pidLevel: number } | 'hub';
  nonce: string;
  readyPid: number;
  readyPath: string;
  /** sys_enter_<name> format fields per traced syscall. */
  formats: ReadonlyMap<string, ReadonlyMap<string, TracepointField>>;
}

/** ab-ebpf's argv for one container, or for a hub. Pure. */
export function nativeArgs(options: NativeArgsOptions): string[] {
  const calls = (Object.entries(EBPF_SYSCALLS) as [string, readonly ArgSpec[]][]).flatMap(([name, specs]) => {
    const fields = options.formats.get(name);
    if (fields === undefined) throw new AuthbenchError('TRACER_UNAVAILABLE', `the kernel has no sys_enter_${name} tracepoint`);
    return ['--call', callSpec(name, specs, fields)];
  });
  return [
    ...(options.cgroupId === 'hub' ? ['--hub'] : ['--cgroup-id', options.cgroupId.id.toString(), '--pid-level', String(options.cgroupId.pidLevel)]),
    '--nonce',
    options.nonce,
    '--ready-pid',
    String(options.readyPid),
    '--ready-path',
    options.readyPath,
    ...calls,
  ];
}

const TRACEFS_ROOTS = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];

/** The format files ab-ebpf's argv needs, from the host's tracefs (read once per process). */
let formatsOnce: Promise<Pick<NativeArgsOptions, 'formats'>> | undefined;
export function readTracepointFormats(): Promise<Pick<NativeArgsOptions, 'formats'>> {
  formatsOnce ??= (async () => {
    for (const root of TRACEFS_ROOTS) {
      const formats = new Map<string, ReadonlyMap<string, TracepointField>>();
      for (const name of Object.keys(EBPF_SYSCALLS)) {
        const text = await readFile(join(root, `events/syscalls/sys_enter_${name}/format`), 'utf8').catch(() => undefined);
        if (text !== undefined) formats.set(name, parseTracepointFormat(text));
      }
      if (formats.size > 0) return { formats };
    }
    throw new AuthbenchError('TRACER_UNAVAILABLE', 'no tracefs with the syscalls events', { details: TRACEFS_ROOTS.map((r) => `looked at ${r}`) });
  })();
  formatsOnce.catch(() => {
    formatsOnce = undefined;
  });
  return formatsOnce;
}

export interface NativeTracer {
  /** The static ab-ebpf binary on the host. */
  path: string;
  /** The builder image's content hash: what the gold's provenance records as the native tracer's version. */
  contentHash: string;
}

export interface EnsureEbpfTracerOptions {
  onProgress?: BuildProgress;
  env?: NodeJS.ProcessEnv;
}

function cacheDir(env: NodeJS.ProcessEnv): string {
  return readEnv(ENV.AUTHBENCH_CACHE_DIR, env) ?? join(homedir(), '.cache', 'authbench');
}

/**
 * Build ab-ebpf in its builder image (cached by Docker content hash) and return the static
 * binary's host path, cached under <cache>/ebpf/<content hash>/ so later runs skip the container.
 */
export async function ensureEbpfTracer(engine: Engine, options: EnsureEbpfTracerOptions = {}): Promise<NativeTracer> {
  const build = await engine.buildImage({
    repository: BUILDER_REPOSITORY,
    kind: 'builder-image',
    contextDir: NATIVE_SOURCE_DIR,
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  const path = join(cacheDir(options.env ?? process.env), 'ebpf', build.contentHash, 'ab-ebpf');
  const cached = await readFile(path).catch(() => undefined);
  if (cached !== undefined && cached.length > 0) return { path, contentHash: build.contentHash };
  const container = await engine.startContainer({ image: build.tag, network: 'none' });
  try {
    const binary = await container.readFile(BINARY_IN_BUILDER);
    if (binary === undefined || binary.length === 0) {
      throw new AuthbenchError('TRACER_UNAVAILABLE', `the eBPF tracer builder image ${build.tag} has no ${BINARY_IN_BUILDER}`, {
        hint: 'rebuild it: remove the image and run again',
      });
    }
    await writeFileAtomic(path, binary);
    await chmod(path, 0o755);
    return { path, contentHash: build.contentHash };
  } finally {
    await container.remove();
  }
}
