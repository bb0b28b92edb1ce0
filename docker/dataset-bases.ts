/**
 * Base images a dataset builds itself. AuthBench tasks start
 * `FROM ${AUTHBENCH_<FAMILY>_PLAIN_BASE}` (default
 * `authbench-<family>-plain-base:local`), an image its
 * `docker/scripts/build-base.sh` builds from
 * `docker/bases/<family>/plain.Dockerfile` with the dataset root as context.
 * We find those recipes by walking up from a task to the first folder with
 * `docker/bases/`, and build them like any image (content-hash tag under
 * `authbench/dataset-base-<family>-<variant>`, FROM substituted), so the
 * task's FROM can point at the result.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { compareStrings } from '../core/index.ts';
import { normalizeImageRef } from './base-map.ts';

export interface DatasetRecipe {
  /** The dataset root (the build context, as build-base.sh uses it). */
  root: string;
  family: string;
  /** `plain`, `openclaw`, … (the file name without `.Dockerfile`). */
  variant: string;
  /** Relative to the root, `/`-separated: `docker/bases/<family>/<variant>.Dockerfile`. */
  dockerfile: string;
  /** The image the dataset's scripts tag, which task Dockerfiles name: `authbench-<family>-<variant>-base:local`. */
  product: string;
  /** Where authbench keeps the build (tag = content hash). */
  repository: string;
}

export function recipeProduct(family: string, variant: string): string {
  return `authbench-${family}-${variant}-base:local`;
}

export function datasetBaseRepository(family: string, variant: string): string {
  return `authbench/dataset-base-${family.toLowerCase()}-${variant.toLowerCase()}`;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** The nearest folder at or above `start` that has `docker/bases/`. */
export async function findDatasetRoot(start: string): Promise<string | undefined> {
  let dir = resolve(start);
  for (;;) {
    if (await isDirectory(join(dir, 'docker', 'bases'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Every `docker/bases/<family>/<variant>.Dockerfile` under a dataset root, sorted. */
export async function listDatasetRecipes(root: string): Promise<DatasetRecipe[]> {
  const basesDir = join(root, 'docker', 'bases');
  const out: DatasetRecipe[] = [];
  const families = (await readdir(basesDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  for (const family of families.sort(compareStrings)) {
    const files = (await readdir(join(basesDir, family))).filter((f) => f.endsWith('.Dockerfile')).sort(compareStrings);
    for (const file of files) {
      const variant = file.slice(0, -'.Dockerfile'.length);
      out.push({
        root,
        family,
        variant,
        dockerfile: `docker/bases/${family}/${file}`,
        product: recipeProduct(family, variant),
        repository: datasetBaseRepository(family, variant),
      });
    }
  }
  return out;
}

/** The recipe that produces `ref`, among those of the dataset above `contextDir`. */
export async function recipeFor(contextDir: string, ref: string): Promise<DatasetRecipe | undefined> {
  const root = await findDatasetRoot(contextDir);
  if (root === undefined) return undefined;
  const wanted = normalizeImageRef(ref);
  return (await listDatasetRecipes(root)).find((r) => normalizeImageRef(r.product) === wanted);
}
