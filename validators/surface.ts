/**
 * The validator surface: every place a file can change what the validators
 * conclude — the tests and the reward location, the Python interpreter and its
 * import machinery (stdlib, site/dist-packages, sitecustomize, `.pth` files,
 * pyvenv.cfg), pytest's configuration on the ancestors of the tests and the
 * workdir, the shell and the commands test.sh runs, the dynamic loader, and the
 * harness's own helper. `surfaceWrites` lists what an agent's trace changed
 * there. Pure.
 *
 * This is a flag (`validator_surface_writes`), not a verdict: a legitimate
 * `pip install` writes into site-packages and is flagged all the same. The
 * validators are isolated from the cwd, from ini/conftest files outside /tests
 * and from pre-existing /tests and /logs/verifier (see run.ts); what cannot be
 * isolated — the image's own interpreter and libraries — is what this surfaces.
 */
import { posix } from 'node:path';
import { covers, normalizePattern, viewSnapshot, type FsSnapshot } from '../sandbox/paths/index.ts';
import { isWriteOp, type TraceEvent } from '../sandbox/trace/index.ts';
import { HARNESS_ROOT, LAUNCHER_PATH } from '../sandbox/launcher/index.ts';
import type { Task } from '../task-format/index.ts';
import { VALIDATION_PATHS } from './pytest.ts';

/**
 * `critical`: no task's legitimate work writes there (the interpreter and shell binaries, the
 * loader and libc, the commands test.sh runs, the tests, the verdict, the harness), so a write
 * means the validators' verdict cannot be trusted — the rollout ends `validator_surface_tampered`.
 * Everything else (site-packages, stdlib, .pth files, pytest configuration) is a flag only: a
 * `pip install` writes there, and the validators are isolated from configuration outside /tests.
 */
export type SurfaceRule = (
  /** An absolute path pattern (sandbox/paths semantics: `*` within a segment, trailing `/**`). */
  | { kind: 'path'; pattern: string; why: string }
  /** A file name anywhere: the last segment matches the glob. */
  | { kind: 'name'; name: string; why: string }
  /** A directory name anywhere: some segment of the path matches the glob. */
  | { kind: 'segment'; name: string; why: string }
) & { critical?: boolean };

export interface ValidatorSurface {
  readonly rules: readonly SurfaceRule[];
}

/** The PATH of Debian/Ubuntu images (what `python3`, `bash` and test.sh's commands resolve through). */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export const PYTEST_CONFIG_FILES = ['conftest.py', 'pytest.ini', '.pytest.ini', 'tox.ini', 'setup.cfg', 'pyproject.toml'] as const;

export interface SurfaceOptions {
  /** tests/test.sh's text, to list the commands it runs. */
  testSh?: string;
  /** The image's filesystem: adds the realpaths of python3, bash, env and test.sh's commands. */
  snapshot?: FsSnapshot;
  /** The container's PATH (default DEFAULT_PATH). */
  path?: string;
}

const BUILTINS = new Set([
  '.', ':', '[', '[[', ']]', 'alias', 'bg', 'bind', 'break', 'builtin', 'caller', 'cd', 'command', 'compgen', 'complete', 'continue',
  'declare', 'dirs', 'disown', 'echo', 'enable', 'eval', 'exec', 'exit', 'export', 'false', 'fc', 'fg', 'getopts', 'hash', 'help',
  'history', 'jobs', 'kill', 'let', 'local', 'logout', 'mapfile', 'popd', 'printf', 'pushd', 'pwd', 'read', 'readarray',
  'readonly', 'return', 'set', 'shift', 'shopt', 'source', 'suspend', 'test', 'times', 'trap', 'true', 'type', 'typeset',
  'ulimit', 'umask', 'unalias', 'unset', 'wait',
]);
/** Reserved words after which the next word is a command again. */
const COMMAND_STARTERS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', 'fi', 'done', 'esac', 'time']);
/** Reserved words after which the next words are not commands (loop variables, case subjects). */
const NON_COMMAND_STARTERS = new Set(['for', 'case', 'select', 'function', 'in']);
/** Commands that run their first non-option argument as a command (timeout: after its duration). */
const WRAPPERS = new Set(['command', 'exec', 'nohup', 'env', 'sudo', 'xargs', 'nice', 'stdbuf', 'timeout', 'setsid']);
const SEPARATORS = new Set([';', '&&', '||', '|', '|&', '&', '(', ')', '`', '$(', '\n', ';;']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

type Token = { op: string } | { word: string; plain: boolean };

/**
 * Shell tokens, simply: words (quotes removed; `plain` = no expansion in it),
 * control operators, comments and heredoc bodies dropped, redirection targets
 * skipped. Enough to find command words in a test.sh, not a shell parser.
 */
function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let word = '';
  let inWord = false;
  let plain = true;
  let pendingHeredoc: string | undefined;
  let skipNextWord = false;
  const flush = (): void => {
    if (!inWord) return;
    if (skipNextWord) skipNextWord = false;
    else out.push({ word, plain });
    word = '';
    inWord = false;
    plain = true;
  };
  const op = (o: string): void => {
    flush();
    out.push({ op: o });
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    const next = text[i + 1] ?? '';
    if (c === '\\') {
      if (next === '\n') i += 2;
      else {
        word += next;
        inWord = true;
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end < 0 ? text.length : end);
      inWord = true;
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\') j++;
        else if (text[j] === '$' || text[j] === '`') plain = false;
        j++;
      }
      word += text.slice(i + 1, j);
      inWord = true;
      i = j + 1;
      continue;
    }
    if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      flush();
      i++;
      continue;
    }
    if (c === '\n') {
      op('\n');
      i++;
      if (pendingHeredoc !== undefined) {
        // Skip the body up to the delimiter line.
        const delimiter = pendingHeredoc;
        pendingHeredoc = undefined;
        while (i < text.length) {
          const end = text.indexOf('\n', i);
          const line = text.slice(i, end < 0 ? text.length : end);
          i = end < 0 ? text.length : end + 1;
          if (line.trim() === delimiter) break;
        }
      }
      continue;
    }
    if (c === '$' && next === '(' && text[i + 2] === '(') {
      // Arithmetic: no commands inside.
      const end = text.indexOf('))', i + 3);
      plain = false;
      inWord = true;
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    if (c === '$' && next === '(') {
      op('$(');
      i += 2;
      continue;
    }
    if (c === '$') {
      plain = false;
      word += c;
      inWord = true;
      i++;
      continue;
    }
    if (c === '<' && next === '<' && text[i + 2] !== '<') {
      flush();
      i += 2;
      if (text[i] === '-') i++;
      while (text[i] === ' ' || text[i] === '\t') i++;
      let j = i;
      while (j < text.length && !/[\s;&|<>()]/.test(text[j] ?? '')) j++;
      pendingHeredoc = text.slice(i, j).replace(/['"\\]/g, '');
      i = j;
      continue;
    }
    if (c === '<' || c === '>') {
      // A redirection: the word after it is a file, not an argument or a command.
      if (inWord && /^\d+$/.test(word)) {
        word = '';
        inWord = false;
      }
      flush();
      i++;
      while (text[i] === '>' || text[i] === '<' || text[i] === '&' || text[i] === '|') i++;
      if (/^\d/.test(text[i] ?? '') && text[i - 1] === '&') {
        while (/\d/.test(text[i] ?? '')) i++;
        continue;
      }
      skipNextWord = true;
      continue;
    }
    const two = c + next;
    if (two === '&&' || two === '||' || two === '|&' || two === ';;') {
      op(two);
      i += 2;
      continue;
    }
    if (c === ';' || c === '|' || c === '&' || c === '(' || c === ')' || c === '`') {
      op(c);
      i++;
      continue;
    }
    word += c;
    inWord = true;
    i++;
  }
  flush();
  return out;
}

/**
 * The commands a shell script runs, as written: names (resolved through PATH
 * later) or absolute paths. Builtins, words with expansions, assignments and
 * reserved words are left out.
 */
export function scriptCommands(text: string): string[] {
  const found = new Set<string>();
  let commandPosition = true;
  let wrapperSkip = 0;
  let afterWrapper = false;
  for (const t of tokenize(text)) {
    if ('op' in t) {
      if (SEPARATORS.has(t.op)) commandPosition = true;
      afterWrapper = false;
      continue;
    }
    if (!commandPosition && !afterWrapper) continue;
    const w = t.word;
    if (afterWrapper) {
      if (w.startsWith('-') || ASSIGNMENT.test(w)) continue;
      if (wrapperSkip > 0) {
        wrapperSkip--;
        continue;
      }
      afterWrapper = false;
    } else {
      if (ASSIGNMENT.test(w)) continue;
      if (COMMAND_STARTERS.has(w)) continue;
      commandPosition = false;
      if (NON_COMMAND_STARTERS.has(w)) continue;
    }
    if (!t.plain || w === '' || /[*?[\]{}~]/.test(w)) continue;
    if (WRAPPERS.has(w)) {
      afterWrapper = true;
      wrapperSkip = w === 'timeout' ? 1 : 0;
    }
    if (BUILTINS.has(w) || (w.includes('/') && !w.startsWith('/'))) continue;
    found.add(w.startsWith('/') ? normalizePattern(w) : w);
  }
  return [...found].sort();
}

function pathDirs(path: string | undefined): string[] {
  const dirs = (path ?? DEFAULT_PATH).split(':').filter((d) => d.startsWith('/'));
  return [...new Set(dirs.map(normalizePattern))];
}

/** `dir` and every directory above it, `/` first. */
export function ancestors(dir: string): string[] {
  const out = ['/'];
  let cur = '';
  for (const seg of normalizePattern(dir).split('/').filter((s) => s !== '')) {
    cur = `${cur}/${seg}`;
    out.push(cur);
  }
  return out;
}

/** The validator surface of a task. */
export function validatorSurface(task: Pick<Task, 'workdir'>, options: SurfaceOptions = {}): ValidatorSurface {
  const rules: SurfaceRule[] = [];
  const seen = new Set<string>();
  const add = (rule: SurfaceRule): void => {
    const key = `${rule.kind}\0${rule.kind === 'path' ? rule.pattern : rule.name}`;
    if (seen.has(key)) return;
    seen.add(key);
    rules.push(rule);
  };
  const path = (pattern: string, why: string): void => add({ kind: 'path', pattern: normalizePattern(pattern), why });
  const critical = (pattern: string, why: string): void => add({ kind: 'path', pattern: normalizePattern(pattern), why, critical: true });
  const dirs = pathDirs(options.path);
  const view = options.snapshot === undefined ? undefined : viewSnapshot(options.snapshot);
  /** What PATH lookup of `name` finds in the image, and where that really is. */
  const resolve = (name: string): { found: string; real: string } | undefined => {
    if (view === undefined) return undefined;
    for (const d of dirs) {
      const candidate = `${d}/${name}`;
      const entry = view.get(candidate);
      if (entry === undefined) continue;
      const real = view.realpath(candidate);
      if (real !== undefined) return { found: candidate, real };
    }
    return undefined;
  };

  critical(`${VALIDATION_PATHS.tests}/**`, 'the validators themselves (copied in fresh; anything there before is moved aside)');
  critical('/logs/verifier/**', 'where validators write their verdict (reward.txt/json, JUnit)');
  path('/logs/**', 'Harbor keeps /logs for the harness (agent and verifier logs)');

  // The interpreter, wherever PATH can find it first.
  for (const d of new Set([...dirs, '/usr/local/bin', '/usr/bin', '/bin'])) {
    critical(`${d}/python3*`, 'the Python interpreter validators run (found through PATH)');
    critical(`${d}/python`, 'the Python interpreter validators run (found through PATH)');
    critical(`${d}/bash`, 'the shell that runs test.sh (found through PATH)');
    critical(`${d}/env`, '/usr/bin/env runs interpreters named in shebangs');
  }
  for (const name of ['python3', 'bash', 'env']) {
    const r = resolve(name);
    if (r === undefined) continue;
    critical(r.real, `what \`${name}\` resolves to in the image`);
    if (name === 'python3') {
      // The stdlib and site directories of that interpreter's prefix.
      const prefix = posix.dirname(posix.dirname(r.real));
      path(`${prefix}/lib/python3*/**`, 'the standard library and site-packages of the image interpreter');
      path(`${prefix}/lib64/python3*/**`, 'the standard library and site-packages of the image interpreter');
    }
  }
  for (const prefix of ['/usr', '/usr/local', '']) {
    path(`${prefix}/lib/python3*/**`, 'the Python standard library and site/dist-packages');
    path(`${prefix}/lib64/python3*/**`, 'the Python standard library and site/dist-packages');
  }
  path('/etc/python3*/**', "Debian's sitecustomize and interpreter configuration");
  add({ kind: 'segment', name: 'site-packages', why: 'imported by every Python program (pytest and its plugins live here)' });
  add({ kind: 'segment', name: 'dist-packages', why: 'imported by every Python program (pytest and its plugins live here)' });
  add({ kind: 'segment', name: 'sitecustomize', why: 'run at every interpreter start-up' });
  add({ kind: 'segment', name: 'usercustomize', why: 'run at every interpreter start-up' });
  add({ kind: 'name', name: 'sitecustomize.py', why: 'run at every interpreter start-up' });
  add({ kind: 'name', name: 'usercustomize.py', why: 'run at every interpreter start-up' });
  add({ kind: 'name', name: '*.pth', why: 'site executes import lines in .pth files at start-up' });
  add({ kind: 'name', name: 'pyvenv.cfg', why: 'beside or above the interpreter, it moves sys.prefix and site-packages' });
  add({ kind: 'name', name: 'libpython3*', why: 'the interpreter library' });

  // pytest configuration that would be read from above the tests or from the workdir.
  for (const dir of ancestors(VALIDATION_PATHS.tests)) {
    for (const file of PYTEST_CONFIG_FILES) path(`${dir === '/' ? '' : dir}/${file}`, 'pytest configuration on an ancestor of the tests');
  }
  // In the workdir only conftest.py: pyproject.toml, setup.cfg and tox.ini are ordinary project files
  // a task edits (a release bump), and the validators read no ini file outside /tests (-c).
  for (const dir of ancestors(task.workdir)) path(`${dir === '/' ? '' : dir}/conftest.py`, 'a conftest.py on an ancestor of the workdir');

  // The dynamic loader and libc every interpreter and tool loads.
  critical('/etc/ld.so.preload', 'preloaded into every dynamically linked program');
  path('/etc/ld.so.cache', 'where the loader finds shared libraries');
  path('/etc/ld.so.conf', 'where the loader finds shared libraries');
  path('/etc/ld.so.conf.d/**', 'where the loader finds shared libraries');
  for (const libdir of ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64']) {
    critical(`${libdir}/ld-linux-x86-64.so*`, 'the dynamic loader');
    critical(`${libdir}/libc.so*`, 'the C library');
  }

  // The harness's helper (replaced, it would be what runs the validators) and its places.
  critical(LAUNCHER_PATH, 'the harness helper that quarantines and starts the validators');
  critical(`${HARNESS_ROOT}/**`, 'the harness (a read-only mount: a write there failing is expected; one succeeding is not)');
  critical('/.authbench-validation-*/**', 'the harness directory of the validation phase');
  critical(`${VALIDATION_PATHS.quarantine}/**`, 'where pre-existing validator paths are moved');

  // The commands test.sh runs, wherever PATH finds them.
  if (options.testSh !== undefined) {
    for (const cmd of scriptCommands(options.testSh)) {
      if (cmd.startsWith('/')) {
        critical(cmd, 'a command tests/test.sh runs');
        const real = view?.realpath(cmd);
        if (real !== undefined) critical(real, 'a command tests/test.sh runs (its realpath)');
        continue;
      }
      for (const d of dirs) critical(`${d}/${cmd}`, `\`${cmd}\`, run by tests/test.sh (found through PATH)`);
      const r = resolve(cmd);
      if (r !== undefined) critical(r.real, `what \`${cmd}\` (run by tests/test.sh) resolves to in the image`);
    }
  }
  return { rules };
}

function segmentMatches(glob: string, segment: string): boolean {
  return covers(`/${glob}`, `/${segment}`);
}

/** The first surface rule a path falls under, if any. `path` is absolute and normalised. */
export function surfaceRuleFor(surface: ValidatorSurface, path: string): SurfaceRule | undefined {
  const segments = path.split('/').filter((s) => s !== '');
  const last = segments.at(-1) ?? '';
  return surface.rules.find((rule) => {
    switch (rule.kind) {
      case 'path':
        return covers(rule.pattern, path);
      case 'name':
        return segmentMatches(rule.name, last);
      case 'segment':
        return segments.some((s) => segmentMatches(rule.name, s));
    }
  });
}

/** The paths one successful file event changed (for rename and link, both names; for symlink, the new link). */
function changedPaths(e: Extract<TraceEvent, { kind: 'file' }>): string[] {
  // The write axis (an open for writing, creating, removing, renaming, linking, chmod/chown), and a read that may create.
  const changes = isWriteOp(e.op) || (e.op === 'read' && e.may_create === true);
  if (!changes) return [];
  if (e.op === 'symlink') return e.path2 === undefined ? [] : [e.path2];
  // A hard link to a surface file lets later writes through the new name reach it.
  if (e.op === 'rename' || e.op === 'link') return [e.path, ...(e.path2 === undefined ? [] : [e.path2])];
  // Through a symlink, the kernel's path is where the write landed.
  return [e.path, ...(e.real_path === undefined ? [] : [e.real_path])];
}

function succeeded(e: { result: number | null; errno?: string | undefined }): boolean {
  return e.errno === undefined && e.result !== null && e.result >= 0;
}

/**
 * The distinct paths inside the surface that the trace's successful file
 * events wrote, created, removed, renamed (either name), linked, or
 * chmod/chown'ed, sorted. Failed and denied calls are not writes.
 */
export function surfaceWrites(events: Iterable<TraceEvent>, surface: ValidatorSurface): string[] {
  const hits = new Set<string>();
  for (const e of events) {
    if (e.kind !== 'file' || !succeeded(e)) continue;
    for (const p of changedPaths(e)) {
      if (p.startsWith('/') && surfaceRuleFor(surface, p) !== undefined) hits.add(p);
    }
  }
  return [...hits].sort();
}

/** The writes among `writes` (from surfaceWrites) that fall under a critical rule: the verdict cannot be trusted. */
export function criticalSurfaceWrites(writes: readonly string[], surface: ValidatorSurface): string[] {
  return writes.filter((p) => surface.rules.some((rule) => rule.critical === true && surfaceRuleFor({ rules: [rule] }, p) !== undefined));
}
