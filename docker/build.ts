import type Dockerode from 'dockerode';
import { AuthbenchError } from '../core/index.ts';
import { apiError, dockerMessage, dockerStatus } from './api-error.ts';
import { externalImageRefs, matchBaseMap, substituteBaseImages } from './base-map.ts';
import type { BaseMapEntry } from './base-map.ts';
import { loadBaseMap } from './base-map-config.ts';
import { contentHash, contextDigests, packContext, readBuildContext } from './context.ts';
import { LineSplitter, Tail } from './lines.ts';
import type { BuildRequest, BuildResult, ImageInfo } from './types.ts';
import { LABELS } from './types.ts';

/** Log lines kept for the error of a failed build. */
const ERROR_TAIL_LINES = 20;

/** What a build needs from the engine; an interface so the flow is testable with fakes. */
export interface BuildHost {
  readonly docker: Dockerode;
  readonly stats: { buildCalls: number; cacheHits: number };
  imageInfo(ref: string): Promise<ImageInfo | undefined>;
}

/** Repository of a task's image; the tag is its content hash. */
export function taskImageRepository(taskId: string): string {
  return `authbench/task-${taskId.toLowerCase()}`;
}

export function imageTag(repository: string, hash: string): string {
  return `${repository}:${hash.slice(0, 16)}`;
}

export async function buildImage(host: BuildHost, request: BuildRequest): Promise<BuildResult> {
  const buildArgs = request.buildArgs ?? {};
  const context = await readBuildContext(request.contextDir, request.dockerfile);
  const fileMap = await loadBaseMap(request.baseMap?.file);
  const entries: BaseMapEntry[] = [...(request.baseMap?.extraEntries ?? []), ...fileMap.entries];
  const mode = request.baseMap?.mode ?? fileMap.mode;

  // We never pull: in air-gapped setups a pull hangs or fails, and with a
  // registry the daemon pulls a missing base by itself during the build. So in
  // auto mode "missing locally" is what triggers substitution.
  const local = new Set<string>();
  if (mode === 'auto') {
    for (const ref of externalImageRefs(context.dockerfile.text, buildArgs)) {
      if (matchBaseMap(entries, ref) !== undefined && (await host.imageInfo(ref)) !== undefined) local.add(ref);
    }
  }
  const substituted = substituteBaseImages(context.dockerfile.text, {
    entries,
    mode,
    buildArgs,
    isLocal: (ref) => local.has(ref),
  });

  const baseImageIds: string[] = [];
  for (const base of substituted.baseImages) {
    const info = await host.imageInfo(base.ref);
    if (info === undefined && base.substitutedFrom !== undefined) {
      throw new AuthbenchError(
        'IMAGE_NOT_FOUND',
        `base image ${base.ref} (substituted for ${base.substitutedFrom}) does not exist locally`,
        { file: context.dockerfile.path, hint: 'build it with `authbench base build`' },
      );
    }
    // A base we cannot resolve is left to the daemon (it may pull it); its
    // name still goes into the hash.
    baseImageIds.push(info?.id ?? `unresolved:${base.ref}`);
  }

  const userLabels = { ...request.labels, ...(request.taskId === undefined ? {} : { [LABELS.task]: request.taskId }) };
  const hash = contentHash({
    files: await contextDigests(context),
    dockerfile: { path: context.dockerfile.path, text: substituted.text },
    buildArgs,
    baseImageIds,
    labels: { ...userLabels, [LABELS.kind]: request.kind },
  });
  const tag = imageTag(request.repository, hash);
  const result = (imageId: string, built: boolean): BuildResult => ({
    tag,
    imageId,
    contentHash: hash,
    built,
    substitutions: substituted.substitutions,
  });

  const existing = await host.imageInfo(tag);
  if (existing !== undefined) {
    host.stats.cacheHits++;
    return result(existing.id, false);
  }

  host.stats.buildCalls++;
  const labels = { ...userLabels, [LABELS.managed]: 'true', [LABELS.kind]: request.kind, [LABELS.contentHash]: hash };
  let response: NodeJS.ReadableStream;
  try {
    response = await host.docker.buildImage(packContext(context, substituted.text), {
      t: tag,
      dockerfile: context.dockerfile.path,
      buildargs: { ...buildArgs },
      labels,
      // Failed builds must not leave intermediate containers behind.
      forcerm: true,
      rm: true,
    });
  } catch (e) {
    // HTTP 400: the daemon rejected the Dockerfile (parse error, unknown instruction).
    if (dockerStatus(e) === 400) {
      throw new AuthbenchError('IMAGE_BUILD_FAILED', `building ${tag}: ${dockerMessage(e)}`, {
        file: context.dockerfile.path,
        details: [dockerMessage(e)],
        cause: e,
      });
    }
    throw apiError(`build ${tag}`, e);
  }

  const outcome = await readBuildStream(response, request.onProgress);
  if (outcome.error !== undefined) {
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `building ${tag}: ${outcome.error}`, {
      file: context.dockerfile.path,
      details: outcome.tail,
    });
  }
  const built = await host.imageInfo(tag);
  if (built === undefined) {
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `build of ${tag} finished but the image is missing`, { details: outcome.tail });
  }
  return result(built.id, true);
}

/** One JSON message of the build stream. */
interface BuildEvent {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

export interface BuildStreamOutcome {
  /** Set when the stream carried an error event (a failing RUN does not reject the request). */
  error: string | undefined;
  tail: string[];
}

/** Read the build's JSON-lines stream to the end, forwarding log lines as they complete. */
export async function readBuildStream(
  response: AsyncIterable<unknown> | NodeJS.ReadableStream,
  onProgress?: (line: string) => void,
): Promise<BuildStreamOutcome> {
  const jsonLines = new LineSplitter();
  const logLines = new LineSplitter();
  const tail = new Tail<string>(ERROR_TAIL_LINES);
  let error: string | undefined;
  const emit = (line: string): void => {
    tail.push(line);
    onProgress?.(line);
  };
  const handle = (raw: string): void => {
    if (raw.trim() === '') return;
    let event: BuildEvent;
    try {
      event = JSON.parse(raw) as BuildEvent;
    } catch {
      emit(raw);
      return;
    }
    if (typeof event.stream === 'string') for (const l of logLines.push(event.stream)) emit(l);
    if (typeof event.status === 'string') emit([event.status, event.progress].filter(Boolean).join(' '));
    if (event.error !== undefined || event.errorDetail !== undefined) {
      for (const l of logLines.flush()) emit(l);
      error = event.errorDetail?.message ?? event.error ?? 'unknown build error';
      emit(error);
    }
  };
  // A chunk may end inside a multi-byte character.
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response as AsyncIterable<Buffer | string>) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      for (const raw of jsonLines.push(text)) handle(raw);
    }
  } catch (e) {
    throw apiError('reading the build log', e);
  }
  for (const raw of jsonLines.flush()) handle(raw);
  for (const l of logLines.flush()) emit(l);
  return { error, tail: tail.values() };
}
