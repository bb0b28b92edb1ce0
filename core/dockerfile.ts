/**
 * The one Dockerfile reader, for the base-image substitution (docker) and the
 * task loader (task-format): instructions with their physical line ranges,
 * parser directives, global ARGs, and the build stages with their FROM image
 * and WORKDIR. Pure: takes the file's text. Follows BuildKit's parser:
 *
 * - parser directives (`# syntax=`, `# escape=`, `# check=`) only at the top,
 *   until the first line that is not one; `# escape=`` ` `` makes the backtick
 *   the line-continuation character;
 * - a line whose first non-blank character is `#` is a comment, also inside a
 *   continuation, where blank lines are skipped too; continued lines are joined
 *   as written (the escape character and the line break removed);
 * - RUN, COPY and ADD may open heredocs (`<<EOF`, `<<-EOF`, `<<"EOF"`, several
 *   on one line): their bodies follow the instruction, one after the other,
 *   each up to its delimiter line, and are never read as instructions;
 * - ARGs before the first FROM are the global ones, the only ones FROM can use
 *   (`$X`, `${X}`, `${X:-default}`, `${X:+alternative}`); a build arg overrides
 *   a declared ARG's default;
 * - `FROM [--flag …] image [AS name]`: a FROM naming an earlier stage builds on
 *   it (case-insensitively), and a stage starts with its parent's WORKDIR.
 */
import { posix } from 'node:path';

export interface DockerfileHeredoc {
  /** The delimiter word, unquoted. */
  delimiter: string;
  /** `<<-`: leading tabs are stripped (also before the delimiter line). */
  stripTabs: boolean;
  /** `<<"EOF"` / `<<'EOF'`: the body is not expanded. */
  quoted: boolean;
  /** The body lines, as written (tabs included even with `<<-`); a missing delimiter line runs the body to the end of the file. */
  body: string[];
}

export interface DockerfileInstruction {
  /** Upper case, e.g. `FROM`. */
  keyword: string;
  /** The text after the keyword, continuation lines joined. */
  args: string;
  /** 0-based physical line range of the instruction itself (continuations and the comments among them; not heredoc bodies). */
  startLine: number;
  endLine: number;
  /** The last physical line the instruction occupies: endLine, or the last heredoc's delimiter line (or the file's last line when unterminated). */
  spanEndLine: number;
  heredocs: DockerfileHeredoc[];
}

export interface DockerfileStage {
  /** The FROM instruction that starts the stage. */
  from: DockerfileInstruction;
  /** `--platform=…` style flags, kept verbatim. */
  flags: string[];
  /** The image word as written, e.g. `${BASE}`. */
  rawRef: string;
  /** After expanding global ARGs. */
  ref: string;
  /** The `AS` name as written. */
  alias: string | undefined;
  /** `stage`: an earlier stage's name; `unresolved`: expanded to nothing. */
  kind: 'image' | 'stage' | 'scratch' | 'unresolved';
  /** Index of the earlier stage this one builds on (kind `stage`). */
  parent: number | undefined;
  /** The stage's working directory at its end, when the Dockerfile determines it (inherited from the parent stage). */
  workdir: string | undefined;
  /** True when that WORKDIR uses a variable, so `workdir` is left undefined. */
  workdirUsesVariable: boolean;
  /** The instructions after FROM, up to the next FROM. */
  instructions: DockerfileInstruction[];
}

export interface Dockerfile {
  /** Parser directives at the top of the file, names in lower case. */
  directives: Record<string, string>;
  /** Every instruction, in order (ARGs before the first FROM included). */
  instructions: DockerfileInstruction[];
  /** Global ARGs (declared before the first FROM) with their values: build arg, else expanded default; absent when neither. */
  globalArgs: Map<string, string>;
  stages: DockerfileStage[];
}

const DIRECTIVE = /^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$/;
const KNOWN_DIRECTIVES = new Set(['syntax', 'escape', 'check']);
const HEREDOC_INSTRUCTIONS = new Set(['RUN', 'COPY', 'ADD']);

export function parseDockerfile(text: string, buildArgs: Readonly<Record<string, string>> = {}): Dockerfile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const directives: Record<string, string> = {};
  let i = 0;
  for (; i < lines.length; i++) {
    const m = DIRECTIVE.exec((lines[i] ?? '').trimStart());
    const name = m?.[1]?.toLowerCase();
    if (m === null || name === undefined || !KNOWN_DIRECTIVES.has(name) || name in directives) break;
    directives[name] = m[2] ?? '';
  }
  const escape = directives['escape'] === '`' ? '`' : '\\';
  const instructions = readInstructions(lines, i, escape);

  const globalArgs = new Map<string, string>();
  const stages: DockerfileStage[] = [];
  for (const ins of instructions) {
    const stage = stages.at(-1);
    if (ins.keyword === 'FROM') {
      stages.push(fromStage(ins, stages, globalArgs, escape));
    } else if (stage === undefined) {
      if (ins.keyword === 'ARG') declareArgs(ins.args, globalArgs, buildArgs, escape);
    } else {
      stage.instructions.push(ins);
      if (ins.keyword === 'WORKDIR') applyWorkdir(stage, ins.args.trim());
    }
  }
  return { directives, instructions, globalArgs, stages };
}

/** Docker's variable forms in FROM: `$X`, `${X}`, `${X:-default}`, `${X:+alternative}`; unset variables expand to nothing. */
export function expandDockerfileVariables(word: string, vars: ReadonlyMap<string, string>): string {
  return word.replace(
    /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_m, braced: string | undefined, op: string | undefined, alt: string | undefined, bare: string | undefined) => {
      const value = vars.get(braced ?? bare ?? '');
      const set = value !== undefined && value !== '';
      if (op === ':-') return set ? value : (alt ?? '');
      if (op === ':+') return set ? (alt ?? '') : '';
      return value ?? '';
    },
  );
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function isComment(line: string): boolean {
  return line.trimStart().startsWith('#');
}

/** The line without its trailing continuation (escape character then only blanks), or undefined when it does not continue. */
function continued(line: string, escape: string): string | undefined {
  const body = line.replace(/[ \t]+$/, '');
  return body.endsWith(escape) ? body.slice(0, -1) : undefined;
}

function readInstructions(lines: readonly string[], first: number, escape: string): DockerfileInstruction[] {
  const out: DockerfileInstruction[] = [];
  let i = first;
  while (i < lines.length) {
    const startLine = i;
    const line = lines[i++] ?? '';
    if (isBlank(line) || isComment(line)) continue;
    let text = line.trimStart();
    let rest = continued(text, escape);
    let endLine = startLine;
    while (rest !== undefined && i < lines.length) {
      const next = lines[i++] ?? '';
      endLine = i - 1;
      if (isBlank(next) || isComment(next)) continue;
      text = rest + next;
      rest = continued(text, escape);
    }
    if (rest !== undefined) text = rest;
    const m = /^(\S+)\s*([^]*)$/.exec(text);
    const keyword = (m?.[1] ?? '').toUpperCase();
    const args = m?.[2] ?? '';
    const heredocs: DockerfileHeredoc[] = [];
    if (HEREDOC_INSTRUCTIONS.has(keyword)) {
      for (const opened of heredocsIn(args, escape)) {
        const body: string[] = [];
        while (i < lines.length) {
          const b = lines[i++] ?? '';
          if ((opened.stripTabs ? b.replace(/^\t+/, '') : b) === opened.delimiter) break;
          body.push(b);
        }
        heredocs.push({ ...opened, body });
      }
    }
    out.push({ keyword, args, startLine, endLine, spanEndLine: Math.max(endLine, heredocs.length > 0 ? i - 1 : endLine), heredocs });
  }
  return out;
}

/** The heredocs an instruction opens, in order: words (quotes kept) of the form `[fd]<<[-]NAME`, NAME one word. */
function heredocsIn(args: string, escape: string): { delimiter: string; stripTabs: boolean; quoted: boolean }[] {
  const out: { delimiter: string; stripTabs: boolean; quoted: boolean }[] = [];
  for (const { raw } of splitWords(args, escape)) {
    const m = /^\d*<<(-?)([^<]+)$/.exec(raw);
    if (m === null) continue;
    const name = m[2] ?? '';
    const words = splitWords(name, escape);
    const word = words[0];
    if (words.length !== 1 || word === undefined || word.value === '') continue;
    out.push({ delimiter: word.value, stripTabs: m[1] === '-', quoted: word.raw !== word.value });
  }
  return out;
}

/** Whitespace-separated words; quotes group and are removed from `value`, and the escape character escapes the next one. */
export function splitDockerfileWords(text: string, escape = '\\'): { raw: string; value: string }[] {
  return splitWords(text, escape);
}

function splitWords(text: string, escape: string): { raw: string; value: string }[] {
  const out: { raw: string; value: string }[] = [];
  let raw = '';
  let value = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (quote === undefined && /\s/.test(c)) {
      if (inWord) out.push({ raw, value });
      raw = '';
      value = '';
      inWord = false;
      continue;
    }
    inWord = true;
    raw += c;
    if (c === escape && quote !== "'" && i + 1 < text.length) {
      const next = text[++i] ?? '';
      raw += next;
      value += quote === '"' && next !== '"' && next !== escape ? c + next : next;
    } else if (quote === undefined && (c === '"' || c === "'")) {
      quote = c;
    } else if (c === quote) {
      quote = undefined;
    } else {
      value += c;
    }
  }
  if (inWord) out.push({ raw, value });
  return out;
}

function declareArgs(args: string, globalArgs: Map<string, string>, buildArgs: Readonly<Record<string, string>>, escape: string): void {
  for (const { value: w } of splitWords(args, escape)) {
    const eq = w.indexOf('=');
    const name = eq === -1 ? w : w.slice(0, eq);
    const given = buildArgs[name];
    if (given !== undefined) globalArgs.set(name, given);
    else if (eq !== -1) globalArgs.set(name, expandDockerfileVariables(w.slice(eq + 1), globalArgs));
  }
}

function fromStage(from: DockerfileInstruction, earlier: readonly DockerfileStage[], globalArgs: ReadonlyMap<string, string>, escape: string): DockerfileStage {
  const tokens = splitWords(from.args, escape).map((w) => w.value);
  const flags: string[] = [];
  while (tokens[0]?.startsWith('--') === true) flags.push(tokens.shift() ?? '');
  const rawRef = tokens[0] ?? '';
  const alias = tokens[1]?.toUpperCase() === 'AS' ? tokens[2] : undefined;
  const ref = expandDockerfileVariables(rawRef, globalArgs).trim();
  const found = earlier.findIndex((s) => s.alias !== undefined && s.alias.toLowerCase() === ref.toLowerCase());
  const parent = ref === '' || found === -1 ? undefined : found;
  const kind: DockerfileStage['kind'] =
    ref === '' ? 'unresolved' : ref.toLowerCase() === 'scratch' ? 'scratch' : parent !== undefined ? 'stage' : 'image';
  const base = parent === undefined ? undefined : earlier[parent];
  return {
    from,
    flags,
    rawRef,
    ref,
    alias,
    kind,
    parent,
    workdir: base?.workdir,
    workdirUsesVariable: base?.workdirUsesVariable ?? false,
    instructions: [],
  };
}

/** WORKDIR: relative to the one before (`/` at first); a variable makes it unknown until an absolute WORKDIR. */
function applyWorkdir(stage: DockerfileStage, written: string): void {
  const dir = unquote(written);
  if (dir.includes('$')) {
    stage.workdirUsesVariable = true;
    stage.workdir = undefined;
  } else if (!stage.workdirUsesVariable || dir.startsWith('/')) {
    stage.workdirUsesVariable = false;
    stage.workdir = posix.resolve(stage.workdir ?? '/', dir);
  }
}

function unquote(s: string): string {
  return s.length >= 2 && (s[0] === '"' || s[0] === "'") && s.at(-1) === s[0] ? s.slice(1, -1) : s;
}
