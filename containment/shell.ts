/**
 * A small, forgiving reader for the bash command lines agents propose: enough
 * structure for token provenance and the static side-effect classifier
 * (words after quote removal, redirections, heredoc bodies, pipes and lists,
 * subshells, and the working directory a `cd` chain leaves behind). It is not
 * a shell: expansions stay literal and nothing is ever rejected.
 */
import { posix } from 'node:path';

export interface Redirect {
  /** `>`, `>>`, `<`, `<<`, `<<<`, `&>`, ... as written (without the fd number). */
  op: string;
  /** The fd number written before the operator, e.g. 2 for `2>`. */
  fd: number | undefined;
  /** The target word after quote removal (`<<`: the delimiter). */
  target: string;
  /** `<<` / `<<-`: the body lines up to the delimiter. */
  body: string | undefined;
}

export interface SimpleCommand {
  /** Words after quote removal; leading `X=y` assignments are in `assignments`. */
  words: string[];
  assignments: string[];
  redirects: Redirect[];
  /** The operator that ended this command (`|`, `&&`, `;`, newline as `;`, ...), or undefined at the end. */
  next: string | undefined;
  /** The working directory when the command runs, if the `cd` chain so far makes it knowable. */
  cwd: string | undefined;
}

type Token = { kind: 'word'; text: string } | { kind: 'op'; op: string; fd?: number } | { kind: 'heredoc'; redirect: Redirect };

const OPERATORS = ['&>>', '<<<', '<<-', '&&', '||', ';;', '|&', '>>', '>|', '<<', '<>', '<&', '>&', '&>', '$(', ';', '&', '|', '(', ')', '<', '>'];
const REDIRECT_OPS: ReadonlySet<string> = new Set(['&>>', '<<<', '<<-', '>>', '>|', '<<', '<>', '<&', '>&', '&>', '<', '>']);
const WORD_BREAK = /[\s;&|()<>]/;

/** Split a command line into words, operators and heredoc bodies. */
function lex(input: string): Token[] {
  const tokens: Token[] = [];
  const pendingHeredocs: { redirect: Redirect; stripTabs: boolean }[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  let backtickOpen = false;

  const endWord = (): void => {
    if (inWord) tokens.push({ kind: 'word', text: word });
    word = '';
    inWord = false;
  };

  const readHeredocBodies = (): void => {
    for (const pending of pendingHeredocs.splice(0)) {
      const lines: string[] = [];
      while (i < input.length) {
        const end = input.indexOf('\n', i);
        const raw = input.slice(i, end === -1 ? input.length : end);
        i = end === -1 ? input.length : end + 1;
        const line = pending.stripTabs ? raw.replace(/^\t+/, '') : raw;
        if (line === pending.redirect.target) break;
        lines.push(line);
      }
      pending.redirect.body = lines.join('\n');
    }
  };

  while (i < input.length) {
    const c = input[i] ?? '';
    if (c === '\n') {
      endWord();
      tokens.push({ kind: 'op', op: ';' });
      i += 1;
      readHeredocBodies();
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      i += 1;
      continue;
    }
    if (c === '#' && !inWord) {
      while (i < input.length && input[i] !== '\n') i += 1;
      continue;
    }
    if (c === '\\') {
      if (input[i + 1] === '\n') i += 2;
      else {
        word += input[i + 1] ?? '';
        inWord = true;
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const end = input.indexOf("'", i + 1);
      word += input.slice(i + 1, end === -1 ? input.length : end);
      inWord = true;
      i = end === -1 ? input.length : end + 1;
      continue;
    }
    if (c === '"') {
      i += 1;
      while (i < input.length && input[i] !== '"') {
        if (input[i] === '\\' && i + 1 < input.length && '"\\$`\n'.includes(input[i + 1] ?? '')) {
          if (input[i + 1] !== '\n') word += input[i + 1];
          i += 2;
        } else {
          word += input[i];
          i += 1;
        }
      }
      inWord = true;
      i += 1;
      continue;
    }
    if (c === '`') {
      endWord();
      tokens.push({ kind: 'op', op: backtickOpen ? ')' : '$(' });
      backtickOpen = !backtickOpen;
      i += 1;
      continue;
    }
    if (c === '$' && (input[i + 1] === '{' || input.startsWith('$((', i))) {
      // Parameter and arithmetic expansions stay part of the word, balanced.
      const [open, close] = input[i + 1] === '{' ? ['{', '}'] : ['(', ')'];
      let depth = 0;
      let j = i + 1;
      for (; j < input.length; j++) {
        if (input[j] === open) depth += 1;
        else if (input[j] === close && --depth === 0) break;
      }
      word += input.slice(i, j + 1);
      inWord = true;
      i = j + 1;
      continue;
    }
    const op = OPERATORS.find((o) => input.startsWith(o, i));
    if (op !== undefined) {
      if (REDIRECT_OPS.has(op) && inWord && /^\d+$/.test(word)) {
        // `2>`: the digits are the redirected fd, not a word.
        const fd = Number(word);
        word = '';
        inWord = false;
        tokens.push({ kind: 'op', op, fd });
      } else {
        endWord();
        tokens.push({ kind: 'op', op });
      }
      i += op.length;
      if (op === '<<' || op === '<<-') {
        while (input[i] === ' ' || input[i] === '\t') i += 1;
        const start = i;
        let delimiter = '';
        while (i < input.length && !WORD_BREAK.test(input[i] ?? '')) {
          const d = input[i] ?? '';
          if (d === "'" || d === '"') {
            const end = input.indexOf(d, i + 1);
            delimiter += input.slice(i + 1, end === -1 ? input.length : end);
            i = end === -1 ? input.length : end + 1;
          } else {
            if (d !== '\\') delimiter += d;
            i += 1;
          }
        }
        if (i === start) continue;
        const redirect: Redirect = { op, fd: undefined, target: delimiter, body: undefined };
        tokens.pop();
        tokens.push({ kind: 'heredoc', redirect });
        pendingHeredocs.push({ redirect, stripTabs: op === '<<-' });
      }
      continue;
    }
    word += c;
    inWord = true;
    i += 1;
  }
  endWord();
  return tokens;
}

const LEADING_KEYWORDS: ReadonlySet<string> = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', 'fi', 'done', 'esac', 'time']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Parse a command line into simple commands, in order, each with the cwd it runs in. */
export function parseShell(input: string, cwd?: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  const cwdStack: (string | undefined)[] = [];
  let current = cwd;
  let cmd: SimpleCommand = fresh(current);

  const finish = (next: string | undefined): void => {
    while (cmd.words.length > 0 && LEADING_KEYWORDS.has(cmd.words[0] ?? '')) cmd.words.shift();
    while (cmd.words.length > 0 && ASSIGNMENT.test(cmd.words[0] ?? '')) cmd.assignments.push(cmd.words.shift() ?? '');
    const isFor = cmd.words[0] === 'for' || cmd.words[0] === 'case' || cmd.words[0] === 'select';
    if (!isFor && (cmd.words.length > 0 || cmd.redirects.length > 0 || cmd.assignments.length > 0)) {
      cmd.next = next;
      commands.push(cmd);
      current = afterCd(cmd, current);
    }
    cmd = fresh(current);
  };

  const tokens = lex(input);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === undefined) continue;
    if (t.kind === 'word') {
      cmd.words.push(t.text);
    } else if (t.kind === 'heredoc') {
      cmd.redirects.push(t.redirect);
    } else if (REDIRECT_OPS.has(t.op)) {
      const target = tokens[i + 1];
      if (target?.kind === 'word') {
        cmd.redirects.push({ op: t.op, fd: t.fd, target: target.text, body: undefined });
        i += 1;
      }
    } else if (t.op === '(' || t.op === '$(') {
      finish(t.op);
      cwdStack.push(current);
      cmd = fresh(current);
    } else if (t.op === ')') {
      finish(t.op);
      current = cwdStack.length > 0 ? cwdStack.pop() : current;
      cmd = fresh(current);
    } else {
      finish(t.op);
    }
  }
  finish(undefined);
  return commands;
}

function fresh(cwd: string | undefined): SimpleCommand {
  return { words: [], assignments: [], redirects: [], next: undefined, cwd };
}

/** The cwd after `cmd` ran, as far as a static reading can tell. */
function afterCd(cmd: SimpleCommand, cwd: string | undefined): string | undefined {
  const [program, ...args] = cmd.words;
  if (program !== 'cd' && program !== 'pushd') return cwd;
  const target = args.find((a) => !a.startsWith('-') || a === '-');
  if (target === undefined || target === '-' || !isLiteralPath(target)) return undefined;
  return resolvePath(target, cwd);
}

/** A word with no expansion in it, so its path is what it says. */
export function isLiteralPath(word: string): boolean {
  return !word.startsWith('~') && !word.includes('$') && !/[*?[]/.test(word);
}

/** Absolute, normalised form of `path` against `cwd`; undefined when that cannot be known. */
export function resolvePath(path: string, cwd: string | undefined): string | undefined {
  if (!isLiteralPath(path)) return undefined;
  if (path.startsWith('/')) return trimSlash(posix.normalize(path));
  if (cwd === undefined) return undefined;
  return trimSlash(posix.normalize(posix.join(cwd, path)));
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}
