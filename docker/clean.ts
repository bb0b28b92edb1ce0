/**
 * Remove what authbench created — containers, images, volumes and networks
 * labelled authbench.managed=true — and nothing else. With orphansOnly, a
 * container or network goes only when its owning process is gone
 * (docker/owner.ts), so a concurrent run keeps its containers and the images
 * and volumes they use.
 *
 * Labels are inherited: an image someone builds FROM authbench/base, and every
 * container started from it, carries the base's labels. So a label match alone
 * is not ownership; see isOwnedContainer / isOwnedImage.
 */
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { apiError, dockerMessage, dockerStatus } from './api-error.ts';
import type { DockerEngine } from './engine.ts';
import { lookupProcess, ownerState, type OwnerState, type ProcessInfo, type ProcessOwner } from './owner.ts';
import { LABELS } from './types.ts';

export interface CleanOptions {
  dryRun?: boolean;
  /** Keep images labelled kind=base-image (rebuilding them takes minutes). */
  keepBase?: boolean;
  /** Further narrow by labels (e.g. one run's `authbench.run=<id>`). */
  labels?: Readonly<Record<string, string>>;
  /** Only images superseded by a newer build of the same repository; containers are left alone. */
  staleOnly?: boolean;
  /**
   * Containers and networks only when their owning process is gone; images and volumes a kept
   * container uses stay too. Default: every managed container (tests and `clean --all`).
   */
  orphansOnly?: boolean;
  /** Containers and networks only: no image, no volume (`clean --containers`: the leftovers of killed runs, keeping every build). */
  containersOnly?: boolean;
  /** Injected for tests: a process on this host (default: /proc). */
  lookupProcess?: (pid: number) => ProcessInfo | undefined;
}

/** Something left in place by orphansOnly, and why. */
export interface KeptResource {
  kind: 'container' | 'network' | 'image' | 'volume';
  id: string;
  name: string;
  /** The owner's state (alive, unknown, unowned), or `in use` for an image or volume a kept container uses. */
  why: Exclude<OwnerState, 'gone'> | 'in use';
}

export interface CleanedContainer {
  id: string;
  name: string;
  image: string;
  state: string;
}

export interface CleanedImage {
  id: string;
  tags: string[];
  kind: string;
}

export interface CleanReport {
  dryRun: boolean;
  /** Label matches that are not ours (labels inherited from an authbench image). */
  skipped: number;
  containers: CleanedContainer[];
  images: CleanedImage[];
  /** Named volumes (the harness volume, one per launcher version). */
  volumes: string[];
  /** Rollout networks of compose sidecars. */
  networks: string[];
  /** Things that matched but could not be removed (e.g. an image still used by a foreign container). */
  failures: { id: string; message: string }[];
  /** What orphansOnly left: live (or uncheckable) runs' containers and networks, and what they use. */
  kept: KeptResource[];
}

/** A listed container as ownership needs it. */
export interface OwnedContainer {
  id: string;
  labels: Readonly<Record<string, string>>;
  imageId: string;
  volumes: readonly string[];
}

/**
 * Containers split by their owner: orphans (owner gone) and the rest, with the images and
 * volumes the kept ones use, which must stay while they run. Pure.
 */
export function splitByOwner<T extends OwnedContainer>(
  containers: readonly T[],
  self: Pick<ProcessOwner, 'host' | 'bootId'>,
  lookup: (pid: number) => ProcessInfo | undefined,
): { orphans: T[]; kept: (T & { why: Exclude<OwnerState, 'gone'> })[]; imagesInUse: Set<string>; volumesInUse: Set<string> } {
  const orphans: T[] = [];
  const kept: (T & { why: Exclude<OwnerState, 'gone'> })[] = [];
  for (const c of containers) {
    const state = ownerState(c.labels, self, lookup);
    if (state === 'gone') orphans.push(c);
    else kept.push({ ...c, why: state });
  }
  return { orphans, kept, imagesInUse: new Set(kept.map((c) => c.imageId)), volumesInUse: new Set(kept.flatMap((c) => c.volumes)) };
}

/** Docker label filters: managed plus any extra `key=value` pairs. */
export function labelFilters(extra: Readonly<Record<string, string>> = {}): string[] {
  return [`${LABELS.managed}=true`, ...Object.entries(extra).map(([k, v]) => `${k}=${v}`)];
}

/** startContainer always sets kind=container, overriding whatever the image carried. */
export function isOwnedContainer(labels: Readonly<Record<string, string>>): boolean {
  return labels[LABELS.managed] === 'true' && labels[LABELS.kind] === 'container';
}

/**
 * A base image we import is a single layer; anything built on top of it has
 * more. Images we build are tagged `<repository>:<first 16 hex of their content
 * hash>`, a tag no inheriting image carries.
 */
export function isOwnedImage(image: {
  labels: Readonly<Record<string, string>>;
  repoTags: readonly string[];
  layers: number;
}): boolean {
  if (image.labels[LABELS.managed] !== 'true') return false;
  if (image.labels[LABELS.kind] === 'base-image') return image.layers === 1;
  const hash = image.labels[LABELS.contentHash];
  return hash !== undefined && image.repoTags.some((t) => t.endsWith(`:${hash.slice(0, 16)}`));
}

/**
 * Images superseded by a newer one of the same repository. Every content
 * change (a task edit, a regenerated suite, a new base) builds a new tag and
 * leaves the old generation behind; the newest per repository is the one the
 * current tasks use unless the checkout went back in time, which costs a
 * rebuild, never a wrong result. Untagged owned images are always stale. Pure.
 */
export function staleImages<T extends { tags: readonly string[]; created: number }>(images: readonly T[]): T[] {
  const repository = (tag: string): string => tag.slice(0, tag.lastIndexOf(':'));
  const newest = new Map<string, number>();
  for (const image of images) {
    for (const tag of image.tags) newest.set(repository(tag), Math.max(newest.get(repository(tag)) ?? -Infinity, image.created));
  }
  return images.filter((image) => image.tags.length === 0 || image.tags.every((tag) => image.created < (newest.get(repository(tag)) ?? -Infinity)));
}

/**
 * Task images first, then family bases, base images last: an image with
 * dependent child images cannot be removed while its children exist.
 */
export function removalOrder<T extends { kind: string }>(images: readonly T[]): T[] {
  const rank = (kind: string): number => (kind === 'base-image' ? 2 : kind === 'family-image' || kind === 'dataset-base-image' ? 1 : 0);
  return [...images].sort((a, b) => rank(a.kind) - rank(b.kind));
}

export async function cleanManaged(engine: DockerEngine, options: CleanOptions = {}): Promise<CleanReport> {
  const filters = { label: labelFilters(options.labels) };
  const dryRun = options.dryRun === true;
  const orphansOnly = options.orphansOnly === true;
  const lookup = options.lookupProcess ?? lookupProcess;
  const owned: (OwnedContainer & CleanedContainer)[] = [];
  const candidates: (CleanedImage & { created: number })[] = [];
  let skipped = 0;
  try {
    for (const c of options.staleOnly === true ? [] : await engine.docker.listContainers({ all: true, filters })) {
      if (!isOwnedContainer(c.Labels)) {
        skipped++;
        continue;
      }
      const volumes = (c.Mounts ?? []).flatMap((m) => (m.Name === undefined ? [] : [m.Name]));
      owned.push({ id: c.Id, name: (c.Names[0] ?? '').replace(/^\//, ''), image: c.Image, state: c.State, labels: c.Labels, imageId: c.ImageID, volumes });
    }
    for (const i of options.containersOnly === true ? [] : await engine.docker.listImages({ all: false, filters })) {
      const labels = i.Labels ?? {};
      const repoTags = (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
      const layers = await layerCount(engine, i.Id);
      if (layers === undefined) continue; // removed meanwhile
      if (!isOwnedImage({ labels, repoTags, layers })) {
        skipped++;
        continue;
      }
      const kind = labels[LABELS.kind] ?? 'unknown';
      if (options.keepBase === true && kind === 'base-image') continue;
      candidates.push({ id: i.Id, tags: repoTags, kind, created: i.Created });
    }
  } catch (e) {
    throw apiError('list authbench resources', e);
  }
  const split = orphansOnly ? splitByOwner(owned, engine.owner, lookup) : { orphans: owned, kept: [], imagesInUse: new Set<string>(), volumesInUse: new Set<string>() };
  const kept: KeptResource[] = split.kept.map((c) => ({ kind: 'container', id: c.id, name: c.name, why: c.why }));
  const containers: CleanedContainer[] = split.orphans.map(({ id, name, image, state }) => ({ id, name, image, state }));
  const images: CleanedImage[] = [];
  for (const { id, tags, kind } of options.staleOnly === true ? staleImages(candidates) : candidates) {
    if (split.imagesInUse.has(id)) kept.push({ kind: 'image', id, name: tags.join(', '), why: 'in use' });
    else images.push({ id, tags, kind });
  }
  const volumes: string[] = [];
  if (options.staleOnly !== true && options.containersOnly !== true && options.labels === undefined) {
    try {
      const listed = await engine.docker.listVolumes({ filters: { label: [`${LABELS.managed}=true`] } });
      for (const name of (listed.Volumes ?? []).map((v) => v.Name).sort()) {
        if (split.volumesInUse.has(name)) kept.push({ kind: 'volume', id: name, name, why: 'in use' });
        else volumes.push(name);
      }
    } catch (e) {
      throw apiError('list authbench volumes', e);
    }
  }
  const networks: string[] = [];
  if (options.staleOnly !== true) {
    try {
      const listed = await engine.docker.listNetworks({ filters: { label: labelFilters(options.labels) } });
      for (const n of listed.filter((n) => n.Labels?.[LABELS.kind] === 'network').sort((a, b) => compareStrings(a.Name, b.Name))) {
        const state = orphansOnly ? ownerState(n.Labels ?? {}, engine.owner, lookup) : 'gone';
        if (state === 'gone') networks.push(n.Name);
        else kept.push({ kind: 'network', id: n.Id, name: n.Name, why: state });
      }
    } catch (e) {
      throw apiError('list authbench networks', e);
    }
  }
  const report: CleanReport = { dryRun, skipped, containers: [], images: [], volumes: [], networks: [], failures: [], kept };
  if (dryRun) return { ...report, containers, images: removalOrder(images), volumes, networks };

  for (const c of containers) {
    try {
      await engine.docker.getContainer(c.id).remove({ force: true, v: true });
      report.containers.push(c);
    } catch (e) {
      if (dockerStatus(e) === 404) continue;
      report.failures.push({ id: c.id, message: dockerMessage(e) });
    }
  }
  // After the containers attached to them.
  for (const name of networks) {
    try {
      await engine.docker.getNetwork(name).remove();
      report.networks.push(name);
    } catch (e) {
      if (dockerStatus(e) === 404) continue;
      report.failures.push({ id: name, message: dockerMessage(e) });
    }
  }
  // After the containers that mount them; a volume still in use (a concurrent run) is refused (409) and reported.
  for (const name of volumes) {
    try {
      await engine.docker.getVolume(name).remove();
      report.volumes.push(name);
    } catch (e) {
      if (dockerStatus(e) === 404) continue;
      report.failures.push({ id: name, message: dockerMessage(e) });
    }
  }
  for (const image of removalOrder(images)) {
    try {
      // By ID with force: removes every tag of it, but never an image a
      // running foreign container uses (Docker refuses that with 409).
      await engine.docker.getImage(image.id).remove({ force: true });
      report.images.push(image);
    } catch (e) {
      if (dockerStatus(e) === 404) continue;
      report.failures.push({ id: image.id, message: dockerMessage(e) });
    }
  }
  return report;
}

async function layerCount(engine: DockerEngine, id: string): Promise<number | undefined> {
  try {
    return (await engine.docker.getImage(id).inspect()).RootFS.Layers?.length ?? 0;
  } catch (e) {
    if (dockerStatus(e) === 404) return undefined;
    throw e;
  }
}

export function assertCleanSucceeded(report: CleanReport): void {
  if (report.failures.length > 0) {
    throw new AuthbenchError('DOCKER_API', `could not remove ${report.failures.length} resource(s)`, {
      details: report.failures.map((f) => `${f.id.replace(/^sha256:/, '').slice(0, 12)}: ${f.message}`),
    });
  }
}
