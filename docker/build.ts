/**
 * One image build: resolve every base (local image, dataset recipe, base-image
 * map with the offline bases built on demand), rewrite what this engine or
 * the offline setting cannot take as written (heredocs, package installs),
 * hash, and call `docker build` only when no image has that hash.
 */
import type Dockerode from 'dockerode';
import { minimatch } from 'minimatch';
import { AuthbenchError, parseDockerfile, type Dockerfile } from '../core/index.ts';
import { apiError, dockerMessage, dockerStatus } from './api-error.ts';
import { ensureBaseImage, offlineBaseRecipe } from './base-images.ts';
import { externalImageRefs, matchBaseMap, substituteBaseImages } from './base-map.ts';
import type { BaseMapEntry, BaseMapMode } from './base-map.ts';
import { loadBaseMap } from './base-map-config.ts';
import { injectBuildCa, BUILD_CA_ARG, type BuildHostRecord } from './build-host.ts';
import { readBuildStream } from './build-stream.ts';
import { contentHash, contextDigests, packContext, readBuildContext } from './context.ts';
import { recipeFor, type DatasetRecipe } from './dataset-bases.ts';
import { translateHeredocs, type Translation } from './heredoc.ts';
import { factDifferences, parseLineage, requestedImageFacts, type SubstitutionRecord } from './image-facts.ts';
import { rewritePackageInstalls, type StageRewrite } from './offline-packages.ts';
import type { BaseBuildRecord, BuildRequest, BuildResult, ImageInfo } from './types.ts';
import { LABELS } from './types.ts';

export { readBuildStream } from './build-stream.ts';
export type { BuildStreamOutcome } from './build-stream.ts';

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

/** Errors the daemon gives when it cannot pull a base: the registry is unreachable or does not have it. */
const PULL_FAILURE = /pull access denied|dial tcp|no such host|lookup \S+ on|manifest unknown|repository does not exist|failed to resolve|i\/o timeout|TLS handshake|connection refused|not found: manifest/i;

/**
 * Where a stage's image reference came from, for messages: `ARG X (its
 * default, line 1)` or `ARG X (build arg)`, or the FROM line itself.
 */
export function refOrigin(df: Dockerfile, ref: string, buildArgs: Readonly<Record<string, string>> = {}): string {
  const stage = df.stages.find((s) => s.ref === ref);
  if (stage === undefined) return 'FROM';
  const fromLine = `FROM line ${stage.from.startLine + 1}`;
  const names = [...stage.rawRef.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? '');
  if (names.length === 0) return fromLine;
  const parts = names.map((name) => {
    if (buildArgs[name] !== undefined) return `ARG ${name} (build arg)`;
    const decl = df.instructions.find(
      (i) => i.keyword === 'ARG' && i.startLine < stage.from.startLine && new RegExp(`(^|\\s)${name}(=|\\s|$)`).test(i.args),
    );
    return decl === undefined ? `ARG ${name} (unset)` : `ARG ${name} (its default, line ${decl.startLine + 1})`;
  });
  return `${fromLine}, from ${parts.join(', ')}`;
}

/** Dataset recipe builds in progress, shared by concurrent task builds. */
const recipeBuilds = new WeakMap<BuildHost, Map<string, Promise<BuildResult>>>();

function recipeKey(recipe: DatasetRecipe, request: BuildRequest): string {
  return JSON.stringify([recipe.root, recipe.dockerfile, request.buildArgs ?? {}, request.baseMap ?? {}]);
}

async function buildRecipe(host: BuildHost, recipe: DatasetRecipe, request: BuildRequest, visiting: ReadonlySet<string>): Promise<BuildResult> {
  if (visiting.has(recipe.product)) {
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `dataset recipe ${recipe.dockerfile} starts from itself (${[...visiting, recipe.product].join(' → ')})`, {
      file: recipe.dockerfile,
    });
  }
  const perHost = recipeBuilds.get(host) ?? new Map<string, Promise<BuildResult>>();
  recipeBuilds.set(host, perHost);
  const key = recipeKey(recipe, request);
  let pending = perHost.get(key);
  if (pending === undefined) {
    const onProgress = request.onProgress;
    pending = buildImageWith(
      host,
      {
        repository: recipe.repository,
        kind: 'dataset-base-image',
        contextDir: recipe.root,
        dockerfile: recipe.dockerfile,
        buildArgs: request.buildArgs ?? {},
        labels: { [LABELS.recipe]: recipe.dockerfile },
        ...(request.baseMap === undefined ? {} : { baseMap: request.baseMap }),
        ...(request.hostAccess === undefined ? {} : { hostAccess: request.hostAccess }),
        ...(onProgress === undefined ? {} : { onProgress: (line: string) => onProgress(`[${recipe.dockerfile}] ${line}`) }),
      },
      new Set([...visiting, recipe.product]),
    ).finally(() => perHost.delete(key));
    perHost.set(key, pending);
  }
  return pending;
}

/** Which offline base this build needs; built on demand (debootstrap, needs root) so no configuration is needed. */
async function ensureSubstitute(host: BuildHost, ref: string, from: string, file: string, onProgress?: (line: string) => void): Promise<BaseBuildRecord | undefined> {
  const recipe = offlineBaseRecipe(ref);
  if (recipe === undefined) {
    throw new AuthbenchError('IMAGE_NOT_FOUND', `base image ${ref} (substituted for ${from}) does not exist locally`, {
      file,
      hint: 'build it with `authbench base build`',
    });
  }
  const built = await ensureBaseImage(host, recipe, onProgress === undefined ? {} : { onProgress: (line) => onProgress(`[${ref}] ${line}`) });
  return { image: ref, recipe: recipe.name, built: built.built, substitutions: [], translations: [] };
}

function envRecord(env: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env ?? []) {
    const eq = e.indexOf('=');
    if (eq > 0) out[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return out;
}

function uniqueRecords(records: readonly SubstitutionRecord[]): SubstitutionRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => {
    const key = `${r.from}\0${r.to}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A map entry matching exactly one reference (glob characters escaped). */
function exactEntry(ref: string, image: string): BaseMapEntry {
  return { pattern: minimatch.escape(ref), image };
}

export function buildImage(host: BuildHost, request: BuildRequest): Promise<BuildResult> {
  return buildImageWith(host, request, new Set());
}

async function buildImageWith(host: BuildHost, request: BuildRequest, visiting: ReadonlySet<string>): Promise<BuildResult> {
  const buildArgs = request.buildArgs ?? {};
  const context = await readBuildContext(request.contextDir, request.dockerfile, { onlyWhenRead: request.kind === 'dataset-base-image' });
  const file = context.dockerfile.path;
  const fileMap = await loadBaseMap(request.baseMap?.file);
  const extra = request.baseMap?.extraEntries ?? [];
  const mode: BaseMapMode = request.baseMap?.mode ?? fileMap.mode;
  const original = parseDockerfile(context.dockerfile.text, buildArgs);

  // 1. Resolve each base: a local image is used as it is (auto mode); a
  // missing one a dataset recipe produces is built from that recipe (unless
  // the caller's own entries map it); the map file covers the rest. We never
  // pull: in air-gapped setups a pull hangs or fails, and with a registry the
  // daemon pulls a missing base by itself during the build.
  const local = new Set<string>();
  const recipeEntries: BaseMapEntry[] = [];
  const recipes = new Map<string, { recipe: DatasetRecipe; result: BuildResult }>();
  const bases: BaseBuildRecord[] = [];
  for (const ref of externalImageRefs(context.dockerfile.text, buildArgs)) {
    if (await host.imageInfo(ref)) {
      local.add(ref);
      continue;
    }
    if (mode === 'never' || matchBaseMap(extra, ref) !== undefined) continue;
    const recipe = await recipeFor(request.contextDir, ref);
    if (recipe === undefined) continue;
    const result = await buildRecipe(host, recipe, request, visiting);
    recipes.set(ref, { recipe, result });
    recipeEntries.push(exactEntry(ref, result.tag));
    bases.push(...(result.bases ?? []), {
      image: result.tag,
      recipe: recipe.dockerfile,
      built: result.built,
      substitutions: result.substitutions,
      translations: result.translations ?? [],
    });
  }
  const substituted = substituteBaseImages(context.dockerfile.text, {
    entries: [...extra, ...recipeEntries, ...fileMap.entries],
    mode,
    buildArgs,
    isLocal: (ref) => local.has(ref),
  });

  // 2. Every base must exist now; an offline base we know how to make is made.
  const infos = new Map<string, ImageInfo>();
  const baseImageIds: string[] = [];
  const unresolved: string[] = [];
  for (const base of substituted.baseImages) {
    let info = await host.imageInfo(base.ref);
    if (info === undefined && base.substitutedFrom !== undefined) {
      const made = await ensureSubstitute(host, base.ref, base.substitutedFrom, file, request.onProgress);
      if (made !== undefined) bases.push(made);
      info = await host.imageInfo(base.ref);
    }
    if (info === undefined) unresolved.push(base.ref);
    else infos.set(base.ref, info);
    // A base we cannot resolve is left to the daemon (it may pull it); its
    // name still goes into the hash.
    baseImageIds.push(info?.id ?? `unresolved:${base.ref}`);
  }

  // 3. What each substitution changed, and the lineage of every stage.
  const records: SubstitutionRecord[] = substituted.substitutions.map(({ from, to }) => {
    const viaRecipe = recipes.get(from);
    if (viaRecipe !== undefined) return { from, to, via: 'recipe', recipe: viaRecipe.recipe.dockerfile };
    const requested = requestedImageFacts(from);
    const provided = offlineBaseRecipe(to)?.facts;
    const differs = provided === undefined ? [] : factDifferences(requested, provided);
    return {
      from,
      to,
      via: 'map',
      ...(Object.keys(requested).length > 0 ? { requested } : {}),
      ...(provided === undefined ? {} : { provided }),
      ...(differs.length > 0 ? { differs } : {}),
    };
  });
  const afterSubstitution = parseDockerfile(substituted.text, buildArgs);
  const lineages: SubstitutionRecord[][] = [];
  const rewrites = new Map<number, StageRewrite>();
  for (const [index, stage] of afterSubstitution.stages.entries()) {
    const fromOriginal = original.stages[index];
    const own = stage.kind === 'image' ? records.filter((r) => r.from === fromOriginal?.ref && r.to === stage.ref) : [];
    const lineage =
      stage.kind === 'stage' && stage.parent !== undefined
        ? (lineages[stage.parent] ?? [])
        : uniqueRecords([...own, ...parseLineage(infos.get(stage.ref)?.labels[LABELS.lineage])]);
    lineages.push(lineage);
    rewrites.set(index, {
      aptUbuntuToDebian: lineage.some((r) => r.requested?.os === 'ubuntu' && r.provided?.os === 'debian'),
      // A stage on a substitute cannot reach a package index, unless the caller configured one.
      pipOffline: lineage.length > 0 && buildArgs['PIP_INDEX_URL'] === undefined,
    });
  }

  // 4. Rewrite what cannot be built as written: package installs, then heredocs.
  const packages = rewritePackageInstalls(substituted.text, rewrites);
  const heredocs = translateHeredocs(packages.text, {
    buildArgs,
    imageEnv: (ref) => envRecord(infos.get(ref)?.env),
  });
  const translations: Translation[] = [...packages.translations, ...heredocs.translations].sort((a, b) => a.line - b.line);
  const finalLineage = lineages.at(-1) ?? [];
  const inherited = uniqueRecords(lineages.flat().filter((r) => !records.includes(r)));
  // The lineage is recorded (and so inherited by images built on this one)
  // when there is something to know: a substitute that differs, a dataset
  // recipe, or a translated Dockerfile. Exact substitutes leave no label, so
  // images built before lineage existed keep their hash.
  const worthRecording = translations.length > 0 || finalLineage.some((r) => r.via === 'recipe' || (r.differs ?? []).length > 0);
  const recordLabels: Record<string, string> = worthRecording
    ? {
        [LABELS.lineage]: JSON.stringify(finalLineage),
        ...(translations.length > 0 ? { [LABELS.translations]: JSON.stringify(translations.map(({ line, kind, detail }) => ({ line, kind, detail }))) } : {}),
      }
    : {};

  const userLabels = { ...request.labels, ...(request.taskId === undefined ? {} : { [LABELS.task]: request.taskId }), ...recordLabels };
  const hash = contentHash({
    files: [
      ...(await contextDigests(context)),
      ...heredocs.files.map((f) => ({ path: f.path, type: 'file' as const, mode: f.mode, digest: `sha256:${f.content.toString('base64')}` })),
    ],
    dockerfile: { path: file, text: heredocs.text },
    buildArgs,
    baseImageIds,
    labels: { ...userLabels, [LABELS.kind]: request.kind },
  });
  const tag = imageTag(request.repository, hash);
  // Host access comes after hashing: the image is the same with or without it.
  const access = hostAccessFor(request, heredocs.text, infos);
  const result = (imageId: string, built: boolean): BuildResult => ({
    tag,
    imageId,
    contentHash: hash,
    built,
    substitutions: records,
    inherited,
    translations,
    bases,
    ...(built && access.record !== undefined ? { hostAccess: access.record } : {}),
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
    response = await host.docker.buildImage(packContext(context, access.dockerfile, heredocs.files), {
      t: tag,
      dockerfile: file,
      // The caller's own build args win over the host's proxies.
      buildargs: { ...access.buildArgs, ...buildArgs },
      labels,
      // Failed builds must not leave intermediate containers behind.
      forcerm: true,
      rm: true,
    });
  } catch (e) {
    // HTTP 400: the daemon rejected the Dockerfile (parse error, unknown instruction).
    if (dockerStatus(e) === 400) {
      throw new AuthbenchError('IMAGE_BUILD_FAILED', `building ${tag}: ${dockerMessage(e)}`, {
        file,
        details: [dockerMessage(e)],
        cause: e,
      });
    }
    throw apiError(`build ${tag}`, e);
  }

  const outcome = await readBuildStream(response, request.onProgress);
  if (outcome.error !== undefined) {
    const missing = unresolved.filter((ref) => PULL_FAILURE.test(outcome.error ?? '') || (outcome.error ?? '').includes(ref));
    if (missing.length > 0) {
      const described = missing.map((ref) => `${ref} (${refOrigin(original, substitutedFromOf(substituted.baseImages, ref), buildArgs)})`);
      throw new AuthbenchError(
        'IMAGE_NOT_FOUND',
        `base image ${described.join(', ')} is not available: it does not exist locally, no dataset recipe builds it and no base-image map entry matches it, and the daemon could not pull it`,
        {
          file,
          details: [...outcome.tail.slice(-5)],
          hint: 'build it yourself, or map it to a local image with --base-map PATTERN=IMAGE (see docker/base-map.json)',
        },
      );
    }
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `building ${tag}: ${outcome.error}`, {
      file,
      details: [...outcome.tail, ...packages.blocked.map((b) => `cannot work offline: ${b}`)],
      ...(packages.blocked.length > 0
        ? { hint: 'no Python package index is reachable: pass --build-arg PIP_INDEX_URL=… for a local index, or extend PIP_OFFLINE in docker/offline-packages.ts' }
        : {}),
    });
  }
  const built = await host.imageInfo(tag);
  if (built === undefined) {
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `build of ${tag} finished but the image is missing`, { details: outcome.tail });
  }
  return result(built.id, true);
}

/** The Dockerfile and extra build args `docker build` gets for the request's host access, and what to record of it (no values). */
function hostAccessFor(
  request: BuildRequest,
  dockerfile: string,
  infos: ReadonlyMap<string, ImageInfo>,
): { dockerfile: string; buildArgs: Record<string, string>; record: BuildHostRecord | undefined } {
  const ca = request.hostAccess?.caBundle;
  const proxy = { ...request.hostAccess?.proxy };
  if (ca === undefined && Object.keys(proxy).length === 0) return { dockerfile, buildArgs: {}, record: undefined };
  const injected =
    ca === undefined
      ? { text: dockerfile, runsWithCa: 0, runsWithoutCa: [] }
      : injectBuildCa(dockerfile, { ...(request.buildArgs === undefined ? {} : { buildArgs: request.buildArgs }), imageShell: (ref) => infos.get(ref)?.shell });
  // Without a RUN to use it, the CA is not passed at all (the daemon would warn of an unused build arg).
  const caPassed = ca !== undefined && injected.runsWithCa > 0;
  const passed = caPassed || Object.keys(proxy).length > 0 || injected.runsWithoutCa.length > 0;
  return {
    dockerfile: injected.text,
    buildArgs: { ...proxy, ...(caPassed ? { [BUILD_CA_ARG]: ca } : {}) },
    record: passed ? { caBundle: caPassed, proxy: Object.keys(proxy).sort(), runsWithCa: injected.runsWithCa, runsWithoutCa: injected.runsWithoutCa } : undefined,
  };
}

function substitutedFromOf(bases: readonly { ref: string; substitutedFrom: string | undefined }[], ref: string): string {
  return bases.find((b) => b.ref === ref)?.substitutedFrom ?? ref;
}
