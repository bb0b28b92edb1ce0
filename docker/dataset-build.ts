/**
 * `authbench base build --dataset DIR`: every base recipe of a dataset, built
 * (or found cached) the way a task build would build it on demand, or
 * reported as unsupported offline when one of its FROM images has no local
 * image, recipe or base-map entry behind it (AuthBench's openclaw bases start
 * from a registry image pinned by digest).
 */
import { AuthbenchError, parseDockerfile } from '../core/index.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { externalImageRefs, matchBaseMap, type BaseMapEntry } from './base-map.ts';
import { loadBaseMap } from './base-map-config.ts';
import type { BuildHostAccess } from './build-host.ts';
import { refOrigin } from './build.ts';
import { findDatasetRoot, listDatasetRecipes, type DatasetRecipe } from './dataset-bases.ts';
import type { Translation } from './heredoc.ts';
import type { SubstitutionRecord } from './image-facts.ts';
import type { BaseBuildRecord, Engine } from './types.ts';
import { LABELS } from './types.ts';

export interface DatasetBuildOptions {
  buildArgs?: Readonly<Record<string, string>>;
  /** `--base-map PATTERN=IMAGE` entries, checked before recipes and the map file. */
  baseMapEntries?: readonly BaseMapEntry[];
  /** CA certificates and proxies for the RUN steps only (see build-host.ts). */
  hostAccess?: BuildHostAccess;
  onProgress?: (line: string) => void;
}

export interface DatasetBaseRow {
  /** `docker/bases/<family>/<variant>.Dockerfile`, relative to the dataset root. */
  recipe: string;
  /** The image task Dockerfiles name. */
  product: string;
  status: 'built' | 'cached' | 'unsupported' | 'failed';
  /** The content-hash tag, when built or cached. */
  image?: string;
  /** Its own substitutions and those of the bases below it. */
  substitutions: SubstitutionRecord[];
  translations: Translation[];
  /** Offline bases and other recipes this one needed. */
  bases: BaseBuildRecord[];
  /** Why unsupported or failed. */
  reason?: string;
  seconds: number;
}

/** Why a recipe cannot be built offline (the first FROM image nothing provides), or undefined when it can. */
async function unsupportedReason(
  engine: Engine,
  recipe: DatasetRecipe,
  recipes: readonly DatasetRecipe[],
  entries: readonly BaseMapEntry[],
  buildArgs: Readonly<Record<string, string>>,
  seen: ReadonlySet<string> = new Set(),
): Promise<string | undefined> {
  const text = await readFile(join(recipe.root, ...recipe.dockerfile.split('/')), 'utf8');
  for (const ref of externalImageRefs(text, buildArgs)) {
    if ((await engine.imageInfo(ref)) !== undefined || matchBaseMap(entries, ref) !== undefined) continue;
    const producer = recipes.find((r) => r.product === ref);
    if (producer !== undefined && !seen.has(producer.product)) {
      const below = await unsupportedReason(engine, producer, recipes, entries, buildArgs, new Set([...seen, recipe.product]));
      if (below === undefined) continue;
      return `needs ${producer.product}, which ${below}`;
    }
    return `needs ${ref} (${refOrigin(parseDockerfile(text, buildArgs), ref, buildArgs)}): no local image, dataset recipe or base-image map entry provides it, and no registry is used offline`;
  }
  return undefined;
}

export async function buildDatasetBases(engine: Engine, dir: string, options: DatasetBuildOptions = {}): Promise<DatasetBaseRow[]> {
  const root = await findDatasetRoot(dir);
  if (root === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `no docker/bases/ folder at or above ${dir}`, {
      file: dir,
      hint: 'point --dataset at a dataset checkout (the folder with docker/bases/<family>/plain.Dockerfile)',
    });
  }
  const recipes = await listDatasetRecipes(root);
  const fileMap = await loadBaseMap();
  const entries = [...(options.baseMapEntries ?? []), ...fileMap.entries];
  const buildArgs = options.buildArgs ?? {};
  const rows: DatasetBaseRow[] = [];
  for (const recipe of recipes) {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    const base = { recipe: recipe.dockerfile, product: recipe.product, substitutions: [], translations: [], bases: [] };
    const reason = await unsupportedReason(engine, recipe, recipes, entries, buildArgs);
    if (reason !== undefined) {
      rows.push({ ...base, status: 'unsupported', reason, seconds: seconds() });
      continue;
    }
    try {
      const onProgress = options.onProgress;
      // The same request a task build makes for it on demand, so either finds the other's image.
      const result = await engine.buildImage({
        repository: recipe.repository,
        kind: 'dataset-base-image',
        contextDir: recipe.root,
        dockerfile: recipe.dockerfile,
        buildArgs,
        labels: { [LABELS.recipe]: recipe.dockerfile },
        baseMap: { extraEntries: options.baseMapEntries ?? [] },
        ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
        ...(onProgress === undefined ? {} : { onProgress: (line: string) => onProgress(`[${recipe.dockerfile}] ${line}`) }),
      });
      rows.push({
        ...base,
        status: result.built ? 'built' : 'cached',
        image: result.tag,
        substitutions: [...result.substitutions, ...(result.inherited ?? [])],
        translations: [...(result.translations ?? [])],
        bases: [...(result.bases ?? [])],
        seconds: seconds(),
      });
    } catch (e) {
      if (!(e instanceof AuthbenchError) || !['IMAGE_BUILD_FAILED', 'IMAGE_NOT_FOUND', 'BASE_IMAGE_FAILED'].includes(e.code)) throw e;
      rows.push({ ...base, status: 'failed', reason: [e.message, ...e.details.slice(-3)].join(' | '), seconds: seconds() });
    }
  }
  return rows;
}
