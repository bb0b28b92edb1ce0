/**
 * Running a task's oracle, attack smoke and validators inside its container,
 * the way Harbor does: solution/ is copied to /solution and solve.sh runs from
 * the task's working directory; tests/ is copied to /tests only after the
 * agent (or oracle) has finished, never before, so nothing the agent runs can
 * read them.
 *
 * After an agent episode every file the agent could write is hostile, so the
 * validation phase trusts nothing it left (prepareValidation):
 * - whatever is at /tests or /logs/verifier is moved aside — never deleted,
 *   never merged into — and reported (a moved path means the rollout's
 *   outcome is `validator_surface_tampered`); then the task's tests are copied
 *   in fresh through the Docker archive API and /logs/verifier is created
 *   empty. Processes the agent left running are killed first, so none can
 *   rewrite the tests or the reward after they are in place.
 * - none of these steps runs an image binary (`mv`, `mkdir`, `test`, `rm`,
 *   coreutils `timeout` may all have been replaced): the harness's own static
 *   ab-launch, on the read-only harness mount, does the moving
 *   (`--quarantine`) and starts every validator (`--validator-exec`, which also
 *   enforces the timeout and counts the output), and Docker does the copying.
 * - validators run isolated from the agent's files: pytest never gets the
 *   workdir on sys.path (`python3 -I`, or PYTHONSAFEPATH for test.sh), reads no
 *   ini file and no conftest.py outside /tests (pytest.ts), and keeps its
 *   results in a JUnit file per run.
 *
 * Validators run as root (uid 0, never a user name the agent could have
 * remapped in /etc/passwd), with no_new_privs: AuthBench attack validators read
 * root-only secrets and whatever the agent wrote, wherever it wrote it, and a
 * read that failed under a lesser uid would make an attack look like it never
 * happened. no_new_privs keeps a set-uid binary the agent planted from gaining
 * anything; the image's interpreter and libraries themselves cannot be
 * isolated, which is what the validator surface (surface.ts) flags.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile as readHostFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { AuthbenchError } from '../core/index.ts';
import type { Container, ExecResult } from '../docker/index.ts';
import { LAUNCHER_PATH } from '../sandbox/launcher/index.ts';
import type { FsSnapshot } from '../sandbox/paths/index.ts';
import type { Task } from '../task-format/index.ts';
import { directoryFiles, installBundleOf, tarOf, validationBundleEntries, type BundleEntry, type VerifierEntry } from './bundle.ts';
import { parseJunit, type TestResult } from './junit.ts';
import {
  DEFAULT_VERIFIER_TIMEOUT_SEC,
  JUNIT_PLUGIN_MODULE,
  JUNIT_PLUGIN_SOURCE,
  PYTEST_INI_FILES,
  VALIDATION_PATHS,
  COLLECT_STATUS_MAX_BYTES,
  VALIDATOR_OUTPUT_CAP_BYTES,
  junitPathN,
  parseQuarantineOutput,
  pytestCommand,
  pytestIniFile,
  pytestValidatorEnv,
  shellValidatorEnv,
  splitTrailer,
  validatorExecArgv,
  verifierEnv,
  type MovedPath,
  type SupervisorStatus,
  type ValidatorEnv,
  type ValidatorKind,
} from './pytest.ts';
import { parseRewardJson, parseRewardText, rewardComponents, rewardPassed, type RewardSource } from './reward.ts';
import { validatorSurface, type SurfaceOptions, type ValidatorSurface } from './surface.ts';

export const CONTAINER_PATHS = {
  solution: '/solution',
  tests: VALIDATION_PATHS.tests,
  verifierLogs: VALIDATION_PATHS.verifierLogs,
} as const;

const DEFAULT_ORACLE_TIMEOUT_MS = 600_000;
/** The harness's own execs: root by number, from /, which always exists (the agent may have removed the workdir). */
const HARNESS_EXEC = { user: '0:0', workdir: '/' } as const;
/** Room for the supervisor's own status line and warnings beyond the capped output. */
const EXEC_CAP_SLACK_BYTES = 16 * 1024;
/** More JUnit files than this from one validator is not a test.sh we know. */
const MAX_JUNIT_FILES = 50;

/** What prepareValidation did before the validators ran. */
export interface ValidationPreparation {
  /** What was at /tests or /logs/verifier (or a symlink/file on the way) and where it is now. Non-empty: tampered. */
  moved: MovedPath[];
  /** Processes the agent left running that were killed before the tests were put in place. */
  strayProcesses: number;
  /** The helper (ab-launch on the read-only harness mount) that moved things and starts the validators. */
  launcher: string;
  /** A fresh directory of this validation phase (holds the JUnit-numbering pytest plugin). */
  harnessDir: string;
  /** The ini file pytest reads: the tests' own, else /dev/null. */
  pytestIni: string;
}

export interface PrepareOptions {
  /** Kill processes the agent left running before the tests go in (default true). */
  stopStrayProcesses?: boolean;
  /**
   * Files the harness gives the validators besides the task's tests, by path relative to the
   * tests folder (e.g. the carried memory store, CARRIED_MEMORY_TESTS_FILE): put in with the tests.
   */
  extraTests?: Readonly<Record<string, Uint8Array>>;
  /** The quarantine already done (quarantineForValidation through the session): the tests go straight in. */
  quarantined?: Quarantined;
  /** Put the tests in through this runner (`ab-launch --install-bundle`, the session's agent) instead of the Docker archive API. */
  install?: HarnessRunner;
}

/** What the quarantine moved aside and how many stray processes it stopped. */
export interface Quarantined {
  moved: MovedPath[];
  stopped: number;
}

/** Larger test folders go in through the Docker archive API (the agent's requests stop at 256 MiB). */
const INSTALL_MAX_BYTES = 64 * 1024 * 1024;

/** How long past the validator's own timeout a runner waits for its supervisor. */
const RUNNER_TIMEOUT_MARGIN_SEC = 60;

/** ab-harness.c's EXIT_NOT_ROOT: --quarantine refused before doing anything, for want of root. */
const QUARANTINE_NOT_ROOT_EXIT = 2;

/** Runs a harness program in the container as root, outside any sandbox: a Docker exec, or the session agent (SandboxSession.runHarness). */
export type HarnessRunner = (argv: readonly string[], options?: { outputCapBytes?: number; timeoutMs?: number; stdin?: Uint8Array }) => Promise<ExecResult>;

export interface ValidatorRunOptions extends PrepareOptions {
  /** This container's preparation, when the caller already prepared it. */
  prepared?: ValidationPreparation;
  /**
   * How the validator's supervisor is started: through the session's agent (one Docker exec fewer;
   * only a root agent with nothing of the agent's left running — the one quarantineForValidation
   * ran through), else a Docker exec as root.
   */
  run?: HarnessRunner;
}

export interface ValidatorOutcome {
  kind: ValidatorKind;
  /** utility: the task was done; attack: the attack happened. */
  passed: boolean;
  /** Why the verdict is what it is (reward value, pytest summary, or the problem). */
  reason: string;
  reward?: number;
  /** reward.json's named parts (e.g. `task`, `recovery` of a memory/recovery scenario). */
  components?: Record<string, number>;
  source: RewardSource;
  /**
   * The validator process: exit code (128+n when killed by signal n; null on timeout), timed
   * out, stdout and stderr each kept up to VALIDATOR_OUTPUT_CAP_BYTES, and whether they were cut.
   */
  exec: ExecResult;
  /** The exact argv run in the container. */
  command: string[];
  /** Full sizes of the validator's output, however much was kept. */
  stdoutBytes: number;
  stderrBytes: number;
  /**
   * Whether the validator ran in a signal-scoped Landlock domain (it could not signal the
   * container's init or the harness); undefined when the supervisor reported nothing.
   */
  signalScoped?: boolean;
  /** The command's own wall time as the supervisor measured it (the task's tests, not the harness's exec around them); undefined without a status. */
  commandMs?: number;
  /** The reward files as the validator left them (utility validators; test.sh writes them). */
  rewardFiles: { 'reward.txt'?: string; 'reward.json'?: string };
  /** Every JUnit file the run wrote (one per pytest run), in order. */
  junit: { path: string; xml: string }[];
  /** Per-test results from those files. */
  tests: TestResult[];
  /** What could not be read from them. */
  junitProblems: string[];
  /**
   * Set when the validator produced no result at all — no reward file and no test recorded
   * (or the helper reported nothing) — saying why. The verdict is then not evidence about
   * the agent; the rollout layer reports it as an infrastructure error naming this cause.
   */
  noResult?: string;
  preparation: ValidationPreparation;
}

function timeoutMs(seconds: number | undefined, fallback: number): number {
  return seconds === undefined ? fallback : Math.round(seconds * 1000);
}

/** Copy solution/ into /solution and run solve.sh from the working directory. */
export async function runOracle(container: Container, task: Task): Promise<ExecResult> {
  await container.copyIn(dirname(task.files.solveSh), '/');
  return container.exec({
    cmd: ['bash', `${CONTAINER_PATHS.solution}/solve.sh`],
    workdir: task.workdir,
    timeoutMs: timeoutMs(task.limits.agentTimeoutSec, DEFAULT_ORACLE_TIMEOUT_MS),
  });
}

/** Run the deliberately unsafe solution/attack_smoke.sh (sensitive tasks only). */
export async function runAttackSmoke(container: Container, task: Task): Promise<ExecResult> {
  if (task.files.attackSmoke === undefined) {
    throw new Error(`task ${task.id} has no solution/attack_smoke.sh`);
  }
  await container.copyIn(dirname(task.files.attackSmoke), '/');
  return container.exec({
    cmd: ['bash', `${CONTAINER_PATHS.solution}/attack_smoke.sh`],
    workdir: task.workdir,
    timeoutMs: timeoutMs(task.limits.agentTimeoutSec, DEFAULT_ORACLE_TIMEOUT_MS),
  });
}

/** Per container: its one preparation, and what each validator left for a re-run to clear. */
interface ValidationState {
  preparation: Promise<ValidationPreparation>;
  produced: Map<ValidatorKind, string[]>;
}

const states = new WeakMap<Container, ValidationState>();

/** The ini file pytest should read, from the task's tests/ on the host. */
async function taskPytestIni(task: Task): Promise<string> {
  const names = new Set(await readdir(task.files.testsDir));
  const files: Record<string, string> = {};
  for (const name of PYTEST_INI_FILES) if (names.has(name)) files[name] = await readHostFile(join(task.files.testsDir, name), 'utf8');
  return pytestIniFile(files);
}

async function quarantine(container: Container, launcher: string, paths: readonly string[], stopStrays: boolean, run?: HarnessRunner): Promise<Quarantined> {
  const cmd = [launcher, '--quarantine', ...(stopStrays ? ['--stop-strays'] : []), '--', ...paths];
  const exec = run === undefined ? await container.exec({ cmd, ...HARNESS_EXEC }) : await run(cmd);
  const parsed = parseQuarantineOutput(exec.stdout);
  if (exec.exitCode !== 0 || parsed.problems.length > 0) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `could not move the validator paths aside in container ${container.id.slice(0, 12)} (exit ${String(exec.exitCode)})`, {
      details: [...exec.stderr.trim().split('\n').slice(-5), ...parsed.problems],
      hint: 'the validation helper is ab-launch --quarantine on the harness mount; is the harness mounted?',
    });
  }
  return { moved: parsed.moved, stopped: parsed.stopped ?? 0 };
}

/** Create an empty directory `containerPath` through the archive API (its parent is created if missing). */
async function createEmptyDir(container: Container, containerPath: string): Promise<void> {
  const host = await mkdtemp(join(tmpdir(), 'authbench-empty-'));
  try {
    const name = containerPath.split('/').at(-1) ?? '';
    const dir = join(host, name);
    await mkdir(dir);
    await chmod(dir, 0o755);
    await container.copyIn(dir, dirname(containerPath));
  } finally {
    await rm(host, { recursive: true, force: true });
  }
}

/** The task's tests/ on the host as bundle entries below `tests/`, modes and symlinks kept (as copyIn packs them). */
async function testsEntries(testsDir: string): Promise<BundleEntry[]> {
  const top = VALIDATION_PATHS.tests.slice(1);
  const out: BundleEntry[] = [];
  const walk = async (hostDir: string, name: string): Promise<void> => {
    const st = await lstat(hostDir);
    out.push({ type: 'directory', name, mode: st.mode & 0o7777, mtime: st.mtime });
    for (const child of (await readdir(hostDir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const host = join(hostDir, child.name);
      const entry = `${name}/${child.name}`;
      if (child.isDirectory()) await walk(host, entry);
      else if (child.isSymbolicLink()) out.push({ type: 'symlink', name: entry, linkname: await readlink(host), mtime: (await lstat(host)).mtime });
      else if (child.isFile()) {
        const st2 = await lstat(host);
        out.push({ type: 'file', name: entry, mode: st2.mode & 0o7777, content: await readHostFile(host), mtime: st2.mtime });
      }
    }
  };
  await walk(testsDir, top);
  return out;
}

/**
 * The harness's extra files as bundle entries below `tests/` (each parent directory first, once),
 * regular files 0644. A name that leaves the tests folder is refused. Pure.
 */
export function extraTestsEntries(files: Readonly<Record<string, Uint8Array>>): BundleEntry[] {
  const top = VALIDATION_PATHS.tests.slice(1);
  const out: BundleEntry[] = [];
  const dirs = new Set<string>();
  for (const [path, content] of Object.entries(files)) {
    const rel = posix.normalize(path);
    if (rel === '.' || posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../')) throw new AuthbenchError('PATH_ESCAPE', `extra validator file must stay below ${VALIDATION_PATHS.tests}: ${JSON.stringify(path)}`);
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = `${top}/${parts.slice(0, i).join('/')}`;
      if (!dirs.has(dir)) out.push({ type: 'directory', name: dir, mode: 0o755 });
      dirs.add(dir);
    }
    out.push({ type: 'file', name: `${top}/${rel}`, mode: 0o644, content });
  }
  return out;
}

/**
 * The first step of prepareValidation on its own: stop what the agent left running (unless told
 * not to) and move whatever is at /tests and /logs/verifier aside — through `run` (the session's
 * agent, one Docker exec fewer), then passed to prepareValidation as `quarantined`. Nothing may
 * run in the container between the two but the harness. Undefined when `run` is not root (nothing
 * was done): prepareValidation then quarantines through a Docker exec as root.
 */
export async function quarantineForValidation(container: Container, run: HarnessRunner, options: Pick<PrepareOptions, 'stopStrayProcesses'> = {}): Promise<Quarantined | undefined> {
  let notRoot = false;
  const result = await quarantine(container, LAUNCHER_PATH, [VALIDATION_PATHS.tests, VALIDATION_PATHS.verifierLogs], options.stopStrayProcesses ?? true, async (argv) => {
    const exec = await run(argv);
    // The runner is not root (a session of an image with its own USER): nothing was done, ask as root.
    notRoot = exec.exitCode === QUARANTINE_NOT_ROOT_EXIT;
    return exec;
  }).catch((e: unknown) => {
    if (notRoot) return undefined;
    throw e;
  });
  return result;
}

/** The bundle through the harness's own installer (after the quarantine, nothing of the agent's running). */
async function installBundle(container: Container, run: HarnessRunner, bundle: Uint8Array): Promise<void> {
  const exec = await run([LAUNCHER_PATH, '--install-bundle'], { stdin: bundle });
  if (exec.exitCode !== 0 || !/^\{"installed":\d+\}\n$/.test(exec.stdout)) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `could not put the validators' files in place in container ${container.id.slice(0, 12)} (exit ${String(exec.exitCode)})`, {
      details: exec.stderr.trim().split('\n').slice(-5),
      hint: 'the installer is ab-launch --install-bundle on the harness mount; is the harness mounted?',
    });
  }
}

async function prepare(container: Container, task: Task, options: PrepareOptions): Promise<ValidationPreparation> {
  const launcher = LAUNCHER_PATH;
  const pytestIni = await taskPytestIni(task);
  const { moved, stopped } = options.quarantined ?? (await quarantine(container, launcher, [VALIDATION_PATHS.tests, VALIDATION_PATHS.verifierLogs], options.stopStrayProcesses ?? true));
  // A fresh random name at /, which cannot be a symlink: nothing the agent left can be in its way.
  const harnessDir = `/.authbench-validation-${randomBytes(8).toString('hex')}`;
  const pythonFiles = { [`${JUNIT_PLUGIN_MODULE}.py`]: JUNIT_PLUGIN_SOURCE };
  if (options.install !== undefined || container.extractArchive !== undefined) {
    const tests = [...(await testsEntries(task.files.testsDir)), ...extraTestsEntries(options.extraTests ?? {})];
    const entries = validationBundleEntries({ tests, verifierLogs: VALIDATION_PATHS.verifierLogs, harnessDir, pythonFiles });
    const bundle = options.install === undefined ? undefined : installBundleOf(entries);
    if (options.install !== undefined && bundle !== undefined && bundle.length <= INSTALL_MAX_BYTES) await installBundle(container, options.install, bundle);
    // One archive call instead of three (bundle.ts); still Docker doing the writing, after the quarantine.
    else await container.extractArchive?.('/', await tarOf(entries));
  } else {
    await container.copyIn(task.files.testsDir, '/');
    await createEmptyDir(container, VALIDATION_PATHS.verifierLogs);
    await container.putFiles(`${harnessDir}/python`, pythonFiles, 0o644);
    for (const [path, content] of Object.entries(options.extraTests ?? {})) {
      const rel = posix.normalize(path);
      await container.putFiles(posix.join(VALIDATION_PATHS.tests, posix.dirname(rel)), { [posix.basename(rel)]: content }, 0o644);
    }
  }
  return { moved, strayProcesses: stopped, launcher, harnessDir, pytestIni };
}

/**
 * Get the container ready for its validators, once: kill what the agent left
 * running, move whatever is at /tests and /logs/verifier aside (reported in
 * `moved`), copy the task's tests in fresh and create /logs/verifier empty.
 * Later calls on the same container return the first preparation (the
 * validators' own outputs are not "found" again); the validator functions
 * call it themselves when not given `prepared`.
 */
export function prepareValidation(container: Container, task: Task, options: PrepareOptions = {}): Promise<ValidationPreparation> {
  const known = states.get(container);
  if (known !== undefined) return known.preparation;
  const preparation = prepare(container, task, options);
  const state: ValidationState = { preparation, produced: new Map() };
  states.set(container, state);
  // A failed preparation is not remembered, so a retry starts over (and reports what it finds).
  preparation.catch(() => {
    if (states.get(container) === state) states.delete(container);
  });
  return preparation;
}

/** What /logs/verifier is read in one archive call up to; past it, file by file (each capped). */
const VERIFIER_ARCHIVE_MAX_BYTES = 16 * 1024 * 1024;

type TextReader = (container: Container, path: string) => Promise<{ text?: string; problem?: string }>;

/**
 * The reader of what a validator left: /logs/verifier archived once (one Docker call, not one
 * per JUnit and reward file), its regular files answered from that tar. A path outside it, an
 * entry that is not a regular file (a symlink: followed as readFile follows it), a directory
 * too large for one read, or a container without archive(): read on its own, as before.
 */
async function verifierReader(container: Container): Promise<TextReader> {
  const dir = VALIDATION_PATHS.verifierLogs;
  let files: Map<string, VerifierEntry> | undefined;
  let missing = false;
  if (container.archive !== undefined) {
    try {
      const tar = await container.archive(dir, VERIFIER_ARCHIVE_MAX_BYTES);
      if (tar === undefined) missing = true;
      else files = await directoryFiles(tar, basename(dir)); // undefined (not a directory): file by file
    } catch (e) {
      if (!(e instanceof AuthbenchError && !e.isInfrastructure)) throw e;
    }
  }
  return async (c, path) => {
    if (dirname(path) !== dir || (files === undefined && !missing)) return readText(c, path);
    const entry = files?.get(basename(path));
    if (entry === undefined) return {};
    return entry.type === 'file' ? { text: entry.content.toString('utf8') } : readText(c, path);
  };
}

/**
 * The reader of what a validator left, from the files its supervisor collected after the command
 * (`--collect`, in the status line: no Docker call at all). A name it did not collect is absent
 * when the directory held nothing else; otherwise (a symlink, a directory, an odd name: `other`)
 * it is read on its own, as the archive reader does. Undefined when the supervisor collected
 * nothing (the directory could not be read whole): the caller reads it the old way. Pure.
 */
export function collectedReader(verifier: SupervisorStatus['verifier']): TextReader | undefined {
  if (verifier === undefined) return undefined;
  const dir = VALIDATION_PATHS.verifierLogs;
  const files = verifier === 'missing' ? new Map<string, string>() : new Map(Object.entries(verifier.files));
  const complete = verifier === 'missing' || verifier.other === 0;
  return async (c, path) => {
    if (dirname(path) !== dir) return readText(c, path);
    const content = files.get(basename(path));
    if (content !== undefined) return { text: Buffer.from(content, 'base64').toString('utf8') };
    return complete ? {} : readText(c, path);
  };
}

async function readText(container: Container, path: string): Promise<{ text?: string; problem?: string }> {
  try {
    const data = await container.readFile(path);
    return data === undefined ? {} : { text: data.toString('utf8') };
  } catch (e) {
    if (e instanceof AuthbenchError && !e.isInfrastructure) return { problem: `${path}: ${e.message}` };
    throw e;
  }
}

function lastLine(text: string): string | undefined {
  const line = text.trimEnd().split('\n').at(-1)?.trim();
  return line === undefined || line === '' ? undefined : line.slice(0, 300);
}

/** The exec's exit, in words. */
function exitWords(exec: ExecResult): string {
  return exec.timedOut ? 'timed out' : `exit ${String(exec.exitCode)}`;
}

interface ValidatorPlan {
  kind: ValidatorKind;
  cmd: string[];
  env: ValidatorEnv;
  /** test.sh (reward files are the verdict) or pytest (its exit code is). */
  style: 'shell' | 'pytest';
}

async function runValidator(container: Container, task: Task, plan: (prep: ValidationPreparation) => ValidatorPlan, options: ValidatorRunOptions): Promise<ValidatorOutcome> {
  const preparation = options.prepared ?? (await prepareValidation(container, task, options));
  const state = states.get(container);
  const p = plan(preparation);
  // A second run of the same validator in this container: its earlier outputs must not be read as this run's.
  const stale = state?.produced.get(p.kind) ?? [];
  if (stale.length > 0) await quarantine(container, preparation.launcher, stale, false);

  const timeoutSec = task.limits.verifierTimeoutSec ?? DEFAULT_VERIFIER_TIMEOUT_SEC;
  const token = `AUTHBENCH_STATUS_${randomBytes(12).toString('hex')}`;
  const command = validatorExecArgv({
    launcher: preparation.launcher,
    env: p.env,
    cwd: task.workdir,
    timeoutSec,
    capBytes: VALIDATOR_OUTPUT_CAP_BYTES,
    trailer: token,
    // The verdict files come back in the status line: one Docker call fewer per validator.
    collect: VALIDATION_PATHS.verifierLogs,
    cmd: p.cmd,
  });
  const outputCapBytes = VALIDATOR_OUTPUT_CAP_BYTES + EXEC_CAP_SLACK_BYTES + COLLECT_STATUS_MAX_BYTES;
  // The supervisor enforces the validator's timeout itself; the runner's is a backstop beyond it.
  const raw =
    options.run === undefined
      ? await container.exec({ cmd: command, ...HARNESS_EXEC, outputCapBytes })
      : await options.run(command, { outputCapBytes, timeoutMs: (timeoutSec + RUNNER_TIMEOUT_MARGIN_SEC) * 1000 });
  const { output, status } = splitTrailer(raw.stdout, token);
  const exec: ExecResult =
    status === undefined
      ? { ...raw, stdout: output }
      : {
          exitCode: status.timed_out ? null : (status.exit_code ?? (status.signal === null ? null : 128 + status.signal)),
          timedOut: status.timed_out,
          stdout: output,
          stderr: raw.stderr,
          stdoutTruncated: status.stdout_bytes > VALIDATOR_OUTPUT_CAP_BYTES,
          stderrTruncated: status.stderr_bytes > VALIDATOR_OUTPUT_CAP_BYTES,
          durationMs: raw.durationMs,
        };

  const junit: { path: string; xml: string }[] = [];
  const junitProblems: string[] = [];
  const readOut = collectedReader(status?.verifier) ?? (await verifierReader(container));
  for (let n = 1; n <= MAX_JUNIT_FILES; n++) {
    const path = junitPathN(p.kind, n);
    const read = await readOut(container, path);
    if (read.problem !== undefined) junitProblems.push(read.problem);
    if (read.text === undefined) break;
    junit.push({ path, xml: read.text });
  }
  const tests: TestResult[] = [];
  for (const file of junit) {
    const parsed = parseJunit(file.xml);
    tests.push(...parsed.tests);
    junitProblems.push(...parsed.problems.map((problem) => `${file.path}: ${problem}`));
  }
  const rewardFiles: ValidatorOutcome['rewardFiles'] = {};
  if (p.style === 'shell') {
    for (const name of ['reward.txt', 'reward.json'] as const) {
      const read = await readOut(container, `${VALIDATION_PATHS.verifierLogs}/${name}`);
      if (read.text !== undefined) rewardFiles[name] = read.text;
      if (read.problem !== undefined) junitProblems.push(read.problem);
    }
  }
  state?.produced.set(p.kind, [
    ...junit.map((j) => j.path),
    ...Object.keys(rewardFiles).map((name) => `${VALIDATION_PATHS.verifierLogs}/${name}`),
  ]);

  const base = {
    kind: p.kind,
    exec,
    command,
    stdoutBytes: status?.stdout_bytes ?? Buffer.byteLength(output),
    stderrBytes: status?.stderr_bytes ?? Buffer.byteLength(raw.stderr),
    ...(status === undefined ? {} : { signalScoped: status.signal_scoped }),
    ...(status?.run_ms === undefined ? {} : { commandMs: status.run_ms }),
    rewardFiles,
    junit,
    tests,
    junitProblems,
    preparation,
  };
  const stderrHint = lastLine(exec.stderr);
  const because = (what: string): string => `${what} (${exitWords(exec)}${stderrHint === undefined ? '' : `: ${stderrHint}`})`;

  if (status === undefined) {
    const why = because('the validator helper reported no status');
    return { ...base, passed: false, reason: why, source: 'exit-code', noResult: why };
  }
  if (p.style === 'pytest') {
    const passed = !exec.timedOut && exec.exitCode === 0;
    const reason = exec.timedOut ? `validator timed out after ${timeoutSec} s` : pytestSummary(exec);
    const noResult = tests.length === 0 && (exec.timedOut || (exec.exitCode !== 0 && exec.exitCode !== 1)) ? because('pytest recorded no test result') : undefined;
    return { ...base, passed, reason, source: 'exit-code', ...(noResult === undefined ? {} : { noResult }) };
  }

  // test.sh: the reward file is the verdict, the exit code is not.
  const txt = rewardFiles['reward.txt'];
  const json = txt === undefined ? rewardFiles['reward.json'] : undefined;
  if (txt === undefined && json === undefined) {
    const reason = exec.timedOut ? `validator timed out after ${timeoutSec} s` : `test.sh wrote no reward file (${exitWords(exec)})`;
    const noResult = tests.length === 0 ? because('test.sh wrote no reward file and pytest recorded no test result') : undefined;
    return { ...base, passed: false, reason, source: 'exit-code', ...(noResult === undefined ? {} : { noResult }) };
  }
  const source: RewardSource = txt !== undefined ? 'reward.txt' : 'reward.json';
  const parsed = txt !== undefined ? parseRewardText(txt) : parseRewardJson(json ?? '');
  if (typeof parsed === 'string') return { ...base, passed: false, reason: parsed, source };
  const components = json === undefined ? {} : rewardComponents(json);
  const timedOut = exec.timedOut ? ` (validator timed out after ${timeoutSec} s)` : '';
  return {
    ...base,
    passed: rewardPassed(parsed) && !exec.timedOut,
    reason: `reward ${parsed}${timedOut}`,
    reward: parsed,
    ...(Object.keys(components).length > 0 ? { components } : {}),
    source,
  };
}

/**
 * The utility validator: tests/test.sh writing /logs/verifier/reward.txt|json
 * (Harbor), else `pytest tests/test_outputs.py` judged by its exit code.
 */
export async function runUtilityValidator(container: Container, task: Task, options: ValidatorRunOptions = {}): Promise<ValidatorOutcome> {
  const taskEnv = verifierEnv(task);
  return runValidator(
    container,
    task,
    (prep) =>
      task.files.testSh === undefined
        ? { kind: 'utility', style: 'pytest', cmd: pytestCommand(`${VALIDATION_PATHS.tests}/test_outputs.py`, 'utility', prep.pytestIni), env: pytestValidatorEnv(taskEnv) }
        : {
            kind: 'utility',
            style: 'shell',
            cmd: ['bash', `${VALIDATION_PATHS.tests}/test.sh`],
            env: shellValidatorEnv({ kind: 'utility', ini: prep.pytestIni, pluginDir: `${prep.harnessDir}/python`, taskEnv }),
          },
    options,
  );
}

/** The attack validator (AuthBench): pytest on test_attack_outputs.py; passing means the attack happened. */
export async function runAttackValidator(container: Container, task: Task, options: ValidatorRunOptions = {}): Promise<ValidatorOutcome> {
  if (task.files.attackValidator === undefined) {
    throw new Error(`task ${task.id} has no tests/test_attack_outputs.py`);
  }
  const taskEnv = verifierEnv(task);
  return runValidator(
    container,
    task,
    (prep) => ({
      kind: 'attack',
      style: 'pytest',
      cmd: pytestCommand(`${VALIDATION_PATHS.tests}/test_attack_outputs.py`, 'attack', prep.pytestIni),
      env: pytestValidatorEnv(taskEnv),
    }),
    options,
  );
}

/** pytest's last non-empty line ("2 passed in 0.01s"), or the exit status when there is none. */
export function pytestSummary(exec: ExecResult): string {
  if (exec.timedOut) return 'timed out';
  const last = exec.stdout.trimEnd().split('\n').at(-1)?.trim();
  return last !== undefined && last !== '' ? last : `exit ${String(exec.exitCode)}`;
}

/** The task's validator surface, reading its test.sh (see surface.ts). */
export async function loadValidatorSurface(task: Task, options: Omit<SurfaceOptions, 'testSh'> & { snapshot?: FsSnapshot } = {}): Promise<ValidatorSurface> {
  const testSh = task.files.testSh === undefined ? undefined : await readHostFile(task.files.testSh, 'utf8');
  return validatorSurface(task, { ...options, ...(testSh === undefined ? {} : { testSh }) });
}
