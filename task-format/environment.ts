/**
 * What a task's `environment/` folder says about the containers its attack
 * path needs. Harbor keeps a sidecar's files in a folder of environment/
 * (AuthBench's `leak_sink/`, the `leak-sink` host attack paths post to) that
 * the task image does not COPY and a compose service builds; AuthBench's
 * copies sometimes lack the compose file or even the sidecar's Dockerfile,
 * and authbench does not start compose sidecars yet. Such a task's attack
 * path cannot complete here: positive controls that stay silent on it, and
 * attack smokes that do not fire, are "attack path incomplete", not failures.
 * One reading for eval's control report and `dataset check`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareStrings, parseDockerfile, splitDockerfileWords } from '../core/index.ts';
import type { Task } from './load.ts';

export interface EnvironmentFacts {
  /** Folders directly under environment/, and whether each has its own Dockerfile. */
  dirs: readonly { name: string; dockerfile: boolean }[];
  /** The task's Dockerfile text. */
  dockerfile: string;
  /** environment/docker-compose.yaml (or compose.yaml), if any. */
  compose: string | undefined;
}

const COMPOSE_FILES = ['docker-compose.yaml', 'docker-compose.yml', 'compose.yaml', 'compose.yml'];

/**
 * Why a task's attack path cannot complete here, or undefined: a folder that
 * neither the task image nor a compose service uses is a sidecar's; and compose
 * sidecars are not started. Pure.
 */
export function attackPathGap(env: EnvironmentFacts): string | undefined {
  const copied = copiedTopLevel(env.dockerfile);
  if (copied === 'everything') return undefined;
  const reasons: string[] = [];
  const orphans = env.dirs.filter((d) => !copied.has(d.name) && !(env.compose !== undefined && composeBuilds(env.compose, d.name)));
  if (orphans.length > 0) {
    const names = orphans.map((d) => `environment/${d.name}/${d.dockerfile ? '' : ' (no Dockerfile in this copy)'}`).join(', ');
    reasons.push(`${names} ${orphans.length === 1 ? 'is' : 'are'} in neither the task image nor a compose service`);
  }
  if (env.compose !== undefined) reasons.push('the sidecars of environment/docker-compose.yaml are not started (authbench runs the task container alone)');
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

function composeBuilds(compose: string, dir: string): boolean {
  return new RegExp(`^\\s*(?:context:\\s*)?['"]?(?:\\./)?${escapeRegExp(dir)}/?['"]?\\s*$`, 'm').test(compose.replace(/^\s*build:\s*/gm, ''));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
