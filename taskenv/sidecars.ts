/**
 * A task's compose sidecars at runtime: their images built and cached like
 * task images (content hash, labels, `authbench clean`), and started on
 * networks of the rollout's own (one per service) before the task container
 * joins those it may reach. A task without a compose file has none, and its
 * container keeps no network.
 */
import { join } from 'node:path';
import { planSidecarNetworks, startSidecars, type BuildResult, type Engine, type SidecarGroup, type SidecarNetworkPlan, type SidecarPlan } from '../docker/index.ts';
import { AuthbenchError } from '../core/index.ts';
import { declaredSidecarCeiling, type SidecarService, type Task } from '../task-format/index.ts';
import type { BuildOptions } from './image.ts';

/** Repository of a sidecar's image: one per task and service, tagged by content hash. */
export function sidecarImageRepository(taskId: string, service: string): string {
  return `authbench/sidecar-${taskId}-${service.toLowerCase()}`;
}

/** The last build of each task's sidecars per engine, so a rollout starts what `build` made (same base map, same args). */
const sidecarBuilds = new WeakMap<Engine, Map<string, Promise<ReadonlyMap<string, string>>>>();

/**
 * Build (or find cached) the images of a task's sidecars: service → image tag.
 * An `image:` sidecar uses that local image (authbench never pulls).
 */
export function buildSidecarImages(engine: Engine, task: Task, options: BuildOptions & { onProgress?: (line: string) => void } = {}): Promise<ReadonlyMap<string, string>> {
  const perEngine = sidecarBuilds.get(engine) ?? new Map<string, Promise<ReadonlyMap<string, string>>>();
  sidecarBuilds.set(engine, perEngine);
  const pending = buildAll(engine, task, options);
  perEngine.set(task.dir, pending);
  // A failed build is not remembered: the next start retries it.
  pending.catch(() => perEngine.delete(task.dir));
  return pending;
}

async function buildAll(engine: Engine, task: Task, options: BuildOptions & { onProgress?: (line: string) => void }): Promise<ReadonlyMap<string, string>> {
  const out = new Map<string, string>();
  for (const sidecar of task.compose?.sidecars ?? []) out.set(sidecar.name, await imageOf(engine, task, sidecar, options));
  return out;
}

async function imageOf(engine: Engine, task: Task, sidecar: SidecarService, options: BuildOptions & { onProgress?: (line: string) => void }): Promise<string> {
  if (sidecar.build === undefined) {
    const image = sidecar.image ?? '';
    if ((await engine.imageInfo(image)) === undefined)
      throw new AuthbenchError('IMAGE_NOT_FOUND', `image ${image} of compose service ${sidecar.name} does not exist locally`, {
        ...(task.files.composeFile === undefined ? {} : { file: task.files.composeFile }),
        hint: 'authbench never pulls: load or build the image first, or give the service a `build`',
      });
    return image;
  }
  const contextDir = join(task.dir, sidecar.build.context);
  const result: BuildResult = await engine.buildImage({
    repository: sidecarImageRepository(task.id, sidecar.name),
    kind: 'sidecar-image',
    contextDir,
    dockerfile: sidecar.build.dockerfile,
    buildArgs: { ...sidecar.build.args, ...(options.buildArgs ?? {}) },
    taskId: task.id,
    labels: { 'authbench.service': sidecar.name },
    baseMap: { extraEntries: options.baseMapEntries ?? [] },
    ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  return result.tag;
}

/** Whether the task's container runs next to sidecars (and joins their network). */
export function hasSidecars(task: Task): boolean {
  return (task.compose?.sidecars.length ?? 0) > 0;
}

/**
 * Start a task's sidecars for one container's life: undefined when it has none.
 * Images come from this process's last build of the task, else are built now.
 */
export async function startTaskSidecars(engine: Engine, task: Task, labels: Readonly<Record<string, string>>, readyTimeoutMs?: number): Promise<SidecarGroup | undefined> {
  const compose = task.compose;
  if (compose === undefined || compose.sidecars.length === 0) return undefined;
  const images = await (sidecarBuilds.get(engine)?.get(task.dir) ?? buildSidecarImages(engine, task));
  const plan: SidecarPlan = {
    sidecars: compose.sidecars.map((s) => ({
      service: s.name,
      image: images.get(s.name) ?? '',
      env: s.environment,
      ...(s.entrypoint === undefined ? {} : { entrypoint: s.entrypoint }),
      ...(s.command === undefined ? {} : { command: s.command }),
      ...(s.healthcheck === undefined ? {} : { healthcheck: s.healthcheck }),
      dependsOn: s.dependsOn,
    })),
    mainDependsOn: compose.mainDependsOn,
    labels,
    ...(readyTimeoutMs === undefined ? {} : { readyTimeoutMs }),
  };
  return startSidecars(engine, plan);
}

/** The sidecars a task container may reach: 'all', or service names (a policy's `tcp_connect` hosts). */
export type SidecarAccess = 'all' | readonly string[];

/**
 * What the task container reaches: the access asked for (a policy's) within
 * what task.toml declares (`network_mode = "none"`: nothing; an allowlist:
 * those sidecars). Pure.
 */
export function taskSidecarAccess(task: Pick<Task, 'network'>, access: SidecarAccess): SidecarAccess {
  const ceiling = declaredSidecarCeiling(task.network);
  if (ceiling === 'all') return access;
  if (access === 'all') return ceiling;
  const allowed = new Set(ceiling);
  return access.filter((s) => allowed.has(s));
}

/** The network plan of a compose task's container under `access` (undefined without sidecars). Pure. */
export function taskSidecarNetworks(task: Pick<Task, 'network' | 'compose'>, access: SidecarAccess): SidecarNetworkPlan | undefined {
  const sidecars = task.compose?.sidecars ?? [];
  if (sidecars.length === 0) return undefined;
  return planSidecarNetworks(
    sidecars.map((s) => ({ service: s.name, dependsOn: s.dependsOn })),
    taskSidecarAccess(task, access),
  );
}
