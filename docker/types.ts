/**
 * The container primitive every other module uses. dockerode lives behind
 * this interface (docker/engine.ts); callers never import dockerode.
 *
 * A command that fails, times out or is killed is a result value (ExecResult);
 * only Docker faults throw (AuthbenchError with a DOCKER_* code).
 */

import type { BaseMapEntry, BaseMapMode } from './base-map.ts';
import type { BuildHostAccess, BuildHostRecord } from './build-host.ts';
import type { Translation } from './heredoc.ts';
import type { SubstitutionRecord } from './image-facts.ts';

/** Labels on everything authbench creates, so `authbench clean` removes exactly that. */
export const LABELS = {
  managed: 'authbench.managed',
  kind: 'authbench.kind',
  task: 'authbench.task',
  run: 'authbench.run',
  contentHash: 'authbench.content-hash',
  /** JSON list of the base-image substitutions an image descends from (children inherit it), set when one differs from what was asked for, came from a dataset recipe, or the build translated its Dockerfile. */
  lineage: 'authbench.lineage',
  /** JSON list of what the build translated (heredocs, package names), when anything was. */
  translations: 'authbench.translations',
  /** The dataset recipe file a dataset base was built from. */
  recipe: 'authbench.recipe',
  /** On containers and sidecar networks: the host pid of the process that started them (docker/owner.ts). */
  ownerPid: 'authbench.owner-pid',
  /** That process's start time (/proc/<pid>/stat field 22), so a recycled pid is not taken for the owner. */
  ownerStart: 'authbench.owner-start',
  /** The kernel's boot id when it started them: after a reboot no owner is alive. */
  ownerBoot: 'authbench.owner-boot',
  /** The owner's host name: a pid is only looked up on the host (or container) that recorded it. */
  ownerHost: 'authbench.owner-host',
} as const;

export type ResourceKind = 'task-image' | 'sidecar-image' | 'family-image' | 'dataset-base-image' | 'base-image' | 'builder-image' | 'container' | 'harness-volume' | 'network';

export interface ExecOptions {
  /** argv; never a joined shell string. */
  cmd: readonly string[];
  user?: string;
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  /** Written to the process's stdin, which is then closed. */
  stdin?: string | Uint8Array;
  /** Wall-clock limit; on expiry the process tree is killed and timedOut is set. */
  timeoutMs?: number;
  /** Per-stream cap in bytes; output beyond it is dropped and *Truncated set. Default 1 MiB. */
  outputCapBytes?: number;
}

export interface ExecResult {
  /** null when the process was killed by the timeout before reporting an exit code. */
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
}

export interface AttachOptions {
  /** argv of the long-lived process; never a joined shell string. */
  cmd: readonly string[];
  user?: string;
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  /** Every chunk the process writes to stdout, in order (demuxed, cut anywhere). */
  onStdout: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /**
   * Run as a separate exec by close() when the process is still running after
   * its stdin was closed (e.g. `[agent, '--stop-serve', pid]`); read at close time.
   */
  killCommand?: () => readonly string[] | undefined;
  /** How long close() waits for the process to end, per step (default 2 s). */
  closeGraceMs?: number;
}

/** Claiming the container's main process (ContainerSpec.attachMain): an attach without its own process. */
export interface MainAttachOptions extends Omit<AttachOptions, 'cmd' | 'user' | 'workdir' | 'env'> {
  /**
   * The container's stdio outlives the claimed process (docker-init holds it): a stderr line for
   * which this returns an exit code says the process ended.
   */
  endedLine: (line: string) => number | undefined;
}

/** A running exec whose stdin stays open until close(). */
export interface AttachedExec {
  /** Write to the process's stdin (resolves once the socket took the bytes). */
  write(data: Uint8Array): Promise<void>;
  /** Settles when the output stream ends; never rejects. exitCode is null when the daemon no longer knows it. */
  readonly ended: Promise<{ exitCode: number | null }>;
  /** False once the stream ended or close() began. */
  readonly open: boolean;
  /** While a request is in flight, keep Node alive; an idle attach never does (unref is the default). */
  ref(): void;
  unref(): void;
  /** Close stdin, wait for the process to end, run killCommand if it does not, release the socket. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface ContainerSpec {
  image: string;
  /** Merged with authbench's own labels (managed, kind=container). */
  labels?: Readonly<Record<string, string>>;
  name?: string;
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  /** 'none' unless the task needs a local sink, or a named network (a rollout's sidecar network) reached under `aliases`. */
  network?: 'none' | 'bridge' | { name: string; aliases?: readonly string[] };
  /** More named networks, joined before the container starts (Docker 20.10 takes one at creation). Needs a named `network`. */
  extraNetworks?: readonly { name: string; aliases?: readonly string[] }[];
  /**
   * Run the image's own process (a sidecar's server) instead of idling, with
   * ENTRYPOINT / CMD replaced where given.
   */
  process?: { entrypoint?: readonly string[]; command?: readonly string[] };
  /** The Engine API health check (durations in ms), replacing the image's. */
  healthcheck?: ContainerHealthcheck;
  /** e.g. "1": pinning makes strace --seccomp-bpf cheap (environment.md). */
  cpusetCpus?: string;
  memoryBytes?: number;
  /**
   * Docker security options, e.g. `seccomp=unconfined`. The sandbox self-test uses it so
   * its control runs measure the launcher alone, not Docker's default profile.
   */
  securityOpt?: readonly string[];
  /** Extra capabilities (e.g. `SYS_ADMIN`), for the same self-test controls. */
  capAdd?: readonly string[];
  /** Named volumes to mount (the harness's read-only mount). */
  volumes?: readonly VolumeMount[];
  /** The idle main process (default `sleep infinity`); everything else runs through exec. */
  idleCommand?: readonly string[];
  /**
   * The idle command reads its stdin (a session agent below it, ab-launch --idle --serve-stdin):
   * attach to it before the container starts, so nothing it writes is missed, and hand that
   * stream to the first Container.claimMain. Its stdout is then no log's (log driver none).
   */
  attachMain?: boolean;
  /** Most processes the container may hold at once (fork bombs end there). */
  pidsLimit?: number;
  /** CPU quota, in CPUs (e.g. 1.5). */
  cpus?: number;
}

export interface ContainerHealthcheck {
  /** ["CMD", argv...], ["CMD-SHELL", script] or ["NONE"]. */
  test: readonly string[];
  intervalMs?: number;
  timeoutMs?: number;
  retries?: number;
  startPeriodMs?: number;
}

export interface VolumeMount {
  volume: string;
  /** Absolute path inside the container. */
  target: string;
  readOnly: boolean;
}

/** What the daemon says about a container: the facts that tell a broken sandbox from a broken daemon. */
export interface ContainerState {
  /** created, running, paused, restarting, removing, exited, dead; `gone` when the daemon no longer knows it. */
  status: string;
  oomKilled: boolean;
  exitCode: number | null;
  /** Mounts as the daemon sees them (volume name, target, read-write). */
  mounts: readonly { volume: string | undefined; target: string; rw: boolean }[];
  /** The health check's status (starting, healthy, unhealthy) and its last outputs, when the container has one. */
  health?: { status: string; log: readonly string[] };
  /** IPv4 address on each named network the container is on (network name → address). */
  addresses?: Readonly<Record<string, string>>;
}

export interface Container {
  readonly id: string;
  readonly image: string;
  exec(options: ExecOptions): Promise<ExecResult>;
  /**
   * Start a long-lived process with stdin held open (one exec for many
   * requests). Optional so wrappers and fakes need not offer it; callers fall
   * back to exec() when it is absent.
   */
  attach?(options: AttachOptions): Promise<AttachedExec>;
  /**
   * The main process's stream, attached before the container started (ContainerSpec.attachMain):
   * the first call gets it, with what the process wrote so far; later calls, and containers
   * without it, get undefined (start one by attach instead).
   */
  claimMain?(options: MainAttachOptions): AttachedExec | undefined;
  /** Copy a host file or directory into containerDir (created if missing); the basename is kept. */
  copyIn(hostPath: string, containerDir: string): Promise<void>;
  /** Write in-memory files into containerDir: name → content. */
  putFiles(
    containerDir: string,
    files: Readonly<Record<string, string | Uint8Array>>,
    mode?: number,
  ): Promise<void>;
  /**
   * Read one regular file out of the container; undefined when it does not exist. Past
   * maxBytes (default READ_FILE_MAX_BYTES) it throws TOO_LARGE without reading the content.
   */
  readFile(containerPath: string, maxBytes?: number): Promise<Buffer | undefined>;
  /** Copy a file or directory out to hostDir (created if missing). */
  copyOut(containerPath: string, hostDir: string): Promise<void>;
  /**
   * The tar the daemon makes of a file or directory (its basename as the top
   * entry, owners and modes kept); undefined when the path does not exist.
   * Optional like attach: workspace snapshots (the rollback defense) need it. Past maxBytes
   * (default ARCHIVE_MAX_BYTES) the read stops and throws TOO_LARGE.
   */
  archive?(containerPath: string, maxBytes?: number): Promise<Buffer | undefined>;
  /**
   * Whether a regular file at or below the path holds one of the needles, streamed through
   * the daemon's tar (any size); undefined when the path does not exist.
   */
  archiveContains?(containerPath: string, needles: readonly string[]): Promise<boolean | undefined>;
  /** Unpack such a tar into the existing containerDir, overwriting what is there and keeping the entries' owners. */
  extractArchive?(containerDir: string, tar: Uint8Array): Promise<void>;
  /** The daemon's view of the container (optional so fakes need not offer it). */
  state?(): Promise<ContainerState>;
  /**
   * The host directory holding what the container wrote (overlay2's upper dir), as the daemon
   * names it; undefined for other storage drivers. Whether this process may read it is the
   * caller's to find out (a local engine, and root: the daemon's data root is root's).
   */
  writableLayerDir?(): Promise<string | undefined>;
  /** The daemon's own measure of what the container wrote (`SizeRw`: apparent bytes, hard links once). */
  writableLayerBytes?(): Promise<number>;
  /**
   * The volumes the container can write besides its layer (an image's `VOLUME` gets an anonymous
   * one): where each is mounted, and its directory on the daemon's host when the local driver keeps
   * it there. The layer's measures (upper dir, SizeRw) do not see them.
   */
  writableVolumes?(): Promise<WritableVolume[]>;
  /**
   * Signal one of the container's processes, named by its pid in the container's namespace, from
   * this host, starting nothing in the container (so a container whose pids limit is spent still
   * takes it). True once sent; false when this host cannot: a remote engine, no permission, no such
   * process, not cgroup v2.
   */
  signalFromHost?(pidInContainer: number, signal: NodeJS.Signals): Promise<boolean>;
  /** Force-remove; safe to call twice. */
  remove(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface BuildProgress {
  (line: string): void;
}

export interface BuildRequest {
  /** Repository part of the tag, e.g. `authbench/task-hello`; the tag is the content hash. */
  repository: string;
  kind: Exclude<ResourceKind, 'container'>;
  contextDir: string;
  /** Dockerfile path relative to contextDir (default `Dockerfile`). */
  dockerfile?: string;
  buildArgs?: Readonly<Record<string, string>>;
  /** Extra labels (authbench.managed / kind / content-hash are always added). */
  labels?: Readonly<Record<string, string>>;
  taskId?: string;
  onProgress?: BuildProgress;
  /** CA certificates and proxies for the RUN steps only: not hashed, not kept in the image (docker/build-host.ts). */
  hostAccess?: BuildHostAccess;
  /** FROM substitution; default: the map file ($AUTHBENCH_BASE_MAP, else docker/base-map.json) in its mode. */
  baseMap?: {
    /** Checked before the file's entries (e.g. from `--base-map PATTERN=IMAGE`). */
    extraEntries?: readonly BaseMapEntry[];
    mode?: BaseMapMode;
    /** A map file instead of $AUTHBENCH_BASE_MAP / the default. */
    file?: string;
  };
}

export interface BuildResult {
  /** `<repository>:<hash>` */
  tag: string;
  imageId: string;
  /** Hash of context + Dockerfile (after FROM substitution) + args + resolved base image ids. */
  contentHash: string;
  /** false when an image with this content hash already existed and `docker build` was not called. */
  built: boolean;
  /** FROM substitutions applied (original → substitute), with how and where the substitute differs. */
  substitutions: readonly SubstitutionRecord[];
  /** Substitutions the images this one starts from were built with (their lineage). */
  inherited?: readonly SubstitutionRecord[];
  /** What was rewritten before building: heredocs, apt names, pip installs served by Debian. */
  translations?: readonly Translation[];
  /** Base images this build needed and built or found up to date: dataset recipes, offline bases. */
  bases?: readonly BaseBuildRecord[];
  /** What `docker build` got from the host (names, never values); absent on a cache hit or when nothing was given. */
  hostAccess?: BuildHostRecord;
}

export interface BaseBuildRecord {
  /** The tag built or reused. */
  image: string;
  /** `docker/bases/<family>/plain.Dockerfile` (relative to its dataset root), or an offline base recipe name. */
  recipe: string;
  built: boolean;
  substitutions: readonly SubstitutionRecord[];
  translations: readonly Translation[];
}

export interface ImageInfo {
  id: string;
  labels: Readonly<Record<string, string>>;
  createdAt: string;
  /** The image config's ENV (`K=V` strings), when the daemon reports it. */
  env?: readonly string[];
  /** The image config's SHELL, when it sets one (RUN steps of images built on it use it). */
  shell?: readonly string[];
}

/** A writable volume mount of a container (Container.writableVolumes). */
export interface WritableVolume {
  /** Where the container sees it. */
  target: string;
  /** Its directory on the daemon's host (the local driver's `_data`); absent for another driver. */
  dir?: string;
}

/** What removeOrphans removed. */
export interface OrphanRemoval {
  containers: number;
  networks: number;
  /** What the daemon would not remove, even when asked twice (the run goes on without it). */
  left?: { id: string; message: string }[];
}

/** What listOrphans found: container ids and network names. */
export interface OrphanList {
  containers: string[];
  networks: string[];
}

/** The Docker engine as authbench uses it. Implemented over dockerode in docker/engine.ts. */
export interface Engine {
  /** Where we connected (socket path or URL), for error messages. */
  readonly endpoint: string;
  ping(): Promise<void>;
  /** Create and start a container that idles (so commands run through exec). */
  startContainer(spec: ContainerSpec): Promise<Container>;
  buildImage(request: BuildRequest): Promise<BuildResult>;
  imageInfo(ref: string): Promise<ImageInfo | undefined>;
  /** Whether a named volume exists. */
  volumeExists(name: string): Promise<boolean>;
  /** Create a named volume carrying authbench's labels (kind, plus `labels`). */
  createVolume(name: string, kind: ResourceKind, labels?: Readonly<Record<string, string>>): Promise<void>;
  /** Remove a named volume; absent is fine. */
  removeVolume(name: string): Promise<void>;
  /** Create an internal network (no route outside the host's containers on it) carrying authbench's labels. Optional so fakes need not offer it. */
  createNetwork?(name: string, labels?: Readonly<Record<string, string>>): Promise<void>;
  /** Remove a network; absent is fine. */
  removeNetwork?(name: string): Promise<void>;
  /**
   * Commit a container's filesystem (not its processes, mounts or tmpfs) as a new image carrying
   * `labels`, tagged `<repository>:<first 16 hex of a fresh id>` so `authbench clean` owns what a
   * crash leaves; returns the tag. Optional so fakes need not offer it (counterfactual runs).
   */
  commitContainer?(containerId: string, repository: string, labels?: Readonly<Record<string, string>>): Promise<string>;
  /** Remove an image by tag or id; absent is fine. Optional like commitContainer. */
  removeImage?(ref: string): Promise<void>;
  /**
   * Remove the containers and sidecar networks labelled with this run id whose owning process is
   * gone (a killed earlier run of the same job). Optional so fakes need not offer it.
   */
  removeOrphans?(runId: string): Promise<OrphanRemoval>;
  /**
   * What any other run killed on this host left (containers and sidecar networks whose owner is
   * gone), listed, not removed: a concurrent run's own next start or `clean --containers` does that.
   * Optional so fakes need not offer it.
   */
  listOrphans?(): Promise<OrphanList>;
  /** Counters for tests and the demo (e.g. zero `docker build` calls on a warm rebuild). */
  readonly stats: { buildCalls: number; cacheHits: number };
}
