/**
 * Free space where a local Docker engine keeps its containers' writable layers: what every
 * concurrent rollout's writes come out of. A remote engine's data root is not this host's to
 * read (nor is Docker Desktop's, inside its VM): then undefined.
 */
import { statfs } from 'node:fs/promises';
import { DockerEngine } from './engine.ts';
import type { Engine } from './types.ts';

export interface EngineDiskFree {
  /** The daemon's data root (`DockerRootDir`). */
  root: string;
  /** Bytes an unprivileged writer could still take there (statfs `bavail`). */
  freeBytes: number;
}

export async function engineDiskFree(engine: Engine): Promise<EngineDiskFree | undefined> {
  if (!(engine instanceof DockerEngine) || !engine.endpoint.startsWith('unix://')) return undefined;
  const info = (await engine.docker.info().catch(() => undefined)) as { DockerRootDir?: string } | undefined;
  const root = info?.DockerRootDir;
  if (root === undefined || root === '') return undefined;
  const fs = await statfs(root).catch(() => undefined);
  return fs === undefined ? undefined : { root, freeBytes: fs.bavail * fs.bsize };
}
