/**
 * `authbench tasks generate`: families × per-family count × seed → task
 * folders and a manifest. Deterministic: the same inputs give byte-identical
 * folders, so the committed suite can be checked against a regeneration.
 */
import { mkdir, readdir, rename, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { STAGES, type Stage } from '../task-format/index.ts';
import { drawFor } from './draw.ts';
import { FAMILIES, SUITE_FAMILIES } from './families/index.ts';
import { STAGE_ABBREVIATIONS, type Family, type FileSpec } from './family.ts';
import { listenerScenarios } from './listener.ts';
import { memoryLiveScenarios } from './memory-live.ts';
import { topologyScenarios } from './topology.ts';
import { MANIFEST_FILE, type Manifest } from './manifest.ts';
import { BASES_DIR, contentHash, renderFamilyBase, renderScenario } from './render.ts';
import { activeTaintedScenario, cleanScenario, memoryScenario, securityScenario, type InjectionWording, type Scenario } from './scenario.ts';

export const GENERATOR_VERSION = '1';

/** Stage of the j-th scenario of a family: round robin, so any count spreads over the stages evenly. */
export const STAGE_CYCLE: readonly Stage[] = STAGES;

export interface SuiteOptions {
  /** Family ids; default the bundled suite's (SUITE_FAMILIES). */
  families?: readonly string[];
  perFamily: number;
  seed: number;
}

export interface GeneratedSuite {
  scenarios: { scenario: Scenario; files: Record<string, FileSpec>; hash: string }[];
  bases: { family: Family; files: Record<string, FileSpec>; hash: string }[];
  manifest: Manifest;
}

export function selectFamilies(ids: readonly string[] | undefined): Family[] {
  if (ids === undefined || ids.length === 0) return [...SUITE_FAMILIES];
  return ids.map((id) => {
    const f = FAMILIES.find((x) => x.id === id);
    if (f === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `unknown family ${id}`, { field: 'families', hint: `known: ${FAMILIES.map((x) => x.id).join(', ')}` });
    return f;
  });
}

/** `wording` replaces a security scenario's injected wording (attack search); other stages ignore it. */
export function buildScenario(family: Family, index: number, seed: number, wording?: InjectionWording): Scenario {
  const stage = STAGE_CYCLE[index % STAGE_CYCLE.length] ?? 'clean';
  const instance = Math.floor(index / STAGE_CYCLE.length);
  const who = { id: `${family.id}-${STAGE_ABBREVIATIONS[stage]}-${instance}`, family, cluster: `${family.id}-${instance}` };
  const data = () => drawFor(`${seed}/${family.id}/${instance}`);
  const kit = drawFor(`${seed}/${family.id}/${instance}/${stage}/kit`);
  switch (stage) {
    case 'clean':
      return cleanScenario(who, family.clean(data()));
    case 'active-tainted':
      return activeTaintedScenario(who, family.activeTainted(data()));
    case 'security':
      return securityScenario(who, family.clean(data()), kit, wording);
    case 'memory-recovery':
      return memoryScenario(who, family.clean(data()), kit);
  }
}

export function generateSuite(options: SuiteOptions): GeneratedSuite {
  if (!Number.isInteger(options.perFamily) || options.perFamily < 1)
    throw new AuthbenchError('INVALID_ARGUMENT', `--per-family must be a positive integer, got ${options.perFamily}`, { field: 'per-family' });
  const families = selectFamilies(options.families);
  const render = (scenario: Scenario) => {
    const files = renderScenario(scenario);
    return { scenario, files, hash: contentHash(files) };
  };
  const scenarios = families.flatMap((family) => [
    ...Array.from({ length: options.perFamily }, (_, j) => render(buildScenario(family, j, options.seed))),
    // The listener-sink variant rides along with the family's first instance (suite/listener.ts).
    ...listenerScenarios(family, options.seed).map(render),
    // So do the live two-episode memory variants (suite/memory-live.ts).
    ...memoryLiveScenarios(family, options.seed).map(render),
    // And the multi-agent topology variants (suite/topology.ts).
    ...topologyScenarios(family, options.seed).map(render),
  ]);
  const bases = families.map((family) => {
    const files = renderFamilyBase(family);
    return { family, files, hash: contentHash(files) };
  });
  const count = (key: (s: Scenario) => string) => {
    const out: Record<string, number> = {};
    for (const { scenario } of scenarios) out[key(scenario)] = (out[key(scenario)] ?? 0) + 1;
    return out;
  };
  const manifest: Manifest = {
    schema_version: 1,
    generator_version: GENERATOR_VERSION,
    seed: options.seed,
    per_family: options.perFamily,
    families: bases.map((b) => ({ id: b.family.id, version: b.family.version, title: b.family.title, base_sha256: b.hash })),
    counts: { by_stage: count((s) => s.stage), by_family: count((s) => s.family.id) },
    scenarios: scenarios.map(({ scenario: s, hash }) => ({
      id: s.id,
      family: s.family.id,
      family_version: s.family.version,
      stage: s.stage,
      cluster: s.cluster,
      instance: Number(s.cluster.slice(s.cluster.lastIndexOf('-') + 1)),
      parameters: s.parameters,
      content_sha256: hash,
    })),
  };
  return { scenarios, bases, manifest };
}

async function writeTree(root: string, files: Record<string, FileSpec>): Promise<void> {
  for (const [rel, file] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content);
    // Explicit: the umask must not decide a secret's or a script's mode in the image.
    await chmod(path, file.mode ?? 0o644);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Write the suite into `dir`, replacing a previous generation as a whole
 * (written beside it, then swapped), so an interrupted run never leaves half
 * a suite. A non-empty `dir` that is not a generated suite is refused.
 */
export async function writeSuite(dir: string, suite: GeneratedSuite): Promise<void> {
  if ((await exists(dir)) && !(await exists(join(dir, MANIFEST_FILE))) && (await readdir(dir)).length > 0)
    throw new AuthbenchError('INVALID_ARGUMENT', `${dir} exists and is not a generated suite (no ${MANIFEST_FILE}); refusing to replace it`, { file: dir });
  const staging = `${dir}.generating-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  for (const { scenario, files } of suite.scenarios) await writeTree(join(staging, scenario.id), files);
  for (const { family, files } of suite.bases) await writeTree(join(staging, BASES_DIR, family.id), files);
  await writeFile(join(staging, MANIFEST_FILE), `${JSON.stringify(suite.manifest, null, 2)}\n`);
  const old = `${dir}.replaced-${process.pid}`;
  if (await exists(dir)) await rename(dir, old);
  await rename(staging, dir);
  await rm(old, { recursive: true, force: true });
}

export interface SuiteDifference {
  path: string;
  problem: string;
}

/** What differs between a folder on disk and a fresh generation (missing, changed, extra files and modes). */
export async function diffSuite(dir: string, suite: GeneratedSuite): Promise<SuiteDifference[]> {
  const { readFile } = await import('node:fs/promises');
  const expected = new Map<string, FileSpec>();
  for (const { scenario, files } of suite.scenarios) for (const [rel, f] of Object.entries(files)) expected.set(join(scenario.id, rel), f);
  for (const { family, files } of suite.bases) for (const [rel, f] of Object.entries(files)) expected.set(join(BASES_DIR, family.id, rel), f);
  expected.set(MANIFEST_FILE, { content: `${JSON.stringify(suite.manifest, null, 2)}\n` });
  const out: SuiteDifference[] = [];
  const present = new Set(await listFiles(dir, ''));
  for (const [rel, file] of expected) {
    if (!present.has(rel)) {
      out.push({ path: join(dir, rel), problem: 'missing' });
      continue;
    }
    const path = join(dir, rel);
    if ((await readFile(path, 'utf8')) !== file.content) out.push({ path, problem: 'content differs' });
    else if (((await stat(path)).mode & 0o777) !== (file.mode ?? 0o644)) out.push({ path, problem: 'mode differs' });
  }
  for (const rel of present) if (!expected.has(rel)) out.push({ path: join(dir, rel), problem: 'not generated (extra file)' });
  return out.sort((a, b) => compareStrings(a.path, b.path));
}

async function listFiles(root: string, rel: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(join(root, rel));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const r = rel === '' ? name : join(rel, name);
    if ((await stat(join(root, r))).isDirectory()) out.push(...(await listFiles(root, r)));
    else out.push(r);
  }
  return out;
}
