import { mkdir, readdir, readFile, readlink } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import * as tarFs from 'tar-fs';
import { AuthbenchError } from '../core/index.ts';
import { apiError, dockerStatus, isMissingPath } from './api-error.ts';
import { ARCHIVE_MAX_BYTES, collectCapped, containerPath, firstTarEntry, READ_FILE_MAX_BYTES, tarContains, tarOfFiles } from './archive.ts';
import { attachExec, type MainProcessStream } from './attach.ts';
import { runExec } from './exec.ts';
import type { AttachedExec, AttachOptions, Container, ContainerState, ExecOptions, ExecResult, MainAttachOptions, WritableVolume } from './types.ts';

/** Symlink hops readFile follows before giving up (a loop, or a very deep chain). */
const MAX_SYMLINK_HOPS = 16;

export class DockerContainer implements Container {
  readonly id: string;
  readonly image: string;
  private readonly handle: Dockerode.Container;
  /** The main process's stream, when it was attached before the start (ContainerSpec.attachMain). */
  private readonly main: MainProcessStream | undefined;
  private removed = false;

  constructor(handle: Dockerode.Container, image: string, main?: MainProcessStream) {
    this.handle = handle;
    this.id = handle.id;
    this.image = image;
    this.main = main;
  }

  claimMain(options: MainAttachOptions): AttachedExec | undefined {
    return this.main?.claim(options);
  }

  exec(options: ExecOptions): Promise<ExecResult> {
    return runExec(this.handle, options);
  }

  attach(options: AttachOptions): Promise<AttachedExec> {
    return attachExec(this.handle, options);
  }

  async copyIn(hostPath: string, containerDir: string): Promise<void> {
    const source = resolve(hostPath);
    const name = basename(source);
    await this.putTar(containerPath(containerDir), (prefix) =>
      tarFs.pack(dirname(source), {
        entries: [name],
        umask: 0,
        map: (header: tarFs.Headers) => ({ ...header, name: posix.join(prefix, header.name) }),
        // @types/tar-fs predates `umask`; tar-fs v3 streams are pipe-compatible streamx streams.
      } as tarFs.PackOptions) as unknown as Readable,
    );
  }

  async putFiles(
    containerDir: string,
    files: Readonly<Record<string, string | Uint8Array>>,
    mode = 0o644,
  ): Promise<void> {
    await this.putTar(containerPath(containerDir), (prefix) => tarOfFiles(prefix, files, mode));
  }

  async readFile(path: string, maxBytes = READ_FILE_MAX_BYTES): Promise<Buffer | undefined> {
    let target = containerPath(path);
    for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
      const archive = await this.getArchive(target);
      if (archive === undefined) return undefined;
      const entry = await firstTarEntry(archive, maxBytes, `${path} in container ${this.shortId}`);
      if (entry === undefined) return undefined;
      switch (entry.type) {
        case 'file':
          return entry.content;
        case 'symlink':
          // getArchive archives the link itself; follow it as the kernel would.
          target = posix.resolve(posix.dirname(target), entry.linkname);
          continue;
        case 'other':
          throw new AuthbenchError('INVALID_ARGUMENT', `${path} in container ${this.shortId} is a ${entry.tarType}, not a regular file`);
      }
    }
    throw new AuthbenchError('INVALID_ARGUMENT', `${path} in container ${this.shortId}: too many levels of symbolic links`);
  }

  async copyOut(path: string, hostDir: string): Promise<void> {
    const archive = await this.getArchive(containerPath(path));
    if (archive === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `${path} does not exist in container ${this.shortId}`);
    }
    await mkdir(hostDir, { recursive: true });
    // Container uids mean nothing on the host; symlinks may point at absolute
    // container paths, which is legitimate content, not an escape (tar-fs still
    // refuses to write *through* a symlink).
    const extract = tarFs.extract(hostDir, { chown: false, validateSymlinks: false, strict: false } as tarFs.ExtractOptions);
    await new Promise<void>((resolvePromise, reject) => {
      extract.on('finish', () => resolvePromise());
      extract.on('error', reject);
      (archive as Readable).on('error', reject);
      (archive as Readable).pipe(extract);
    }).catch((e: unknown) => {
      throw apiError(`copy ${path} out of container ${this.shortId}`, e);
    });
  }

  async archive(path: string, maxBytes = ARCHIVE_MAX_BYTES): Promise<Buffer | undefined> {
    const stream = await this.getArchive(containerPath(path));
    if (stream === undefined) return undefined;
    try {
      return await collectCapped(stream, maxBytes, `the archive of ${path} in container ${this.shortId}`);
    } catch (e) {
      if (e instanceof AuthbenchError) throw e;
      throw apiError(`archive ${path} in container ${this.shortId}`, e);
    }
  }

  async archiveContains(path: string, needles: readonly string[]): Promise<boolean | undefined> {
    const stream = await this.getArchive(containerPath(path));
    if (stream === undefined) return undefined;
    try {
      return await tarContains(stream, needles);
    } catch (e) {
      throw apiError(`scan ${path} in container ${this.shortId}`, e);
    }
  }

  async extractArchive(dir: string, tar: Uint8Array): Promise<void> {
    try {
      // copyUIDGID: keep the archived owners instead of the daemon's default (root).
      await this.handle.putArchive(Buffer.from(tar), { path: containerPath(dir), copyUIDGID: '1' });
    } catch (e) {
      throw apiError(`extract an archive into ${dir} in container ${this.shortId}`, e);
    }
  }

  async state(): Promise<ContainerState> {
    try {
      const info = await this.handle.inspect();
      return {
        status: info.State.Status,
        oomKilled: info.State.OOMKilled,
        exitCode: info.State.Running ? null : info.State.ExitCode,
        mounts: (info.Mounts ?? []).map((m) => ({ volume: m.Name, target: m.Destination, rw: m.RW })),
        ...(info.State.Health === undefined ? {} : { health: { status: info.State.Health.Status, log: (info.State.Health.Log ?? []).map((l) => `exit ${l.ExitCode}: ${l.Output.trim()}`) } }),
        addresses: Object.fromEntries(Object.entries(info.NetworkSettings.Networks ?? {}).flatMap(([name, n]) => (n.IPAddress === '' ? [] : [[name, n.IPAddress]]))),
      };
    } catch (e) {
      if (dockerStatus(e) === 404) return { status: 'gone', oomKilled: false, exitCode: null, mounts: [] };
      throw apiError(`inspect container ${this.shortId}`, e);
    }
  }

  async writableLayerDir(): Promise<string | undefined> {
    try {
      const info = await this.handle.inspect();
      const data = info.GraphDriver.Data as Record<string, unknown> | undefined;
      const upper = info.GraphDriver.Name === 'overlay2' ? data?.['UpperDir'] : undefined;
      return typeof upper === 'string' && upper !== '' ? upper : undefined;
    } catch (e) {
      throw apiError(`inspect container ${this.shortId}`, e);
    }
  }

  async writableVolumes(): Promise<WritableVolume[]> {
    try {
      const info = await this.handle.inspect();
      return info.Mounts.filter((m) => m.Type === 'volume' && m.RW).map((m) => ({
        target: m.Destination,
        ...((m.Driver ?? 'local') === 'local' && typeof m.Source === 'string' && m.Source !== '' ? { dir: m.Source } : {}),
      }));
    } catch (e) {
      throw apiError(`inspect container ${this.shortId}`, e);
    }
  }

  async signalFromHost(pidInContainer: number, signal: NodeJS.Signals): Promise<boolean> {
    const info = await this.handle.inspect().catch(() => undefined);
    const init = info?.State.Pid;
    if (init === undefined || init <= 0) return false;
    // The pid is the daemon's host's: on this host it must be this container's, its cgroups naming
    // the container's id (a remote engine's pid is some other process here, or none).
    const cgroup = await readFile(`/proc/${init}/cgroup`, 'utf8').catch(() => '');
    const namespace = await readlink(`/proc/${init}/ns/pid`).catch(() => undefined);
    if (!cgroup.includes(this.id) || namespace === undefined) return false;
    // The container's processes are those in its pid namespace (cgroup v1 or v2 alike).
    const pids = (await readdir('/proc').catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
    for (const hostPid of pids) {
      if ((await readlink(`/proc/${hostPid}/ns/pid`).catch(() => undefined)) !== namespace) continue;
      const status = await readFile(`/proc/${hostPid}/status`, 'utf8').catch(() => '');
      // NSpid: the pid in each namespace from the host's down; the last is the container's.
      const ns = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      if (ns === undefined || ns.length < 2 || Number(ns.at(-1)) !== pidInContainer) continue;
      // A process that has exited but is not yet reaped takes any signal and acts on none: cut nothing.
      if (/^State:\s+[ZX]/m.test(status)) return false;
      try {
        process.kill(Number(hostPid), signal);
        return true;
      } catch {
        return false;
      }
    }
    return false;
  }

  async writableLayerBytes(): Promise<number> {
    try {
      // The daemon walks the layer to answer `size`: an inspect that costs what the layer holds.
      // dockerode passes inspect's options on as the query; its types know only abortSignal.
      const info = (await this.handle.inspect({ size: true } as unknown as Dockerode.ContainerInspectOptions)) as Dockerode.ContainerInspectInfo & { SizeRw?: number };
      return info.SizeRw ?? 0;
    } catch (e) {
      throw apiError(`inspect container ${this.shortId}`, e);
    }
  }

  async remove(): Promise<void> {
    if (this.removed) return;
    this.main?.release();
    try {
      await this.handle.remove({ force: true, v: true });
    } catch (e) {
      const status = dockerStatus(e);
      // 404: already gone; 409: another removal is in progress. Both mean "removed".
      if (status !== 404 && status !== 409) throw apiError(`remove container ${this.shortId}`, e);
    }
    this.removed = true;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.remove();
  }

  private get shortId(): string {
    return this.id.slice(0, 12);
  }

  private async getArchive(path: string): Promise<NodeJS.ReadableStream | undefined> {
    try {
      return await this.handle.getArchive({ path });
    } catch (e) {
      if (isMissingPath(e)) return undefined;
      throw apiError(`read ${path} from container ${this.shortId}`, e);
    }
  }

  /**
   * putArchive needs an existing target directory. Try it first (the common
   * case, one round trip); if it is missing, extract at `/` with the
   * directory as a name prefix, and the daemon creates the parents (0755).
   */
  private async putTar(dir: string, makeTar: (prefix: string) => Readable | Promise<Buffer>): Promise<void> {
    try {
      await this.handle.putArchive(await makeTar(''), { path: dir });
      return;
    } catch (e) {
      if (!isMissingPath(e)) {
        throw apiError(`write into ${dir} in container ${this.shortId}`, e);
      }
    }
    try {
      await this.handle.putArchive(await makeTar(dir.slice(1)), { path: '/' });
    } catch (e) {
      throw apiError(`write into ${dir} in container ${this.shortId}`, e);
    }
  }
}
