/**
 * Offline base images: `authbench/base:<recipe>` is debootstrapped from the
 * apt mirror this machine already uses and imported, because no registry is
 * reachable here. `bookworm` is the general-purpose base; the `python…`
 * recipes stand in for the official `python:3.X` images with their layout
 * (python3.X and pip at /usr/local/bin, pip allowed to install system-wide,
 * LANG and PYTHON_VERSION set). Each image carries a hash of its recipe, so it
 * is rebuilt only when the recipe changes (or on --force).
 */
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { AuthbenchError, ENV, hashJson, readEnv } from '../core/index.ts';
import { apiError } from './api-error.ts';
import { readBuildStream } from './build-stream.ts';
import type { DockerEngine } from './engine.ts';
import type { ImageFacts } from './image-facts.ts';
import { Tail } from './lines.ts';
import { LABELS } from './types.ts';

export const BASE_REPOSITORY = 'authbench/base';

export interface OfflineBaseRecipe {
  /** The tag under BASE_REPOSITORY. */
  name: string;
  suite: string;
  variant: 'minbase';
  include: readonly string[];
  cmd: readonly string[];
  /** major.minor: lay the image out like the official `python:<python>` image. */
  python?: string;
  /** What the image provides, compared with what a substituted FROM asked for. */
  facts: ImageFacts;
}

/** The general-purpose base. Its fields (and so its hash and every image built on it) are unchanged since the first release. */
export const BASE_RECIPE = {
  suite: 'bookworm',
  variant: 'minbase',
  include: ['python3', 'python3-pytest', 'strace', 'ca-certificates', 'procps'],
  cmd: ['/bin/bash'],
} as const;

/** What the official python slim images hold besides Python (certificates, netbase, tzdata), plus pip and venv. */
const PYTHON_INCLUDE = ['python3', 'python3-pip', 'python3-venv', 'ca-certificates', 'netbase', 'tzdata'] as const;

export const OFFLINE_BASES: readonly OfflineBaseRecipe[] = [
  { name: 'bookworm', ...BASE_RECIPE, facts: { os: 'debian', osVersion: '12', python: '3.11' } },
  {
    name: 'python3.11-bookworm',
    suite: 'bookworm',
    variant: 'minbase',
    include: PYTHON_INCLUDE,
    cmd: ['python3'],
    python: '3.11',
    facts: { os: 'debian', osVersion: '12', python: '3.11' },
  },
  {
    name: 'python3.13-trixie',
    suite: 'trixie',
    variant: 'minbase',
    include: PYTHON_INCLUDE,
    cmd: ['python3'],
    python: '3.13',
    facts: { os: 'debian', osVersion: '13', python: '3.13' },
  },
];

const DEFAULT_BASE = OFFLINE_BASES[0] as OfflineBaseRecipe;
export const BASE_IMAGE = { repository: BASE_REPOSITORY, tag: DEFAULT_BASE.name } as const;
export const BASE_IMAGE_REF = `${BASE_IMAGE.repository}:${BASE_IMAGE.tag}`;

export function offlineBaseRef(recipe: OfflineBaseRecipe): string {
  return `${BASE_REPOSITORY}:${recipe.name}`;
}

/** The recipe an `authbench/base:<name>` reference names, if any. */
export function offlineBaseRecipe(ref: string): OfflineBaseRecipe | undefined {
  return OFFLINE_BASES.find((r) => offlineBaseRef(r) === ref || `docker.io/${offlineBaseRef(r)}` === ref);
}

/** Bump when the python layout steps change, so those images rebuild. */
const PYTHON_LAYOUT_VERSION = 1;

/** The mirror is deliberately not part of the identity: any mirror serves the same suite. */
export function recipeHash(recipe: Omit<OfflineBaseRecipe, 'name' | 'facts'> = BASE_RECIPE): string {
  const { suite, variant, include, cmd, python } = recipe;
  return hashJson({ v: 1, suite, variant, include, cmd, python, layout: python === undefined ? undefined : PYTHON_LAYOUT_VERSION });
}

export function debootstrapArgv(rootfs: string, mirror: string, recipe: Pick<OfflineBaseRecipe, 'variant' | 'include' | 'suite'> = BASE_RECIPE): string[] {
  return [`--variant=${recipe.variant}`, `--include=${recipe.include.join(',')}`, recipe.suite, rootfs, mirror];
}

export type LayoutStep = { op: 'symlink'; path: string; target: string } | { op: 'remove'; path: string };

/**
 * The official python image's layout over Debian's interpreter: tasks call
 * /usr/local/bin/python3 and `pip install` system-wide (Debian's PEP 668
 * marker would refuse it, the official image has none).
 */
export function pythonLayout(python: string): LayoutStep[] {
  return [
    { op: 'symlink', path: `/usr/local/bin/python${python}`, target: `/usr/bin/python${python}` },
    { op: 'symlink', path: '/usr/local/bin/python3', target: `python${python}` },
    { op: 'symlink', path: '/usr/local/bin/python', target: 'python3' },
    { op: 'symlink', path: '/usr/local/bin/pip3', target: '/usr/bin/pip3' },
    { op: 'symlink', path: `/usr/local/bin/pip${python}`, target: 'pip3' },
    { op: 'symlink', path: '/usr/local/bin/pip', target: 'pip3' },
    { op: 'remove', path: `/usr/lib/python${python}/EXTERNALLY-MANAGED` },
  ];
}

/** The Version of an installed package in a dpkg status file (`3.13.5-2` → `3.13.5` with `upstream`). */
export function dpkgVersion(status: string, pkg: string, upstream = false): string | undefined {
  for (const stanza of status.split(/\n\s*\n/)) {
    if (!new RegExp(`^Package: ${pkg.replace(/[.+]/g, '\\$&')}$`, 'm').test(stanza)) continue;
    const version = /^Version: (\S+)$/m.exec(stanza)?.[1];
    if (version === undefined) return undefined;
    return upstream ? version.replace(/^\d+:/, '').replace(/-[^-]*$/, '').replace(/\+.*$/, '') : version;
  }
  return undefined;
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
  /** Recipe names to ensure (default: the general-purpose `bookworm`). */
  recipes?: readonly string[];
}

export interface EnsureBaseResult {
  image: string;
  imageId: string;
  built: boolean;
  recipeHash: string;
  mirror: string | undefined;
  /** Seconds spent (debootstrap and import), 0 when up to date. */
  seconds: number;
}

export async function ensureBaseImages(engine: DockerEngine, options: EnsureBaseOptions = {}): Promise<EnsureBaseResult[]> {
  const names = options.recipes ?? [DEFAULT_BASE.name];
  const out: EnsureBaseResult[] = [];
  for (const name of names) {
    const recipe = OFFLINE_BASES.find((r) => r.name === name);
    if (recipe === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `no offline base recipe named ${name}`, {
        hint: `recipes: ${OFFLINE_BASES.map((r) => r.name).join(', ')}`,
      });
    }
    out.push(await ensureBaseImage(engine, recipe, options));
  }
  return out;
}

/** What making a base needs from the engine (a build host has it too). */
export type BaseHost = Pick<DockerEngine, 'docker' | 'imageInfo'>;

/** Two builds that need the same missing base share one debootstrap. */
const inFlight = new WeakMap<BaseHost, Map<string, Promise<EnsureBaseResult>>>();

export function ensureBaseImage(engine: BaseHost, recipe: OfflineBaseRecipe, options: Omit<EnsureBaseOptions, 'recipes'> = {}): Promise<EnsureBaseResult> {
  const perEngine = inFlight.get(engine) ?? new Map<string, Promise<EnsureBaseResult>>();
  inFlight.set(engine, perEngine);
  const key = `${recipe.name}\0${options.force === true ? 'force' : ''}`;
  let pending = perEngine.get(key);
  if (pending === undefined) {
    pending = buildBase(engine, recipe, options).finally(() => perEngine.delete(key));
    perEngine.set(key, pending);
  }
  return pending;
}

async function buildBase(engine: BaseHost, recipe: OfflineBaseRecipe, options: Omit<EnsureBaseOptions, 'recipes'>): Promise<EnsureBaseResult> {
  const ref = offlineBaseRef(recipe);
  const hash = recipeHash(recipe);
  const existing = await engine.imageInfo(ref);
  if (options.force !== true && existing !== undefined && existing.labels[LABELS.contentHash] === hash) {
    return { image: ref, imageId: existing.id, built: false, recipeHash: hash, mirror: undefined, seconds: 0 };
  }
  if (process.getuid?.() !== 0) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', `building ${ref} runs debootstrap, which needs root`, {
      hint: `run \`authbench base build --recipe ${recipe.name}\` as root (e.g. with sudo)`,
    });
  }
  const started = performance.now();
  const mirror = await resolveMirror(options.mirror);
  const rootfs = await mkdtemp(join(tmpdir(), 'authbench-rootfs-'));
  try {
    await debootstrap(rootfs, mirror, recipe, options.onProgress);
    const env: string[] = [];
    if (recipe.python !== undefined) {
      await applyLayout(rootfs, pythonLayout(recipe.python));
      const status = await readFile(join(rootfs, 'var/lib/dpkg/status'), 'utf8');
      const full = dpkgVersion(status, `python${recipe.python}`, true);
      env.push('LANG=C.UTF-8', ...(full === undefined ? [] : [`PYTHON_VERSION=${full}`]));
    }
    const imageId = await importRootfs(engine, rootfs, recipe, hash, env, options.onProgress);
    return { image: ref, imageId, built: true, recipeHash: hash, mirror, seconds: (performance.now() - started) / 1000 };
  } finally {
    await removeRootfs(rootfs);
  }
}

async function applyLayout(rootfs: string, steps: readonly LayoutStep[]): Promise<void> {
  for (const step of steps) {
    const path = join(rootfs, step.path);
    await rm(path, { force: true });
    if (step.op === 'symlink') {
      await mkdir(dirname(path), { recursive: true });
      await symlink(step.target, path);
    }
  }
}

async function debootstrap(rootfs: string, mirror: string, recipe: OfflineBaseRecipe, onProgress?: (line: string) => void): Promise<void> {
  const tail = new Tail<string>(20);
  const sub = execa('debootstrap', debootstrapArgv(rootfs, mirror, recipe), { all: true, reject: false, buffer: false });
  for await (const line of sub.iterable({ from: 'all' })) {
    tail.push(line);
    onProgress?.(line);
  }
  const result = await sub;
  if (result.failed) {
    const missing = (result as { code?: string }).code === 'ENOENT';
    throw new AuthbenchError(
      'BASE_IMAGE_FAILED',
      missing ? 'debootstrap is not installed' : `debootstrap of ${recipe.suite} from ${mirror} failed (exit ${result.exitCode ?? 'none'})`,
      {
        details: tail.values(),
        hint: missing ? 'apt-get install -y debootstrap' : `check that ${mirror} serves ${recipe.suite} (or pass --mirror)`,
      },
    );
  }
}

async function importRootfs(
  engine: BaseHost,
  rootfs: string,
  recipe: OfflineBaseRecipe,
  hash: string,
  env: readonly string[],
  onProgress?: (line: string) => void,
): Promise<string> {
  const ref = offlineBaseRef(recipe);
  // GNU tar rather than tar-fs: the rootfs has hard links, device nodes and
  // setuid binaries that must survive exactly.
  const tar = execa('tar', ['-C', rootfs, '--numeric-owner', '-cf', '-', '.'], { buffer: { stdout: false }, reject: false });
  const changes = [
    `CMD ${JSON.stringify(recipe.cmd)}`,
    ...env.map((e) => `ENV ${e}`),
    `LABEL ${LABELS.managed}=true ${LABELS.kind}=base-image ${LABELS.contentHash}=${hash}`,
  ];
  let outcome: Awaited<ReturnType<typeof readBuildStream>>;
  try {
    const stream = await engine.docker.importImage(tar.stdout, { repo: BASE_REPOSITORY, tag: recipe.name, changes });
    outcome = await readBuildStream(stream, onProgress);
  } catch (e) {
    tar.kill();
    throw new AuthbenchError('BASE_IMAGE_FAILED', `importing the rootfs as ${ref} failed`, { cause: apiError('import', e) });
  }
  const tarResult = await tar;
  if (tarResult.failed || outcome.error !== undefined) {
    throw new AuthbenchError('BASE_IMAGE_FAILED', `importing the rootfs as ${ref} failed: ${outcome.error ?? String(tarResult.stderr)}`, {
      details: outcome.tail,
    });
  }
  const info = await engine.imageInfo(ref);
  if (info === undefined) throw new AuthbenchError('BASE_IMAGE_FAILED', `import finished but ${ref} is missing`);
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
