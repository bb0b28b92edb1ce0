import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import { apiError, dockerMessage, dockerStatus } from './api-error.ts';
import { MainProcessStream } from './attach.ts';
import { buildImage as buildImageWith } from './build.ts';
import { readBuildStream } from './build-stream.ts';
import { DockerContainer } from './container.ts';
import { NONE_NETWORK_FILES, NONE_NETWORK_SYSCTLS, noneNetworkMode, noneNetworkTar, type NoneNetworkFiles } from './none-network.ts';
import { listOrphans, removeRunOrphans } from './orphans.ts';
import { currentOwner, ownerLabels, type ProcessOwner } from './owner.ts';
import type { BuildRequest, BuildResult, Container, ContainerHealthcheck, ContainerSpec, Engine, ImageInfo, OrphanList, OrphanRemoval, ResourceKind } from './types.ts';
import { LABELS } from './types.ts';

const DEFAULT_SOCKET = '/var/run/docker.sock';
const DEFAULT_IDLE: readonly string[] = ['sleep', 'infinity'];
const PING_TIMEOUT_MS = 5_000;

export interface DockerEndpoint {
  /** As shown to the user. */
  endpoint: string;
  options: Dockerode.DockerOptions;
  /** tcp with TLS: where ca.pem, cert.pem and key.pem are read from (as the docker CLI does). */
  tlsCertPath?: string;
}

/**
 * DOCKER_HOST forms we support: a unix socket (with or without scheme), tcp/http(s) and ssh.
 * tcp speaks TLS as the docker CLI does: when DOCKER_TLS_VERIFY is set (non-empty) or the port is
 * 2376, with the certificates under DOCKER_CERT_PATH (default ~/.docker). ssh runs `docker system
 * dial-stdio` on the host (dockerode's ssh2 transport), authenticating through SSH_AUTH_SOCK. Pure.
 */
export function parseDockerHost(value: string | undefined, env: NodeJS.ProcessEnv = process.env): DockerEndpoint {
  if (value === undefined || value === '') {
    return { endpoint: `unix://${DEFAULT_SOCKET}`, options: { socketPath: DEFAULT_SOCKET } };
  }
  if (value.startsWith('unix://')) {
    const socketPath = value.slice('unix://'.length);
    if (socketPath.startsWith('/')) return { endpoint: value, options: { socketPath } };
  }
  if (value.startsWith('/')) return { endpoint: `unix://${value}`, options: { socketPath: value } };
  const m = /^(tcp|http|https):\/\/([^:/@]+|\[[^\]]+\])(?::(\d+))?\/?$/.exec(value);
  if (m !== null) {
    const scheme = m[1] ?? 'tcp';
    const tls = scheme === 'https' || (scheme === 'tcp' && ((env.DOCKER_TLS_VERIFY ?? '') !== '' || m[3] === '2376'));
    const protocol = tls ? 'https' : 'http';
    const port = m[3] === undefined ? (tls ? 2376 : 2375) : Number(m[3]);
    const certPath = env.DOCKER_CERT_PATH ?? (env.HOME === undefined ? undefined : `${env.HOME}/.docker`);
    return { endpoint: value, options: { protocol, host: m[2] ?? 'localhost', port }, ...(tls && certPath !== undefined ? { tlsCertPath: certPath } : {}) };
  }
  const ssh = /^ssh:\/\/(?:([^@/:]+)@)?([^:/@]+|\[[^\]]+\])(?::(\d+))?\/?$/.exec(value);
  if (ssh !== null) {
    const agent = env.SSH_AUTH_SOCK;
    return {
      endpoint: value,
      options: {
        protocol: 'ssh',
        host: ssh[2] ?? 'localhost',
        port: ssh[3] === undefined ? 22 : Number(ssh[3]),
        ...(ssh[1] === undefined ? {} : { username: ssh[1] }),
        ...(agent === undefined ? {} : { sshOptions: { agent } }),
      },
    };
  }
  throw new AuthbenchError('INVALID_CONFIG', `unsupported Docker endpoint: ${value}`, {
    hint: 'use unix:///path/to/docker.sock, tcp://host:port (TLS: DOCKER_TLS_VERIFY=1, DOCKER_CERT_PATH) or ssh://[user@]host[:port]',
  });
}

/** The client certificates of a TLS endpoint; a missing file is left to the daemon to refuse (it names what it wants). */
async function withCertificates(endpoint: DockerEndpoint): Promise<Dockerode.DockerOptions> {
  if (endpoint.tlsCertPath === undefined) return endpoint.options;
  const read = (name: string): Promise<Buffer | undefined> => readFile(join(endpoint.tlsCertPath ?? '', name)).catch(() => undefined);
  const [ca, cert, key] = await Promise.all([read('ca.pem'), read('cert.pem'), read('key.pem')]);
  return { ...endpoint.options, ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
}

export interface ConnectOptions {
  /** Overrides DOCKER_HOST. */
  host?: string;
  /** The run id on everything this engine creates without one of its own (eval: its job's); default a fresh one. */
  runId?: string;
}

/** Connect and ping; throws DOCKER_UNREACHABLE naming the endpoint tried. */
export async function connectDocker(options: ConnectOptions = {}): Promise<DockerEngine> {
  const parsed = parseDockerHost(options.host ?? readEnv(ENV.DOCKER_HOST));
  const owner = currentOwner();
  const engine = new DockerEngine(new Dockerode(await withCertificates(parsed)), parsed.endpoint, options.runId === undefined ? owner : { ...owner, runId: options.runId });
  await engine.ping();
  return engine;
}

export class DockerEngine implements Engine {
  readonly endpoint: string;
  /** The dockerode client, for the docker module's own helpers (base images, clean). */
  readonly docker: Dockerode;
  readonly stats = { buildCalls: 0, cacheHits: 0 };
  /** Recorded on every container and network this engine creates (docker/owner.ts). */
  readonly owner: ProcessOwner;
  /**
   * How `network: 'none'` containers are made (none-network.ts): 'docker' (Docker's none network),
   * or Docker's /etc files for them once read from the first one, until then undefined.
   */
  private noneNetwork: NoneNetworkFiles | 'docker' | undefined;
  private noneNetworkProbe: Promise<void> | undefined;

  constructor(docker: Dockerode, endpoint: string, owner: ProcessOwner = currentOwner()) {
    this.docker = docker;
    this.endpoint = endpoint;
    this.owner = owner;
    if (noneNetworkMode() === 'docker') this.noneNetwork = 'docker';
  }

  /**
   * From the first container started on Docker's none network: the files Docker gave it, for the
   * containers after it. Read before the caller has the container, so before anything ran in it.
   * Not Docker's engine (Podman), or a file that cannot be read: Docker's way from then on.
   */
  private async learnNoneNetwork(container: DockerContainer): Promise<void> {
    if ((await this.product()).name !== 'Engine') {
      this.noneNetwork = 'docker';
      return;
    }
    const [hosts, resolvConf] = await Promise.all(NONE_NETWORK_FILES.map((path) => container.readFile(path)));
    this.noneNetwork = hosts === undefined || resolvConf === undefined ? 'docker' : { '/etc/hosts': hosts, '/etc/resolv.conf': resolvConf };
  }

  /** The owner labels, under a caller's own run id (eval's job) when it gives one. */
  private owned(labels: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { ...labels, ...ownerLabels(this.owner), [LABELS.run]: labels[LABELS.run] ?? this.owner.runId };
  }

  async ping(): Promise<void> {
    try {
      // @types/dockerode lags dockerode 5, whose ping takes an abort signal.
      const ping = this.docker.ping.bind(this.docker) as (opts: { abortSignal: AbortSignal }) => Promise<unknown>;
      await ping({ abortSignal: AbortSignal.timeout(PING_TIMEOUT_MS) });
    } catch (e) {
      const viaSocket = this.endpoint.startsWith('unix://');
      throw new AuthbenchError('DOCKER_UNREACHABLE', `cannot reach the Docker daemon at ${this.endpoint}: ${dockerMessage(e)}`, {
        hint: viaSocket
          ? `start it (e.g. \`dockerd &\` as root, or \`systemctl start docker\`), or point ${ENV.DOCKER_HOST} at a running daemon`
          : `check that the daemon listens there, or unset ${ENV.DOCKER_HOST} to use the local socket`,
        cause: e,
      });
    }
  }

  /** What serves this endpoint: the Engine API's version report (a Podman socket names itself "Podman Engine"). */
  async product(): Promise<{ name: string; version: string }> {
    try {
      const v = (await this.docker.version()) as { Version?: string; Components?: { Name?: string; Version?: string }[] };
      const main = v.Components?.find((c) => c.Name === 'Engine' || c.Name === 'Podman Engine') ?? v.Components?.[0];
      return { name: main?.Name ?? 'Engine', version: main?.Version ?? v.Version ?? 'unknown' };
    } catch (e) {
      throw apiError(`read the version of ${this.endpoint}`, e);
    }
  }

  async startContainer(spec: ContainerSpec): Promise<Container> {
    const none = typeof spec.network !== 'object' && (spec.network ?? 'none') === 'none';
    // Known files: the runtime's namespace. Not yet known: Docker's way, and the first such container teaches them.
    const files = none && typeof this.noneNetwork === 'object' ? this.noneNetwork : undefined;
    let handle: Dockerode.Container;
    try {
      handle = await this.docker.createContainer({
        Image: spec.image,
        // NetworkMode stays none: an engine that ignored NetworkDisabled still gives no network.
        ...(files === undefined ? {} : { NetworkDisabled: true }),
        ...processOf(spec),
        // Attached before the start (below); its output is the attacher's, no log's.
        ...(spec.attachMain === true ? { OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true } : {}),
        ...(spec.healthcheck === undefined ? {} : { Healthcheck: healthcheckOf(spec.healthcheck) }),
        Labels: { ...this.owned(spec.labels), [LABELS.managed]: 'true', [LABELS.kind]: 'container' },
        ...(spec.name === undefined ? {} : { name: spec.name }),
        ...(spec.workdir === undefined ? {} : { WorkingDir: spec.workdir }),
        ...(spec.env === undefined ? {} : { Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`) }),
        ...(typeof spec.network === 'object'
          ? { NetworkingConfig: { EndpointsConfig: { [spec.network.name]: { Aliases: [...(spec.network.aliases ?? [])] } } } }
          : {}),
        HostConfig: {
          NetworkMode: typeof spec.network === 'object' ? spec.network.name : (spec.network ?? 'none'),
          ...(files === undefined ? {} : { Sysctls: { ...NONE_NETWORK_SYSCTLS } }),
          // docker-init as PID 1 reaps the orphans that exec'd commands leave behind.
          Init: true,
          ...(spec.attachMain === true ? { LogConfig: { Type: 'none', Config: {} } } : {}),
          ...(spec.cpusetCpus === undefined ? {} : { CpusetCpus: spec.cpusetCpus }),
          ...(spec.memoryBytes === undefined ? {} : { Memory: spec.memoryBytes, MemorySwap: spec.memoryBytes }),
          ...(spec.securityOpt === undefined ? {} : { SecurityOpt: [...spec.securityOpt] }),
          ...(spec.capAdd === undefined ? {} : { CapAdd: [...spec.capAdd] }),
          ...(spec.pidsLimit === undefined ? {} : { PidsLimit: spec.pidsLimit }),
          ...(spec.cpus === undefined ? {} : { NanoCpus: Math.round(spec.cpus * 1e9) }),
          ...(spec.volumes === undefined
            ? {}
            : {
                // NoCopy: an empty volume must not be filled from the image's files at that path.
                // (@types/dockerode wants every VolumeOptions field; the API takes NoCopy alone.)
                Mounts: spec.volumes.map(
                  (v) => ({ Type: 'volume', Source: v.volume, Target: v.target, ReadOnly: v.readOnly, VolumeOptions: { NoCopy: true } }) as unknown as Dockerode.MountSettings,
                ),
              }),
        },
      });
    } catch (e) {
      if (dockerStatus(e) === 404) {
        throw new AuthbenchError('IMAGE_NOT_FOUND', `image ${spec.image} does not exist locally`, {
          hint: 'build it first (`authbench build <task>`; base images: `authbench base build`)',
          cause: e,
        });
      }
      throw apiError(`create container from ${spec.image}`, e);
    }
    let main: MainProcessStream | undefined;
    try {
      if (spec.attachMain === true) main = await MainProcessStream.attach(handle);
    } catch (e) {
      await handle.remove({ force: true }).catch(() => undefined);
      throw e;
    }
    const container = new DockerContainer(handle, spec.image, main);
    try {
      for (const extra of spec.extraNetworks ?? [])
        await this.docker.getNetwork(extra.name).connect({ Container: handle.id, EndpointConfig: { Aliases: [...(extra.aliases ?? [])] } });
    } catch (e) {
      await container.remove().catch(() => undefined);
      throw apiError(`connect a container from ${spec.image} to its networks`, e);
    }
    try {
      if (files !== undefined) await handle.putArchive(await noneNetworkTar(files), { path: '/' });
    } catch (e) {
      await container.remove().catch(() => undefined);
      throw apiError(`write ${NONE_NETWORK_FILES.join(' and ')} into a container from ${spec.image}`, e);
    }
    try {
      await handle.start();
    } catch (e) {
      await container.remove().catch(() => undefined);
      throw apiError(`start container from ${spec.image}`, e);
    }
    if (none && this.noneNetwork === undefined && this.noneNetworkProbe === undefined) {
      this.noneNetworkProbe = this.learnNoneNetwork(container).catch(() => {
        this.noneNetwork = 'docker';
      });
      await this.noneNetworkProbe;
    }
    return container;
  }

  buildImage(request: BuildRequest): Promise<BuildResult> {
    return buildImageWith(this, request);
  }

  async volumeExists(name: string): Promise<boolean> {
    try {
      await this.docker.getVolume(name).inspect();
      return true;
    } catch (e) {
      if (dockerStatus(e) === 404) return false;
      throw apiError(`inspect volume ${name}`, e);
    }
  }

  async createVolume(name: string, kind: ResourceKind, labels: Readonly<Record<string, string>> = {}): Promise<void> {
    try {
      await this.docker.createVolume({ Name: name, Labels: { ...labels, [LABELS.managed]: 'true', [LABELS.kind]: kind } });
    } catch (e) {
      throw apiError(`create volume ${name}`, e);
    }
  }

  async removeVolume(name: string): Promise<void> {
    try {
      await this.docker.getVolume(name).remove();
    } catch (e) {
      if (dockerStatus(e) === 404) return;
      throw apiError(`remove volume ${name}`, e);
    }
  }

  async createNetwork(name: string, labels: Readonly<Record<string, string>> = {}): Promise<void> {
    try {
      // Internal: the bridge has no gateway out, so containers on it reach each other and nothing else.
      await this.docker.createNetwork({ Name: name, Driver: 'bridge', Internal: true, CheckDuplicate: true, Labels: { ...this.owned(labels), [LABELS.managed]: 'true', [LABELS.kind]: 'network' } });
    } catch (e) {
      throw apiError(`create network ${name}`, e);
    }
  }

  async removeNetwork(name: string): Promise<void> {
    try {
      await this.docker.getNetwork(name).remove();
    } catch (e) {
      if (dockerStatus(e) === 404) return;
      throw apiError(`remove network ${name}`, e);
    }
  }

  async commitContainer(containerId: string, repository: string, labels: Readonly<Record<string, string>> = {}): Promise<string> {
    // The content-hash label and its tag are what clean's isOwnedImage recognises; the id is random (a snapshot has no recipe).
    const id = randomBytes(32).toString('hex');
    const tag = id.slice(0, 16);
    const all = { ...labels, [LABELS.managed]: 'true', [LABELS.contentHash]: id };
    try {
      // pause: a process the container still runs cannot change files half-way through the copy.
      await this.docker.getContainer(containerId).commit({ repo: repository, tag, pause: true, changes: Object.entries(all).map(([k, v]) => `LABEL ${k}=${JSON.stringify(v)}`) });
    } catch (e) {
      throw apiError(`commit container ${containerId.slice(0, 12)}`, e);
    }
    return `${repository}:${tag}`;
  }

  async removeImage(ref: string): Promise<void> {
    try {
      await this.docker.getImage(ref).remove({ force: true });
    } catch (e) {
      if (dockerStatus(e) === 404) return;
      throw apiError(`remove image ${ref}`, e);
    }
  }

  removeOrphans(runId: string): Promise<OrphanRemoval> {
    return removeRunOrphans(this, runId);
  }

  listOrphans(): Promise<OrphanList> {
    return listOrphans(this);
  }

  /**
   * Engines this one loads an image from when it lacks one (eval --engine: each engine's peers are
   * the others). A ref found on a peer is streamed over (save there, load here) instead of being
   * built: authbench's tags name their content (a content hash, or a base whose label carries its
   * recipe's hash, checked by the caller as for a local image), so the copy is what a build here
   * would make — and an engine that cannot reach a package mirror still gets the harness builder.
   */
  loadFrom(peers: readonly DockerEngine[]): void {
    this.peers = peers.filter((p) => p !== this);
  }

  private peers: readonly DockerEngine[] = [];
  private readonly loading = new Map<string, Promise<ImageInfo | undefined>>();

  async imageInfo(ref: string): Promise<ImageInfo | undefined> {
    const own = await this.inspectImage(ref);
    if (own !== undefined || this.peers.length === 0) return own;
    let pending = this.loading.get(ref);
    if (pending === undefined) {
      pending = this.loadFromPeer(ref).finally(() => this.loading.delete(ref));
      this.loading.set(ref, pending);
    }
    return pending;
  }

  private async loadFromPeer(ref: string): Promise<ImageInfo | undefined> {
    for (const peer of this.peers) {
      // A peer that does not answer has nothing to give: the caller builds instead.
      if ((await peer.inspectImage(ref).catch(() => undefined)) === undefined) continue;
      try {
        const saved = await peer.docker.getImage(ref).get();
        const outcome = await readBuildStream(await this.docker.loadImage(saved));
        if (outcome.error !== undefined) throw new Error(outcome.error);
      } catch (e) {
        throw new AuthbenchError('DOCKER_API', `loading ${ref} from ${peer.endpoint} into ${this.endpoint} failed: ${dockerMessage(e)}`, { cause: e });
      }
      return this.inspectImage(ref);
    }
    return undefined;
  }

  private async inspectImage(ref: string): Promise<ImageInfo | undefined> {
    try {
      const info = await this.docker.getImage(ref).inspect();
      // dockerode's image type omits Shell, which the Engine API reports when an image sets one.
      const shell = (info.Config as { Shell?: string[] | null }).Shell ?? [];
      return { id: info.Id, labels: info.Config.Labels ?? {}, createdAt: info.Created, env: info.Config.Env ?? [], ...(shell.length > 0 ? { shell } : {}) };
    } catch (e) {
      if (dockerStatus(e) === 404) return undefined;
      throw apiError(`inspect image ${ref}`, e);
    }
  }
}

/** Idle (everything runs through exec), or the image's own process for a sidecar. */
function processOf(spec: ContainerSpec): Pick<Dockerode.ContainerCreateOptions, 'Entrypoint' | 'Cmd'> {
  if (spec.process === undefined) {
    // Overriding the entrypoint keeps images with a server or script ENTRYPOINT idle too.
    const idle = spec.idleCommand ?? DEFAULT_IDLE;
    return { Entrypoint: [idle[0] ?? 'sleep'], Cmd: idle.slice(1) };
  }
  return {
    ...(spec.process.entrypoint === undefined ? {} : { Entrypoint: [...spec.process.entrypoint] }),
    ...(spec.process.command === undefined ? {} : { Cmd: [...spec.process.command] }),
  };
}

/** The Engine API counts health-check durations in nanoseconds. */
function healthcheckOf(h: ContainerHealthcheck): Dockerode.HealthConfig {
  const ns = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * 1e6));
  const interval = ns(h.intervalMs);
  const timeout = ns(h.timeoutMs);
  const startPeriod = ns(h.startPeriodMs);
  return {
    Test: [...h.test],
    ...(interval === undefined ? {} : { Interval: interval }),
    ...(timeout === undefined ? {} : { Timeout: timeout }),
    ...(h.retries === undefined ? {} : { Retries: h.retries }),
    ...(startPeriod === undefined ? {} : { StartPeriod: startPeriod }),
  };
}
