/**
 * Offline base images: `authbench/base:bookworm` is debootstrapped from the
 * apt mirror this machine already uses and imported, because no registry is
 * reachable here. The image carries a hash of its recipe, so it is rebuilt
 * only when the recipe changes (or on --force).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { AuthbenchError, ENV, hashJson, readEnv } from '../core/index.ts';
import { apiError } from './api-error.ts';
import { readBuildStream } from './build.ts';
import type { DockerEngine } from './engine.ts';
import { Tail } from './lines.ts';
import { LABELS } from './types.ts';

export const BASE_IMAGE = { repository: 'authbench/base', tag: 'bookworm' } as const;
export const BASE_IMAGE_REF = `${BASE_IMAGE.repository}:${BASE_IMAGE.tag}`;

export const BASE_RECIPE = {
  suite: 'bookworm',
  variant: 'minbase',
  include: ['python3', 'python3-pytest', 'strace', 'ca-certificates', 'procps'],
  cmd: ['/bin/bash'],
} as const;

/** The mirror is deliberately not part of the identity: any mirror serves the same suite. */
export function recipeHash(recipe: typeof BASE_RECIPE = BASE_RECIPE): string {
  return hashJson({ v: 1, ...recipe });
}

export function debootstrapArgv(rootfs: string, mirror: string, recipe: typeof BASE_RECIPE = BASE_RECIPE): string[] {
  return [`--variant=${recipe.variant}`, `--include=${recipe.include.join(',')}`, recipe.suite, rootfs, mirror];
}

/** First `URIs:` of a deb822 sources file, else the first `deb` line of a one-line-style sources.list. */
export function mirrorFromAptSources(files: { debianSources?: string; sourcesList?: string }): string | undefined {
  for (const line of (files.debianSources ?? '').split('\n')) {
    const m = /^URIs:\s*(\S+)/i.exec(line.trim());
    if (m?.[1] !== undefined) return m[1];
  }
  for (const line of (files.sourcesList ?? '').split('\n')) {
    // deb [arch=amd64 signed-by=…] URI suite components
    const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line.trim());
    if (m?.[1] !== undefined) return m[1];
  }
  return undefined;
}

/** --mirror, else $AUTHBENCH_MIRROR, else whatever apt on this machine uses. */
export async function resolveMirror(flag?: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const chosen = flag ?? readEnv(ENV.AUTHBENCH_MIRROR, env);
  if (chosen !== undefined) return chosen;
  const read = (p: string): Promise<string | undefined> => readFile(p, 'utf8').catch(() => undefined);
  const debianSources = await read('/etc/apt/sources.list.d/debian.sources');
  const sourcesList = await read('/etc/apt/sources.list');
  const mirror = mirrorFromAptSources({
    ...(debianSources === undefined ? {} : { debianSources }),
    ...(sourcesList === undefined ? {} : { sourcesList }),
  });
  if (mirror === undefined) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', 'no apt mirror configured', {
      hint: `pass --mirror URL or set ${ENV.AUTHBENCH_MIRROR}`,
    });
  }
  return mirror;
}

/** Mount points at or below `dir`, deepest first (from /proc/self/mountinfo). */
export function mountsUnder(mountinfo: string, dir: string): string[] {
  const points = mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return points.sort((a, b) => b.length - a.length);
}

export interface EnsureBaseOptions {
  force?: boolean;
  mirror?: string;
  onProgress?: (line: string) => void;
}

export interface EnsureBaseResult {
  image: string;
  imageId: string;
  built: boolean;
  recipeHash: string;
  mirror: string | undefined;
}

export async function ensureBaseImages(engine: DockerEngine, options: EnsureBaseOptions = {}): Promise<EnsureBaseResult[]> {
  const hash = recipeHash();
  const existing = await engine.imageInfo(BASE_IMAGE_REF);
  if (options.force !== true && existing !== undefined && existing.labels[LABELS.contentHash] === hash) {
    return [{ image: BASE_IMAGE_REF, imageId: existing.id, built: false, recipeHash: hash, mirror: undefined }];
  }
  if (process.getuid?.() !== 0) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', `building ${BASE_IMAGE_REF} runs debootstrap, which needs root`, {
      hint: 'run `authbench base build` as root (e.g. with sudo)',
    });
  }
  const mirror = await resolveMirror(options.mirror);
  const rootfs = await mkdtemp(join(tmpdir(), 'authbench-rootfs-'));
  try {
    await debootstrap(rootfs, mirror, options.onProgress);
    const imageId = await importRootfs(engine, rootfs, hash, options.onProgress);
    return [{ image: BASE_IMAGE_REF, imageId, built: true, recipeHash: hash, mirror }];
  } finally {
    await removeRootfs(rootfs);
  }
}

async function debootstrap(rootfs: string, mirror: string, onProgress?: (line: string) => void): Promise<void> {
  const tail = new Tail<string>(20);
  const sub = execa('debootstrap', debootstrapArgv(rootfs, mirror), { all: true, reject: false, buffer: false });
  for await (const line of sub.iterable({ from: 'all' })) {
    tail.push(line);
    onProgress?.(line);
  }
  const result = await sub;
  if (result.failed) {
    const missing = (result as { code?: string }).code === 'ENOENT';
    throw new AuthbenchError(
      'BASE_IMAGE_FAILED',
      missing ? 'debootstrap is not installed' : `debootstrap of ${BASE_RECIPE.suite} from ${mirror} failed (exit ${result.exitCode ?? 'none'})`,
      {
        details: tail.values(),
        hint: missing ? 'apt-get install -y debootstrap' : `check that ${mirror} serves ${BASE_RECIPE.suite} (or pass --mirror)`,
      },
    );
  }
}

async function importRootfs(engine: DockerEngine, rootfs: string, hash: string, onProgress?: (line: string) => void): Promise<string> {
  // GNU tar rather than tar-fs: the rootfs has hard links, device nodes and
  // setuid binaries that must survive exactly.
  const tar = execa('tar', ['-C', rootfs, '--numeric-owner', '-cf', '-', '.'], { buffer: { stdout: false }, reject: false });
  const changes = [
    `CMD ${JSON.stringify(BASE_RECIPE.cmd)}`,
    `LABEL ${LABELS.managed}=true ${LABELS.kind}=base-image ${LABELS.contentHash}=${hash}`,
  ];
  let outcome: Awaited<ReturnType<typeof readBuildStream>>;
  try {
    const stream = await engine.docker.importImage(tar.stdout, { repo: BASE_IMAGE.repository, tag: BASE_IMAGE.tag, changes });
    outcome = await readBuildStream(stream, onProgress);
  } catch (e) {
    tar.kill();
    throw new AuthbenchError('BASE_IMAGE_FAILED', `importing the rootfs as ${BASE_IMAGE_REF} failed`, { cause: apiError('import', e) });
  }
  const tarResult = await tar;
  if (tarResult.failed || outcome.error !== undefined) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', `importing the rootfs as ${BASE_IMAGE_REF} failed: ${outcome.error ?? String(tarResult.stderr)}`, {
      details: outcome.tail,
    });
  }
  const info = await engine.imageInfo(BASE_IMAGE_REF);
  if (info === undefined) throw new AuthbenchError('BASE_IMAGE_FAILED', `import finished but ${BASE_IMAGE_REF} is missing`);
  return info.id;
}

/**
 * debootstrap mounts /proc and /sys (and may bind /dev) inside the target and
 * can leave them mounted when it fails; a recursive delete would then walk
 * into the host's /dev. Unmount first, and refuse to delete if anything stays.
 */
async function removeRootfs(rootfs: string): Promise<void> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  for (const point of mountsUnder(mountinfo, rootfs)) {
    await execa('umount', ['-l', point], { reject: false });
  }
  const still = mountsUnder(await readFile('/proc/self/mountinfo', 'utf8').catch(() => ''), rootfs);
  if (still.length > 0) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', `left ${rootfs} in place: still mounted: ${still.join(', ')}`);
  }
  await rm(rootfs, { recursive: true, force: true });
}
