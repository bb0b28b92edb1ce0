import { chmod, readFile as readHostFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthbenchError, ENV, readEnv, writeFileAtomic } from '../../core/index.ts';
import type { BuildProgress, Container, Engine } from '../../docker/index.ts';
import { HARNESS_ROOT, LAUNCHER_PATH } from './argv.ts';

/** The directory holding ab-launch.c and its builder Dockerfile. */
export const LAUNCHER_SOURCE_DIR = dirname(fileURLToPath(import.meta.url));

const BUILDER_REPOSITORY = 'authbench/launcher-builder';
const BINARY_IN_BUILDER = '/out/ab-launch';
const HARNESS_IN_BUILDER = '/out/harness';
const MANIFEST_IN_BUILDER = '/out/harness.sha256';

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

/** The harness every task container mounts read-only at HARNESS_ROOT. */
export interface Harness {
  /** The named volume holding it (one per content hash of the launcher sources). */
  volume: string;
  contentHash: string;
  /** `sha256  ./path` lines for every file in it, as checked after it was filled. */
  manifest: string;
}

/** One check per engine and content hash per process: verifying starts a container. */
const harnesses = new WeakMap<Engine, Map<string, Promise<Harness>>>();

/**
 * The harness volume: ab-launch (launcher, session agent, validation helpers), strace and the
 * libraries and loader it runs on, built from source in the builder image and copied into a
 * named volume that task containers mount read-only — so no command, whatever its policy, can
 * replace the launcher or the tracer, and task images need neither. The volume's content is
 * checked against the builder's manifest (sha256 of every file) whenever a process first uses
 * it: a volume that was emptied, half-filled or changed is rebuilt, never trusted.
 */
export function ensureHarness(engine: Engine, options: EnsureLauncherOptions = {}): Promise<Harness> {
  const perEngine = harnesses.get(engine) ?? new Map<string, Promise<Harness>>();
  harnesses.set(engine, perEngine);
  const key = 'harness';
  let pending = perEngine.get(key);
  if (pending === undefined) {
    pending = prepareHarness(engine, options);
    perEngine.set(key, pending);
    pending.catch(() => perEngine.delete(key));
  }
  return pending;
}

async function prepareHarness(engine: Engine, options: EnsureLauncherOptions): Promise<Harness> {
  const build = await engine.buildImage({
    repository: BUILDER_REPOSITORY,
    kind: 'builder-image',
    contextDir: LAUNCHER_SOURCE_DIR,
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  const volume = `authbench-harness-${build.contentHash.slice(0, 16)}`;
  const check = async (): Promise<{ expected: string; found: string }> => {
    const container = await engine.startContainer({ image: build.tag, network: 'none', volumes: [{ volume, target: '/h', readOnly: true }] });
    try {
      const expected = (await container.readFile(MANIFEST_IN_BUILDER))?.toString('utf8') ?? '';
      const listed = await container.exec({ cmd: ['sh', '-c', 'cd /h && find . -type f -exec sha256sum {} + | sort -k2'], timeoutMs: 60_000 });
      return { expected, found: listed.exitCode === 0 ? listed.stdout : '' };
    } finally {
      await container.remove();
    }
  };
  if (await engine.volumeExists(volume)) {
    const { expected, found } = await check();
    if (expected !== '' && expected === found) return { volume, contentHash: build.contentHash, manifest: expected };
    // Damaged or half-filled: rebuild it (refused by the daemon while a container still uses it).
    await engine.removeVolume(volume);
  }
  await engine.createVolume(volume, 'harness-volume', { 'authbench.content-hash': build.contentHash });
  const filler = await engine.startContainer({ image: build.tag, network: 'none', volumes: [{ volume, target: '/h', readOnly: false }] });
  try {
    const copied = await filler.exec({ cmd: ['cp', '-a', `${HARNESS_IN_BUILDER}/.`, '/h/'], timeoutMs: 60_000 });
    if (copied.exitCode !== 0) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `could not fill the harness volume ${volume}`, { details: copied.stderr.trim().split('\n').slice(-3) });
    }
  } finally {
    await filler.remove();
  }
  const { expected, found } = await check();
  if (expected === '' || expected !== found) {
    await engine.removeVolume(volume).catch(() => undefined);
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the harness volume ${volume} does not hold what the builder made`, {
      hint: 'remove it (`authbench clean`) and run again',
    });
  }
  return { volume, contentHash: build.contentHash, manifest: expected };
}

/** The read-only mount of the harness in a task container. */
export function harnessMount(harness: Pick<Harness, 'volume'>): { volume: string; target: string; readOnly: true } {
  return { volume: harness.volume, target: HARNESS_ROOT, readOnly: true };
}
