import { chmod, readFile as readHostFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthbenchError, ENV, readEnv, writeFileAtomic } from '../../core/index.ts';
import type { BuildProgress, Container, Engine } from '../../docker/index.ts';
import { LAUNCHER_PATH } from './argv.ts';

/** The directory holding ab-launch.c and its builder Dockerfile. */
export const LAUNCHER_SOURCE_DIR = dirname(fileURLToPath(import.meta.url));

const BUILDER_REPOSITORY = 'authbench/launcher-builder';
const BINARY_IN_BUILDER = '/out/ab-launch';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return readEnv(ENV.AUTHBENCH_CACHE_DIR, env) ?? join(homedir(), '.cache', 'authbench');
}

export interface EnsureLauncherOptions {
  onProgress?: BuildProgress;
  env?: NodeJS.ProcessEnv;
}

/**
 * Build ab-launch from source in the builder image (cached by Docker content
 * hash) and return the host path of the static binary, cached under
 * <cache>/launcher/<content hash>/ so later runs skip the container entirely.
 */
export async function ensureLauncher(engine: Engine, options: EnsureLauncherOptions = {}): Promise<string> {
  const build = await engine.buildImage({
    repository: BUILDER_REPOSITORY,
    kind: 'builder-image',
    contextDir: LAUNCHER_SOURCE_DIR,
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  const hostPath = join(cacheDir(options.env), 'launcher', build.contentHash, 'ab-launch');
  const cached = await readHostFile(hostPath).catch(() => undefined);
  if (cached !== undefined && cached.length > 0) return hostPath;

  const container = await engine.startContainer({ image: build.tag, network: 'none' });
  try {
    const binary = await container.readFile(BINARY_IN_BUILDER);
    if (binary === undefined || binary.length === 0) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher builder image ${build.tag} has no ${BINARY_IN_BUILDER}`, {
        hint: 'rebuild it: remove the image and run again',
      });
    }
    await writeFileAtomic(hostPath, binary);
    await chmod(hostPath, 0o755);
    return hostPath;
  } finally {
    await container.remove();
  }
}

/** Copy the launcher binary into a container at LAUNCHER_PATH, mode 0755. */
export async function installLauncher(container: Container, binaryPath: string): Promise<string> {
  const binary = await readHostFile(binaryPath);
  await container.putFiles(dirname(LAUNCHER_PATH), { 'ab-launch': binary }, 0o755);
  return LAUNCHER_PATH;
}
