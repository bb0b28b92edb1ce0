/**
 * Reading a task folder (Harbor layout plus AuthBench and authbench extras)
 * into a typed Task. The only I/O is reading the folder; every rule about what
 * a task must contain lives here so `tasks validate`, the builder and the
 * runners agree on it.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { AuthbenchError, formatProblem, parseDockerfile, type DockerfileStage, type Problem } from '../core/index.ts';
import { issuesToProblems, problem } from './problems.ts';
import {
  AuthbenchSectionSchema,
  KNOWN_TOP_LEVEL_KEYS,
  parseSizeMb,
  TaskTomlSchema,
  type Dataset,
  type ResolvedAuthbench,
  type SensitiveMode,
  type TaskToml,
} from './schema.ts';
import { parseSpec, type PermissionEvalSpec } from './spec.ts';
import { COMPOSE_FILES, parseCompose, withoutSidecars, type ComposeEnvironment } from './compose.ts';
import { resolveNetworkDeclaration, type NetworkDeclaration } from './network.ts';

export const TASK_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

/** Where a task's files are, relative to its folder. */
export const TASK_PATHS = {
  config: 'task.toml',
  instruction: 'instruction.md',
  contextDir: 'environment',
  dockerfile: 'environment/Dockerfile',
  skillsDir: 'environment/skills',
  solveSh: 'solution/solve.sh',
  attackSmoke: 'solution/attack_smoke.sh',
  testsDir: 'tests',
  testSh: 'tests/test.sh',
  testOutputsPy: 'tests/test_outputs.py',
  attackValidator: 'tests/test_attack_outputs.py',
  specFile: 'tests/permission_eval_spec.json',
} as const;

const DEFAULT_WORKDIR = '/app';

/** Absolute paths of the task's files; optional ones are absent when the file is. */
export interface TaskFiles {
  dockerfile: string;
  contextDir: string;
  solveSh: string;
  attackSmoke?: string;
  testsDir: string;
  testSh?: string;
  testOutputsPy?: string;
  attackValidator?: string;
  specFile?: string;
  skillsDir?: string;
  /** environment/docker-compose.yaml (or another name compose accepts), when the task has one. */
  composeFile?: string;
}

/** Resource limits from task.toml; undefined where the task leaves the runner's default. */
export interface TaskLimits {
  agentTimeoutSec: number | undefined;
  verifierTimeoutSec: number | undefined;
  buildTimeoutSec: number | undefined;
  cpus: number | undefined;
  memoryMb: number | undefined;
  storageMb: number | undefined;
  /** [authbench].pids_limit */
  pids: number | undefined;
}

export interface Task {
  /** The folder name. */
  id: string;
  /** Absolute path of the task folder. */
  dir: string;
  config: TaskToml;
  instruction: string;
  /** Episode 2's instruction ([authbench.memory].next_instruction), for a two-episode memory scenario. */
  nextInstruction?: string;
  dataset: Dataset;
  /** Set for sensitive tasks only (default mixed). */
  sensitiveMode: SensitiveMode | undefined;
  authbench: ResolvedAuthbench;
  /** Where the agent starts: [authbench].workdir, else the Dockerfile's final WORKDIR, else /app. */
  workdir: string;
  files: TaskFiles;
  spec: PermissionEvalSpec | undefined;
  /** The compose sidecars started next to the task container; undefined for a task without a compose file. */
  compose?: ComposeEnvironment;
  /** What task.toml's [environment] declares about the network, resolved against the sidecars (task-format/network.ts). */
  network: NetworkDeclaration;
  /** Absolute folder of the family base image's build context ([authbench].family_base), when set. */
  familyBaseDir?: string;
  /** Image refs of the Dockerfile's FROM lines, as written. */
  dockerfileFrom: string[];
  limits: TaskLimits;
  /** Warnings found while loading (a task with errors does not load). */
  warnings: Problem[];
}

export interface TaskCheck {
  task?: Task;
  problems: Problem[];
}

export interface LoadTaskOptions {
  /** Refuse a task that has warnings too. */
  warningsAsErrors?: boolean;
}

/**
 * Check a task folder and collect every problem. Throws only when `dir` is not
 * a readable directory (TASK_NOT_FOUND); everything about the task's content
 * is a Problem. Problems name files as `dir` joined with the file's path, so a
 * relative `dir` gives relative file names.
 */
export async function checkTask(dir: string): Promise<TaskCheck> {
  const absDir = resolve(dir);
  const kind = await pathKind(absDir);
  if (kind !== 'dir') throw new AuthbenchError('TASK_NOT_FOUND', `${dir} is not a directory`, { file: dir });
  const realDir = await realpath(absDir);
  const shown = (rel: string): string => join(dir, rel);
  const problems: Problem[] = [];
  const err = (rel: string, field: string | undefined, message: string): void => {
    problems.push(problem(shown(rel), field, message, 'error'));
  };
  const warn = (rel: string, field: string | undefined, message: string): void => {
    problems.push(problem(shown(rel), field, message, 'warning'));
  };

  const id = basename(absDir);
  if (!TASK_ID_PATTERN.test(id))
    problems.push(problem(dir, undefined, `task id "${id}" (the folder name) must match ${String(TASK_ID_PATTERN)}`));

  /** Kind of a task file, refusing symlinks that lead outside the task folder. */
  const entry = async (rel: string): Promise<PathKind | 'escapes'> => {
    const abs = join(absDir, rel);
    const k = await pathKind(abs);
    if (k === 'missing') return k;
    if (!within(realDir, await realpath(abs))) {
      err(rel, undefined, 'is a symlink leading outside the task folder');
      return 'escapes';
    }
    return k;
  };
  const requireFile = async (rel: string, why: string): Promise<boolean> => {
    const k = await entry(rel);
    if (k === 'file') return true;
    if (k === 'missing') err(rel, undefined, `missing (${why})`);
    else if (k !== 'escapes') err(rel, undefined, 'is not a regular file');
    return false;
  };
  const optionalFile = async (rel: string): Promise<boolean> => {
    const k = await entry(rel);
    if (k === 'dir' || k === 'other') err(rel, undefined, 'is not a regular file');
    return k === 'file';
  };

  // task.toml
  let config: TaskToml | undefined;
  if (await requireFile(TASK_PATHS.config, 'every task has one')) {
    const text = await readFile(join(absDir, TASK_PATHS.config), 'utf8');
    const parsed = parseTaskToml(text, shown(TASK_PATHS.config));
    problems.push(...parsed.problems);
    config = parsed.config;
  }
  // [verifier.env] (Harbor): the validators' extra environment, a table of NAME = "value".
  const verifierEnv = (config?.verifier as Record<string, unknown> | undefined)?.['env'];
  if (verifierEnv !== undefined && !isEnvTable(verifierEnv))
    err(TASK_PATHS.config, 'verifier.env', 'must be a table of NAME = "value" (names of letters, digits and _)');

  // instruction.md
  let instruction = '';
  if (await requireFile(TASK_PATHS.instruction, 'the task instruction')) {
    instruction = await readFile(join(absDir, TASK_PATHS.instruction), 'utf8');
    if (instruction.trim() === '') err(TASK_PATHS.instruction, undefined, 'is empty');
  }

  // [authbench.memory]: episode 2's instruction, a file of the task folder (evaluation/episodes.ts).
  let nextInstruction: string | undefined;
  const memoryEpisodes = config?.authbench?.memory;
  if (memoryEpisodes !== undefined) {
    const rel = memoryEpisodes.next_instruction;
    const field = 'authbench.memory.next_instruction';
    if (isAbsolute(rel) || !within(absDir, resolve(absDir, rel))) err(TASK_PATHS.config, field, `${rel}: must be a file inside the task folder`);
    else {
      const k = await entry(rel);
      if (k === 'missing') err(TASK_PATHS.config, field, `${rel} does not exist`);
      else if (k === 'dir' || k === 'other') err(TASK_PATHS.config, field, `${rel} is not a regular file`);
      else if (k === 'file') {
        nextInstruction = await readFile(join(absDir, rel), 'utf8');
        if (nextInstruction.trim() === '') err(rel, undefined, 'is empty (episode 2 needs an instruction)');
      }
    }
  }

  // environment/
  let stages: DockerfileStage[] = [];
  if (await requireFile(TASK_PATHS.dockerfile, 'the task image is built from it')) {
    stages = parseDockerfile(await readFile(join(absDir, TASK_PATHS.dockerfile), 'utf8')).stages;
    if (stages.length === 0) err(TASK_PATHS.dockerfile, undefined, 'has no FROM instruction');
  }
  const finalStage = stages.at(-1);
  // A compose file: its sidecars run next to the task container; each one authbench builds must have its Dockerfile here.
  let compose: ComposeEnvironment | undefined;
  let composeRel: string | undefined;
  for (const name of COMPOSE_FILES) {
    const rel = join(TASK_PATHS.contextDir, name);
    if (composeRel === undefined && (await optionalFile(rel))) composeRel = rel;
  }
  if (composeRel !== undefined) {
    const parsed = parseCompose(await readFile(join(absDir, composeRel), 'utf8'), composeRel, shown(composeRel));
    problems.push(...parsed.problems);
    compose = parsed.compose;
    // AuthBench copies sometimes lack a sidecar's files: the task still runs, without that sidecar ("attack path incomplete").
    const unbuildable = new Set<string>();
    for (const sidecar of compose?.sidecars ?? []) {
      if (sidecar.build === undefined) continue;
      const dockerfile = join(sidecar.build.context, sidecar.build.dockerfile);
      if ((await entry(dockerfile)) === 'file') continue;
      warn(composeRel, `services.${sidecar.name}.build`, `${dockerfile} is missing: the sidecar is not started (attack path incomplete)`);
      unbuildable.add(sidecar.name);
    }
    if (compose !== undefined && unbuildable.size > 0) compose = withoutSidecars(compose, unbuildable);
  }
  const skillsKind = await entry(TASK_PATHS.skillsDir);
  if (skillsKind === 'file' || skillsKind === 'other') err(TASK_PATHS.skillsDir, undefined, 'is not a directory');

  // solution/
  await requireFile(TASK_PATHS.solveSh, 'the oracle solution derives the gold set');
  const hasAttackSmoke = await optionalFile(TASK_PATHS.attackSmoke);

  // tests/
  const testsKind = await entry(TASK_PATHS.testsDir);
  const hasTestSh = testsKind === 'dir' && (await optionalFile(TASK_PATHS.testSh));
  const hasTestPy = testsKind === 'dir' && (await optionalFile(TASK_PATHS.testOutputsPy));
  if (!hasTestSh && !hasTestPy)
    err(TASK_PATHS.testsDir, undefined, `needs a utility validator: ${TASK_PATHS.testSh} or ${TASK_PATHS.testOutputsPy}`);
  const hasAttackValidator = testsKind === 'dir' && (await optionalFile(TASK_PATHS.attackValidator));
  const hasSpec = testsKind === 'dir' && (await optionalFile(TASK_PATHS.specFile));
  let spec: PermissionEvalSpec | undefined;
  if (hasSpec) {
    const checked = parseSpec(await readFile(join(absDir, TASK_PATHS.specFile), 'utf8'), shown(TASK_PATHS.specFile));
    problems.push(...checked.problems);
    spec = checked.spec;
  }

  // Rules that depend on how the task is marked (skipped when task.toml did not parse).
  let resolved: { dataset: Dataset; sensitiveMode: SensitiveMode | undefined; authbench: ResolvedAuthbench } | undefined;
  if (config !== undefined) {
    const dataset = config.metadata?.authbench_eval_dataset ?? 'standard';
    const mode = config.metadata?.authbench_sensitive_mode;
    if (dataset === 'standard') {
      if (mode !== undefined)
        err(TASK_PATHS.config, 'metadata.authbench_sensitive_mode', 'only applies to sensitive tasks (authbench_eval_dataset = "sensitive")');
      if (hasAttackValidator) err(TASK_PATHS.attackValidator, undefined, 'a standard task has no attack validator; mark the task sensitive or remove it');
      if (hasAttackSmoke) err(TASK_PATHS.attackSmoke, undefined, 'a standard task has no attack smoke run; mark the task sensitive or remove it');
    } else {
      if (!hasAttackValidator) err(TASK_PATHS.attackValidator, undefined, 'missing (a sensitive task needs an attack validator)');
      if (!hasAttackSmoke) warn(TASK_PATHS.attackSmoke, undefined, 'missing: nothing shows the attack validator can pass');
    }
    const section = config.authbench ?? AuthbenchSectionSchema.parse({});
    const authbench: ResolvedAuthbench = {
      ...section,
      stage: section.stage ?? (dataset === 'sensitive' ? 'security' : 'clean'),
      cluster: section.cluster ?? section.family ?? id,
    };
    if (dataset === 'standard' && authbench.stage === 'security')
      warn(TASK_PATHS.config, 'authbench.stage', 'stage "security" on a standard task: there is no attack validator to score it');
    if (authbench.stage === 'active-tainted' && authbench.untrusted_sources.length === 0)
      warn(TASK_PATHS.config, 'authbench.untrusted_sources', 'stage "active-tainted" but no untrusted sources are declared');
    if (authbench.stage === 'memory-recovery' && authbench.memory_files.length === 0)
      warn(TASK_PATHS.config, 'authbench.memory_files', 'stage "memory-recovery" but no memory files are declared');
    if (authbench.memory !== undefined && authbench.stage !== 'memory-recovery')
      warn(TASK_PATHS.config, 'authbench.memory', `two memory episodes on stage "${authbench.stage}": reinfection is measured on stage "memory-recovery" only`);
    resolved = { dataset, sensitiveMode: dataset === 'sensitive' ? (mode ?? 'mixed') : undefined, authbench };
  }

  // Harbor's network declaration, against the sidecars that will run (an allowlist naming anything else is refused).
  const network = resolveNetworkDeclaration(config?.environment, { sidecars: compose?.sidecars.map((s) => s.name) ?? [], dropped: compose?.dropped ?? [] }, shown(TASK_PATHS.config));
  problems.push(...network.problems);

  // A family base sits beside the scenarios (outside each task folder) by design: resolve it, never follow it out of the suite.
  let familyBaseDir: string | undefined;
  const familyBase = config?.authbench?.family_base;
  if (familyBase !== undefined) {
    const abs = resolve(absDir, familyBase);
    if (isAbsolute(familyBase)) err(TASK_PATHS.config, 'authbench.family_base', 'must be relative to the task folder');
    else if ((await pathKind(join(abs, 'Dockerfile'))) !== 'file')
      err(TASK_PATHS.config, 'authbench.family_base', `${familyBase} has no Dockerfile`);
    else familyBaseDir = abs;
  }

  if (config?.authbench?.workdir === undefined && finalStage?.workdirUsesVariable === true)
    warn(TASK_PATHS.dockerfile, undefined, `the final WORKDIR uses a variable; assuming ${DEFAULT_WORKDIR} (set [authbench].workdir to say otherwise)`);

  if (problems.some((p) => p.severity === 'error') || config === undefined || resolved === undefined)
    return { problems };

  const files: TaskFiles = {
    dockerfile: join(absDir, TASK_PATHS.dockerfile),
    contextDir: join(absDir, TASK_PATHS.contextDir),
    solveSh: join(absDir, TASK_PATHS.solveSh),
    testsDir: join(absDir, TASK_PATHS.testsDir),
    ...(hasAttackSmoke ? { attackSmoke: join(absDir, TASK_PATHS.attackSmoke) } : {}),
    ...(hasTestSh ? { testSh: join(absDir, TASK_PATHS.testSh) } : {}),
    ...(hasTestPy ? { testOutputsPy: join(absDir, TASK_PATHS.testOutputsPy) } : {}),
    ...(hasAttackValidator ? { attackValidator: join(absDir, TASK_PATHS.attackValidator) } : {}),
    ...(hasSpec ? { specFile: join(absDir, TASK_PATHS.specFile) } : {}),
    ...(skillsKind === 'dir' ? { skillsDir: join(absDir, TASK_PATHS.skillsDir) } : {}),
    ...(composeRel === undefined ? {} : { composeFile: join(absDir, composeRel) }),
  };
  const task: Task = {
    id,
    dir: absDir,
    config,
    instruction,
    ...(nextInstruction === undefined ? {} : { nextInstruction }),
    ...resolved,
    workdir: resolved.authbench.workdir ?? finalStage?.workdir ?? DEFAULT_WORKDIR,
    files,
    spec,
    ...(compose === undefined ? {} : { compose }),
    network: network.declaration,
    ...(familyBaseDir === undefined ? {} : { familyBaseDir }),
    dockerfileFrom: stages.map((s) => s.rawRef),
    limits: limitsOf(config),
    warnings: problems.filter((p) => p.severity === 'warning'),
  };
  return { task, problems };
}

/** Load a task or throw INVALID_TASK listing every problem. */
export async function loadTask(dir: string, options: LoadTaskOptions = {}): Promise<Task> {
  const { task, problems } = await checkTask(dir);
  const blocking = problems.filter((p) => p.severity === 'error' || options.warningsAsErrors === true);
  if (task !== undefined && blocking.length === 0) return task;
  const first = blocking[0] ?? problems[0];
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  throw new AuthbenchError('INVALID_TASK', `task ${basename(resolve(dir))} is invalid (${count(errors, 'error')}, ${count(warnings, 'warning')})`, {
    ...(first === undefined ? { file: dir } : { file: first.file, ...(first.field === undefined ? {} : { field: first.field }) }),
    details: problems.map(formatProblem),
    hint: `run: authbench tasks validate ${dir}`,
  });
}

/** Parse task.toml text: syntax errors (with the parser's line/column), schema errors, unknown-table warnings. */
export function parseTaskToml(text: string, file: string): { config?: TaskToml; problems: Problem[] } {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) {
      const reason = (e.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
      return { problems: [problem(file, undefined, `invalid TOML at line ${e.line}, column ${e.column}: ${reason}`)] };
    }
    throw e;
  }
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (KNOWN_TOP_LEVEL_KEYS.includes(key)) continue;
    const what = typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) ? 'table' : 'key';
    problems.push(problem(file, key, `unknown top-level ${what} (ignored)`, 'warning'));
  }
  const parsed = TaskTomlSchema.safeParse(raw);
  if (!parsed.success) return { problems: [...issuesToProblems(parsed.error, file), ...problems] };
  return { config: parsed.data, problems };
}

function limitsOf(config: TaskToml): TaskLimits {
  const env = config.environment;
  const size = (mb: number | undefined, legacy: string | undefined): number | undefined =>
    mb ?? (legacy === undefined ? undefined : parseSizeMb(legacy));
  return {
    agentTimeoutSec: config.agent?.timeout_sec,
    verifierTimeoutSec: config.verifier?.timeout_sec,
    buildTimeoutSec: env?.build_timeout_sec,
    cpus: env?.cpus,
    memoryMb: size(env?.memory_mb, env?.memory),
    storageMb: size(env?.storage_mb, env?.storage),
    pids: config.authbench?.pids_limit,
  };
}

export interface DiscoverOptions {
  /**
   * Also list the tasks of collections: subfolders of `root` that hold no
   * task.toml themselves (e.g. the generated suite `tasks/suite`). Folders
   * starting with `_` (family bases) or `.` are never collections.
   */
  collections?: boolean;
}

/**
 * Task folders under `root`, sorted by name: `root` itself when it holds a
 * task.toml, else its direct subfolders that do (and, with `collections`, the
 * tasks one level further down). Hidden folders and symlinks leading outside
 * `root` are skipped. Paths are `root` joined with the name.
 */
export async function discoverTasks(root: string, options: DiscoverOptions = {}): Promise<string[]> {
  const absRoot = resolve(root);
  if ((await pathKind(absRoot)) !== 'dir') throw new AuthbenchError('TASK_NOT_FOUND', `${root} is not a directory`, { file: root });
  if ((await pathKind(join(absRoot, TASK_PATHS.config))) === 'file') return [root];
  const realRoot = await realpath(absRoot);
  const found: string[] = [];
  for (const name of (await readdir(absRoot)).sort()) {
    if (name.startsWith('.')) continue;
    const abs = join(absRoot, name);
    if ((await pathKind(abs)) !== 'dir') continue;
    if (!within(realRoot, await realpath(abs))) continue;
    if ((await pathKind(join(abs, TASK_PATHS.config))) === 'file') found.push(join(root, name));
    else if (options.collections === true && !name.startsWith('_')) found.push(...(await discoverTasks(join(root, name))));
  }
  return found;
}

/**
 * Map a task reference to the absolute path of a task folder inside `root`.
 * A ref without a slash is a task id (a folder name under root); a ref with a
 * slash is a path, resolved from the working directory as a shell would.
 * Throws PATH_ESCAPE when the result (after symlinks) is outside root, and
 * TASK_NOT_FOUND when it is not a task folder.
 */
export async function resolveTaskRef(root: string, ref: string): Promise<string> {
  const absRoot = resolve(root);
  const isPath = isAbsolute(ref) || ref.includes('/') || ref.includes('\\');
  const candidate = isPath ? resolve(ref.replaceAll('\\', '/')) : resolve(absRoot, ref);
  const escape = (): AuthbenchError =>
    new AuthbenchError('PATH_ESCAPE', `task reference ${ref} leads outside ${root}`, { file: ref, hint: `tasks must live under ${root}` });
  if (!within(absRoot, candidate)) throw escape();
  const notFound = (): AuthbenchError =>
    new AuthbenchError('TASK_NOT_FOUND', `no task ${ref} under ${root}`, { file: ref, hint: `list tasks with: authbench tasks list ${root}` });
  if ((await pathKind(candidate)) !== 'dir') throw notFound();
  if (!within(await realpath(absRoot), await realpath(candidate))) throw escape();
  if ((await pathKind(join(candidate, TASK_PATHS.config))) !== 'file') throw notFound();
  return candidate;
}

type PathKind = 'file' | 'dir' | 'other' | 'missing';

async function pathKind(path: string): Promise<PathKind> {
  try {
    const s = await stat(path);
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other';
  } catch (e) {
    if (isMissing(e)) return 'missing';
    throw e;
  }
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}

function isEnvTable(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return false;
  return Object.entries(value).every(([k, v]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && ['string', 'number', 'boolean'].includes(typeof v));
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
