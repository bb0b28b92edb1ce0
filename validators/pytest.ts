/**
 * Pure builders for how validators are started: the pytest command line and
 * environment that keep the agent's files out of the validator's way, the
 * `ab-launch --validator-exec` argv, and reading back its status trailer.
 *
 * What pytest 7 (Debian 12's python3-pytest 7.2.1, Python 3.11) does without
 * them, checked in the task images: `python3 -m pytest` puts the cwd (the
 * task's workdir, which the agent owns) first on sys.path, so an empty
 * `/app/pytest.py` replaces pytest itself; pytest looks for an ini file
 * (pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg) in the common
 * ancestor of its arguments and every directory above, so `/pytest.ini` is
 * read, and it picks up `conftest.py` in every ancestor of the tests (so
 * `/conftest.py` runs). `--rootdir` alone does not stop the ini search; `-c
 * FILE` does (with `-c /dev/null` pytest reads no ini at all);
 * `--confcutdir=/tests` stops conftest.py above the tests; `-I` (isolated:
 * no cwd or script dir on sys.path, no user site, PYTHON* ignored) or, for
 * a test.sh we cannot edit, PYTHONSAFEPATH=1 (Python >= 3.11) keeps the cwd
 * off sys.path.
 */
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import type { Task } from '../task-format/index.ts';

export const VALIDATION_PATHS = {
  tests: '/tests',
  verifierLogs: '/logs/verifier',
  quarantine: '/var/lib/authbench-quarantine',
} as const;

/** stdout and stderr of a validator are each kept up to this many bytes (and counted in full). */
export const VALIDATOR_OUTPUT_CAP_BYTES = 256 * 1024;
/**
 * What `--collect` may add to the status line: ab-harness.c reads at most 16 MiB in at most 256
 * files (COLLECT_MAX_BYTES, COLLECT_MAX_FILES), base64 plus a quoted name of up to 255 bytes each.
 */
export const COLLECT_STATUS_MAX_BYTES = Math.ceil((16 * 1024 * 1024) / 3) * 4 + 256 * 262 + 64;

/** Harbor's default when task.toml sets no `[verifier] timeout_sec`. */
export const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;

/** The pytest plugin module that gives each pytest run of one validator its own JUnit file. */
export const JUNIT_PLUGIN_MODULE = 'authbench_junit';

/** pytest's ini files, in its own search order. */
export const PYTEST_INI_FILES = ['pytest.ini', '.pytest.ini', 'pyproject.toml', 'tox.ini', 'setup.cfg'] as const;

/** The section that makes each ini file pytest's (pytest.ini counts even when empty). */
const INI_SECTION: Record<(typeof PYTEST_INI_FILES)[number], RegExp | undefined> = {
  'pytest.ini': undefined,
  '.pytest.ini': undefined,
  'pyproject.toml': /^\s*\[\s*tool\.pytest\.ini_options\s*\]/m,
  'tox.ini': /^\s*\[\s*pytest\s*\]/m,
  'setup.cfg': /^\s*\[\s*tool:pytest\s*\]/m,
};

/**
 * The ini file pytest should read: the tests' own, when tests/ ships one pytest
 * would take (by pytest's rules), else `/dev/null` — never one outside /tests.
 * `files` maps the names present in tests/ to their content.
 */
export function pytestIniFile(files: Readonly<Record<string, string>>): string {
  for (const name of PYTEST_INI_FILES) {
    const content = files[name];
    if (content === undefined) continue;
    const section = INI_SECTION[name];
    if (section === undefined || section.test(content)) return `${VALIDATION_PATHS.tests}/${name}`;
  }
  return '/dev/null';
}

/** Options every pytest run of a validator gets: no cache, the one ini file, rootdir and conftest cut at /tests. */
export function pytestIsolationArgs(ini: string): string[] {
  const tests = VALIDATION_PATHS.tests;
  return ['-p', 'no:cacheprovider', '-c', ini, `--rootdir=${tests}`, `--confcutdir=${tests}`];
}

/** The JUnit file of one validator's (first) pytest run. */
export function junitPath(kind: ValidatorKind): string {
  return `${VALIDATION_PATHS.verifierLogs}/junit-${kind}.xml`;
}

/** The n-th (1-based) JUnit file of a validator: junit-utility.xml, junit-utility.2.xml, ... */
export function junitPathN(kind: ValidatorKind, n: number): string {
  return n <= 1 ? junitPath(kind) : `${VALIDATION_PATHS.verifierLogs}/junit-${kind}.${n}.xml`;
}

export type ValidatorKind = 'utility' | 'attack';

/**
 * argv of a pytest validator we run ourselves: isolated mode (-I), no bytecode
 * written into /tests (-B), the isolation options and a JUnit report.
 */
export function pytestCommand(testFile: string, kind: ValidatorKind, ini: string): string[] {
  return ['python3', '-I', '-B', '-m', 'pytest', '-q', ...pytestIsolationArgs(ini), `--junitxml=${junitPath(kind)}`, testFile];
}

/** Environment edits for `--validator-exec`: variables set (NAME → value) and removed. */
export interface ValidatorEnv {
  set: Record<string, string>;
  unset: string[];
}

/** Interpreter start-up hooks nobody but the harness may steer during validation. */
const CLEARED_PYTHON_VARS = ['PYTHONHOME', 'PYTHONSTARTUP', 'PYTHONINSPECT', 'PYTHONUSERBASE', 'PYTHONEXECUTABLE', 'PYTHONPLATLIBDIR'];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The task's `[verifier.env]` (task.toml), checked: a table of string values with valid names. */
export function verifierEnv(task: Pick<Task, 'id' | 'config'>): Record<string, string> {
  const raw = (task.config.verifier as Record<string, unknown> | undefined)?.['env'];
  if (raw === undefined) return {};
  const parsed = z.record(z.string().regex(ENV_NAME), z.union([z.string(), z.number(), z.boolean()])).safeParse(raw);
  if (!parsed.success) {
    throw new AuthbenchError('INVALID_TASK', `task ${task.id}: [verifier.env] must be a table of NAME = "value"`, {
      file: `${task.id}/task.toml`,
      field: 'verifier.env',
    });
  }
  return Object.fromEntries(Object.entries(parsed.data).map(([k, v]) => [k, String(v)]));
}

/** A task's variable appended to ours, not replacing it (PYTHONPATH, PYTEST_ADDOPTS). */
function joined(ours: string, theirs: string | undefined, separator: string): string {
  return theirs === undefined || theirs === '' ? ours : `${ours}${separator}${theirs}`;
}

/**
 * The environment of a pytest validator we run ourselves: `-I` already ignores
 * PYTHON* variables, so only the task's `[verifier.env]` is added.
 */
export function pytestValidatorEnv(taskEnv: Readonly<Record<string, string>> = {}): ValidatorEnv {
  return { set: { PYTHONDONTWRITEBYTECODE: '1', ...taskEnv }, unset: [...CLEARED_PYTHON_VARS] };
}

/**
 * The environment of a shell validator (tests/test.sh, which runs `python3 -m
 * pytest` itself and which we cannot edit): the container's own environment
 * plus PYTHONSAFEPATH (no cwd on sys.path), no user site, no bytecode, the
 * start-up hooks cleared, and PYTEST_ADDOPTS carrying the isolation options and
 * the JUnit report to every pytest run. PYTHONPATH holds only the harness's
 * plugin directory (an image PYTHONPATH such as /app would put the agent's
 * files back on sys.path); the plugin numbers the JUnit files when test.sh
 * runs pytest more than once. The task's `[verifier.env]` comes last (a
 * PYTHONPATH or PYTEST_ADDOPTS of its own is appended to ours).
 */
export function shellValidatorEnv(options: { kind: ValidatorKind; ini: string; pluginDir: string; taskEnv?: Readonly<Record<string, string>> }): ValidatorEnv {
  const taskEnv = options.taskEnv ?? {};
  const junit = junitPath(options.kind);
  const addopts = [...pytestIsolationArgs(options.ini), `--junitxml=${junit}`, '-p', JUNIT_PLUGIN_MODULE].join(' ');
  return {
    set: {
      PYTHONSAFEPATH: '1',
      PYTHONNOUSERSITE: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      ...taskEnv,
      PYTHONPATH: joined(options.pluginDir, taskEnv['PYTHONPATH'], ':'),
      PYTEST_ADDOPTS: joined(addopts, taskEnv['PYTEST_ADDOPTS'], ' '),
      AUTHBENCH_JUNIT_BASE: junit,
    },
    unset: CLEARED_PYTHON_VARS.filter((v) => taskEnv[v] === undefined),
  };
}

export interface ValidatorExecOptions {
  /** ab-launch inside the container. */
  launcher: string;
  env: ValidatorEnv;
  cwd: string;
  timeoutSec: number;
  capBytes: number;
  /** Random token that marks the supervisor's status line ([A-Za-z0-9_], 8-128 characters). */
  trailer: string;
  /** A directory whose files the supervisor reads after the command and returns in the status line (`verifier`). */
  collect?: string;
  cmd: readonly string[];
}

/** argv of `ab-launch --validator-exec` (supervised: timeout, output cap, status trailer). Pure. */
export function validatorExecArgv(o: ValidatorExecOptions): string[] {
  if (o.cmd.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'validatorExecArgv: empty command');
  if (!/^[A-Za-z0-9_]{8,128}$/.test(o.trailer)) throw new AuthbenchError('INVALID_ARGUMENT', `bad trailer token ${JSON.stringify(o.trailer)}`);
  if (!(o.timeoutSec > 0)) throw new AuthbenchError('INVALID_ARGUMENT', `validator timeout must be positive, got ${o.timeoutSec}`);
  const args = [o.launcher, '--validator-exec'];
  for (const name of o.env.unset) args.push('--unset', name);
  for (const [name, value] of Object.entries(o.env.set)) {
    if (!ENV_NAME.test(name)) throw new AuthbenchError('INVALID_ARGUMENT', `bad environment variable name ${JSON.stringify(name)}`);
    args.push('--env', `${name}=${value}`);
  }
  // The supervisor takes seconds with at most three decimals.
  const seconds = (Math.ceil(o.timeoutSec * 1000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  args.push('--cwd', o.cwd, '--timeout', seconds, '--cap', String(o.capBytes), '--trailer', o.trailer);
  if (o.collect !== undefined) {
    if (!o.collect.startsWith('/')) throw new AuthbenchError('INVALID_ARGUMENT', `collect wants an absolute directory, got ${JSON.stringify(o.collect)}`);
    args.push('--collect', o.collect);
  }
  args.push('--', ...o.cmd);
  return args;
}

const SupervisorStatusSchema = z.object({
  exit_code: z.number().int().nullable(),
  signal: z.number().int().nullable(),
  timed_out: z.boolean(),
  stdout_bytes: z.number().int().nonnegative(),
  stderr_bytes: z.number().int().nonnegative(),
  signal_scoped: z.boolean(),
  /** The command's own wall time, fork to reap (the task's tests, without the harness around them). */
  run_ms: z.number().int().nonnegative().optional(),
  /**
   * --collect: the directory's regular files with plain names (base64 by name) and how many other
   * entries it held; "missing" when it does not exist; absent when it could not be read whole.
   */
  verifier: z
    .union([z.literal('missing'), z.object({ files: z.record(z.string(), z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/)), other: z.number().int().nonnegative() })])
    .optional(),
});

/** What `--validator-exec --trailer` reports after the command's output. */
export type SupervisorStatus = z.infer<typeof SupervisorStatusSchema>;

/**
 * Split the supervisor's stdout into the command's output and the status line
 * `TOKEN{json}\n` it writes last. No status when the line is missing or
 * malformed (the helper did not finish, or is not ours).
 */
export function splitTrailer(stdout: string, token: string): { output: string; status?: SupervisorStatus } {
  const at = stdout.lastIndexOf(token);
  if (at < 0) return { output: stdout };
  const rest = stdout.slice(at + token.length);
  if (!rest.endsWith('\n') || rest.slice(0, -1).includes('\n')) return { output: stdout };
  try {
    const status = SupervisorStatusSchema.parse(JSON.parse(rest));
    return { output: stdout.slice(0, at), status };
  } catch {
    return { output: stdout };
  }
}

const QuarantineLineSchema = z.union([
  z.object({ path: z.string().startsWith('/'), to: z.string().startsWith('/'), type: z.enum(['dir', 'file', 'symlink', 'other']) }),
  z.object({ stopped: z.number().int().nonnegative() }),
]);

export interface MovedPath {
  /** The path that was in the way (the requested one, or a symlink/file on its way). */
  path: string;
  /** Where it is now. */
  to: string;
  type: 'dir' | 'file' | 'symlink' | 'other';
}

/** Parse `ab-launch --quarantine` stdout; a line that is not one of its JSON lines is a problem. */
export function parseQuarantineOutput(stdout: string): { moved: MovedPath[]; stopped?: number; problems: string[] } {
  const moved: MovedPath[] = [];
  const problems: string[] = [];
  let stopped: number | undefined;
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`not JSON: ${line.slice(0, 200)}`);
      continue;
    }
    const parsed = QuarantineLineSchema.safeParse(value);
    if (!parsed.success) problems.push(`unexpected line: ${line.slice(0, 200)}`);
    else if ('stopped' in parsed.data) stopped = (stopped ?? 0) + parsed.data.stopped;
    else moved.push(parsed.data);
  }
  return { moved, ...(stopped === undefined ? {} : { stopped }), problems };
}

/**
 * The pytest plugin (loaded with `-p authbench_junit` from PYTEST_ADDOPTS in
 * shell validators): a test.sh may run pytest more than once (memory tasks run
 * test_outputs.py, then test_recovery.py), and every run would overwrite the
 * one JUnit file. Each run takes the next free name instead, claimed with
 * O_EXCL so two runs never share one. Only our own path is renumbered; a
 * `--junitxml` the test.sh passes itself is left alone.
 */
export const JUNIT_PLUGIN_SOURCE = `"""authbench: number the JUnit files when one validator runs pytest more than once, and give
the processes the tests start the container's own environment back (the validator's isolation
variables have done their work once pytest has read its options)."""
import os

import pytest

_BASE = os.environ.get("AUTHBENCH_JUNIT_BASE")


def _restore_environment():
    entries = os.environ.pop("AUTHBENCH_VALIDATOR_RESTORE", "")
    for entry in entries.split(";"):
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        if sep:
            os.environ[name] = bytes.fromhex(value).decode("utf-8", "surrogateescape")
        else:
            os.environ.pop(name, None)


_restore_environment()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    base = _BASE
    if not base or getattr(config.option, "xmlpath", None) != base:
        return
    stem, ext = os.path.splitext(base)
    for n in range(1, 1000):
        path = base if n == 1 else "%s.%d%s" % (stem, n, ext)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue
        os.close(fd)
        config.option.xmlpath = path
        return
`;
