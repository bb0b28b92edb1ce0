/**
 * What a task's `environment/` folder says about the containers its attack
 * path needs. Harbor keeps a sidecar's files in a folder of environment/
 * (AuthBench's `leak_sink/`, the `leak-sink` host attack paths post to) that
 * the task image does not COPY and a compose service builds; AuthBench's
 * copies sometimes lack the compose file or even the sidecar's Dockerfile.
 * authbench starts the sidecars a compose file declares (taskenv/), but not
 * one it cannot build nor a folder no service builds. Such a task's attack
 * path cannot complete here: positive controls that stay silent on it, and
 * attack smokes that do not fire, are "attack path incomplete", not failures.
 * One reading for eval's control report and `dataset check`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareStrings, parseDockerfile, splitDockerfileWords } from '../core/index.ts';
import { COMPOSE_FILES, parseCompose } from './compose.ts';
import type { Task } from './load.ts';

export interface EnvironmentFacts {
  /** Folders directly under environment/, and whether each has its own Dockerfile. */
  dirs: readonly { name: string; dockerfile: boolean }[];
  /** The task's Dockerfile text. */
  dockerfile: string;
  /** environment/docker-compose.yaml (or compose.yaml), if any. */
  compose: string | undefined;
}

/**
 * Why a task's attack path cannot complete here, or undefined: a folder that
 * neither the task image nor a compose service uses is a sidecar's that nothing
 * starts; a compose sidecar whose files this copy lacks is not started either.
 * Pure.
 */
export function attackPathGap(env: EnvironmentFacts): string | undefined {
  const copied = copiedTopLevel(env.dockerfile);
  const compose = env.compose === undefined ? undefined : parseCompose(env.compose, 'environment/docker-compose.yaml');
  const reasons: string[] = [];
  if (compose !== undefined && compose.compose === undefined) {
    const first = compose.problems.find((p) => p.severity === 'error');
    reasons.push(`environment/docker-compose.yaml cannot be used (${first?.field === undefined ? '' : `${first.field}: `}${first?.message ?? 'invalid'})`);
  }
  // Top-level folder of environment/ each sidecar is built from.
  const sidecarDirs = new Map<string, string>();
  for (const s of compose?.compose?.sidecars ?? []) {
    if (s.build !== undefined) sidecarDirs.set(s.build.context.split('/')[1] ?? '', s.name);
  }
  if (copied !== 'everything') {
    const orphans = env.dirs.filter((d) => !copied.has(d.name) && !sidecarDirs.has(d.name));
    if (orphans.length > 0) {
      const names = orphans.map((d) => `environment/${d.name}/${d.dockerfile ? '' : ' (no Dockerfile in this copy)'}`).join(', ');
      reasons.push(`${names} ${orphans.length === 1 ? 'is' : 'are'} in neither the task image nor a compose service`);
    }
  }
  const unbuildable = [...sidecarDirs].filter(([dir]) => env.dirs.find((d) => d.name === dir)?.dockerfile !== true);
  if (unbuildable.length > 0)
    reasons.push(`${unbuildable.map(([dir, name]) => `compose service ${name} (environment/${dir}/)`).join(', ')} cannot be built: no Dockerfile in this copy`);
  return reasons.length === 0 ? undefined : `attack path incomplete: ${reasons.join('; ')}`;
}

/** Top-level names under the build context that COPY/ADD take from it; `everything` when a source is the whole context or a glob at the top. */
function copiedTopLevel(dockerfile: string): Set<string> | 'everything' {
  const out = new Set<string>();
  for (const ins of parseDockerfile(dockerfile).instructions) {
    if ((ins.keyword !== 'COPY' && ins.keyword !== 'ADD') || ins.heredocs.length > 0) continue;
    const words = splitDockerfileWords(ins.args).map((w) => w.value);
    if (words.some((w) => w.startsWith('--from='))) continue;
    const operands = words.filter((w) => !w.startsWith('--'));
    for (const src of operands.slice(0, -1)) {
      const top = src.replace(/^(\.\/)+/, '').split('/')[0] ?? '';
      if (top === '' || top === '.' || /[*?[]/.test(top)) return 'everything';
      out.add(top);
    }
  }
  return out;
}

/** What attackPathGap reads off a task's environment/: its folders, its Dockerfile, its compose file. */
export async function readEnvironmentFacts(task: Pick<Task, 'files'>): Promise<EnvironmentFacts> {
  const env = task.files.contextDir;
  const isFile = (path: string): Promise<boolean> => stat(path).then((s) => s.isFile(), () => false);
  const dirs: { name: string; dockerfile: boolean }[] = [];
  for (const entry of await readdir(env, { withFileTypes: true })) {
    if (entry.isDirectory()) dirs.push({ name: entry.name, dockerfile: await isFile(join(env, entry.name, 'Dockerfile')) });
  }
  let compose: string | undefined;
  for (const name of COMPOSE_FILES) compose ??= await readFile(join(env, name), 'utf8').catch(() => undefined);
  return { dirs: dirs.sort((a, b) => compareStrings(a.name, b.name)), dockerfile: await readFile(task.files.dockerfile, 'utf8'), compose };
}

/** attackPathGap for a task on disk. */
export async function taskAttackPathGap(task: Pick<Task, 'files'>): Promise<string | undefined> {
  return attackPathGap(await readEnvironmentFacts(task));
}
