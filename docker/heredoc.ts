/**
 * Dockerfile heredocs for a builder that has none. Docker 20.10's legacy
 * builder rejects `RUN <<EOF` ("unknown instruction"), and so does its
 * BuildKit's built-in frontend; the dockerfile:1.4 frontend would come from a
 * registry. So before building, every RUN/COPY/ADD heredoc becomes legacy
 * instructions with BuildKit's meaning (frontend/dockerfile2llb dispatchRun
 * and dispatchCopy):
 *
 * - `RUN <<EOF` alone, body starting with `#!`: BuildKit writes the body to a
 *   file and executes it → we write it to a temporary file, run it, remove it;
 * - `RUN <<EOF` alone otherwise: the body is the shell script (`sh -c body`) →
 *   `eval` of the decoded body in the stage's shell;
 * - anything else (`RUN python3 <<EOF`, `RUN cat <<A >a <<B >b`): BuildKit
 *   hands the command line plus every body and delimiter to the shell, which
 *   does the heredoc itself — quoting (`<<'EOF'`: no expansion; `<<EOF`:
 *   expansion at build time), `<<-` tab stripping → `eval` of exactly that text;
 * - `COPY <<EOF /dest` (and ADD): a file named after the delimiter → a file in
 *   the build context (mode 0664 as BuildKit makes it), its body expanded with
 *   the Dockerfile's variables unless the delimiter is quoted.
 *
 * Scripts travel base64-encoded (no quoting can break them), split over
 * continuation lines; the translated file keeps every instruction on its
 * original line number. Like BuildKit's, the whole script is one argument of
 * `sh -c`, which the kernel caps at 128 KiB. Pure.
 */
import { createHash } from 'node:crypto';
import { parseDockerfile, splitDockerfileWords, expandDockerfileVariables } from '../core/index.ts';
import type { DockerfileHeredoc, DockerfileInstruction } from '../core/index.ts';

/** Where COPY heredoc bodies go in the build context. */
export const HEREDOC_CONTEXT_DIR = '.authbench-heredoc';

/** base64 characters per physical line: far below the legacy parser's 64 KiB line limit. */
const CHUNK = 4096;

export interface Translation {
  /** What kind of rewrite: a heredoc, an apt package renamed, a pip install served by Debian packages. */
  kind: 'heredoc' | 'apt-name' | 'pip-offline';
  /** 1-based line of the instruction in the Dockerfile as written. */
  line: number;
  /** e.g. `RUN python3 - <<'PY' (62 lines): the shell runs the heredoc (no expansion)`. */
  detail: string;
  /** True when the result may differ from what the Dockerfile asked for (a version, a package left out). */
  flagged: boolean;
}

export interface ContextFile {
  /** Relative to the context root, `/`-separated. */
  path: string;
  content: Buffer;
  mode: number;
}

export interface HeredocResult {
  text: string;
  files: ContextFile[];
  translations: Translation[];
}

export interface HeredocOptions {
  buildArgs?: Readonly<Record<string, string>>;
  /** ENV of the image a stage starts from (COPY heredoc expansion sees it), by the stage's image reference. */
  imageEnv?: (ref: string) => Readonly<Record<string, string>> | undefined;
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The body as the heredoc delivers it: lines joined, a final newline, leading tabs gone with `<<-`. */
export function heredocContent(h: DockerfileHeredoc): string {
  const lines = h.stripTabs ? h.body.map((l) => l.replace(/^\t+/, '')) : h.body;
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** `<prefix>` + base64 + `<suffix>`, the base64 split over continuation lines. */
function encodedLines(prefix: string, data: string, suffix: string, escape: string): string[] {
  const encoded = b64(data);
  const chunks: string[] = [];
  for (let i = 0; i < encoded.length; i += CHUNK) chunks.push(encoded.slice(i, i + CHUNK));
  if (chunks.length <= 1) return [`${prefix}${chunks[0] ?? ''}${suffix}`];
  return [`${prefix}${escape}`, ...chunks.slice(0, -1).map((c) => `${c}${escape}`), `${chunks.at(-1) ?? ''}${suffix}`];
}

/** Leading `--flag` words (RUN --mount…, COPY --chown…) and the rest of the arguments. */
export function splitRunFlags(args: string, escape: string): { flags: string[]; rest: string } {
  const flags: string[] = [];
  let rest = args.trimStart();
  for (;;) {
    const word = splitDockerfileWords(rest, escape)[0];
    if (word === undefined || !word.raw.startsWith('--')) break;
    flags.push(word.raw);
    rest = rest.slice(rest.indexOf(word.raw) + word.raw.length).trimStart();
  }
  return { flags, rest };
}

function isHeredocWord(raw: string): boolean {
  return /^\d*<<-?\S/.test(raw);
}

function describe(ins: DockerfileInstruction, rest: string): string {
  const lines = ins.heredocs.reduce((n, h) => n + h.body.length, 0);
  return `${ins.keyword} ${rest.split('\n')[0] ?? ''} (${lines} line${lines === 1 ? '' : 's'})`;
}

function translateRun(ins: DockerfileInstruction, escape: string): { lines: string[]; detail: string } {
  const { flags, rest } = splitRunFlags(ins.args, escape);
  const head = ['RUN', ...flags].join(' ');
  const words = splitDockerfileWords(rest, escape);
  const only = ins.heredocs.length === 1 && words.length === 1 && isHeredocWord(words[0]?.raw ?? '') ? ins.heredocs[0] : undefined;
  if (only !== undefined && only.body.join('\n').startsWith('#!')) {
    // BuildKit executes the file itself: the interpreter comes from its #! line.
    const lines = encodedLines(
      `${head} f="$(mktemp)" && printf '%s' `,
      heredocContent(only),
      ` | base64 -d > "$f" && chmod 755 "$f" && "$f"; s=$?; rm -f "$f"; exit $s`,
      escape,
    );
    return { lines, detail: `${describe(ins, rest)}: script with its own #! interpreter, written to a temporary file and executed` };
  }
  if (only !== undefined) {
    const lines = encodedLines(`${head} eval "$(printf '%s' `, heredocContent(only), ` | base64 -d)"`, escape);
    return { lines, detail: `${describe(ins, rest)}: the body run as the stage's shell script` };
  }
  // The shell sees what BuildKit gives it: the command line, then each body and its delimiter.
  let full = rest;
  for (const h of ins.heredocs) full += `\n${h.body.length === 0 ? '' : `${h.body.join('\n')}\n`}${h.delimiter}`;
  const quoting = ins.heredocs.map((h) => `${h.delimiter}: ${h.quoted ? 'no expansion' : 'expanded by the shell'}${h.stripTabs ? ', tabs stripped' : ''}`);
  const lines = encodedLines(`${head} eval "$(printf '%s' `, full, ` | base64 -d)"`, escape);
  return { lines, detail: `${describe(ins, rest)}: the shell runs the heredoc${ins.heredocs.length > 1 ? 's' : ''} (${quoting.join('; ')})` };
}

/** Variables a COPY heredoc body sees: the image's ENV, then the stage's ARGs (build arg, else default) and ENVs in order. */
class StageVariables {
  private vars = new Map<string, string>();
  private readonly globalArgs: ReadonlyMap<string, string>;
  private readonly buildArgs: Readonly<Record<string, string>>;
  private readonly escape: string;

  constructor(globalArgs: ReadonlyMap<string, string>, buildArgs: Readonly<Record<string, string>>, escape: string) {
    this.globalArgs = globalArgs;
    this.buildArgs = buildArgs;
    this.escape = escape;
  }

  reset(base: ReadonlyMap<string, string>): void {
    this.vars = new Map(base);
  }

  snapshot(): Map<string, string> {
    return new Map(this.vars);
  }

  apply(ins: DockerfileInstruction): void {
    if (ins.keyword === 'ARG') {
      for (const { value } of splitDockerfileWords(ins.args, this.escape)) {
        const eq = value.indexOf('=');
        const name = eq === -1 ? value : value.slice(0, eq);
        const given = this.buildArgs[name];
        const global = this.globalArgs.get(name);
        if (given !== undefined) this.vars.set(name, given);
        else if (eq !== -1) this.vars.set(name, expandDockerfileVariables(value.slice(eq + 1), this.vars));
        else if (global !== undefined) this.vars.set(name, global);
      }
    } else if (ins.keyword === 'ENV') {
      const words = splitDockerfileWords(ins.args, this.escape);
      if (words.length > 0 && !(words[0]?.value ?? '').includes('=')) {
        // Legacy form: ENV NAME the rest of the line.
        const name = words[0]?.value ?? '';
        this.vars.set(name, expandDockerfileVariables(ins.args.trim().slice((words[0]?.raw ?? '').length).trim(), this.vars));
        return;
      }
      for (const { value } of words) {
        const eq = value.indexOf('=');
        if (eq > 0) this.vars.set(value.slice(0, eq), expandDockerfileVariables(value.slice(eq + 1), this.vars));
      }
    }
  }
}

/** Dockerfile-style expansion of a COPY heredoc body: `$X`, `${X}`, `${X:-d}`, `${X:+a}`; `\$` stays a literal `$`. */
export function expandHeredocBody(body: string, vars: ReadonlyMap<string, string>): string {
  return body
    .split('\\$')
    .map((part) => expandDockerfileVariables(part, vars))
    .join('$');
}

function translateCopy(
  ins: DockerfileInstruction,
  escape: string,
  vars: ReadonlyMap<string, string>,
  index: number,
): { lines: string[]; files: ContextFile[]; detail: string } {
  const words = splitDockerfileWords(ins.args, escape);
  const files: ContextFile[] = [];
  let next = 0;
  const out: string[] = [];
  for (const w of words) {
    const h = isHeredocWord(w.raw) ? ins.heredocs[next] : undefined;
    if (h === undefined) {
      out.push(w.raw);
      continue;
    }
    next++;
    const raw = heredocContent(h);
    const content = h.quoted ? raw : expandHeredocBody(raw, vars);
    const digest = createHash('sha256').update(content).digest('hex').slice(0, 12);
    const path = `${HEREDOC_CONTEXT_DIR}/${index}-${digest}/${h.delimiter}`;
    files.push({ path, content: Buffer.from(content, 'utf8'), mode: 0o664 });
    out.push(path);
  }
  const expanded = ins.heredocs.some((h) => !h.quoted && heredocContent(h).includes('$'));
  return {
    lines: [`${ins.keyword} ${out.join(' ')}`],
    files,
    detail: `${describe(ins, ins.args)}: ${files.length} file${files.length === 1 ? '' : 's'} added to the build context${expanded ? ' (variables expanded)' : ''}`,
  };
}

export function translateHeredocs(text: string, options: HeredocOptions = {}): HeredocResult {
  const df = parseDockerfile(text, options.buildArgs);
  if (!df.instructions.some((i) => i.heredocs.length > 0)) return { text, files: [], translations: [] };
  const escape = df.directives['escape'] === '`' ? '`' : '\\';
  const lines = text.split(/\r?\n/);
  const files: ContextFile[] = [];
  const translations: Translation[] = [];
  const vars = new StageVariables(df.globalArgs, options.buildArgs ?? {}, escape);
  // Each stage's variables as they stand after its last instruction so far.
  const stageVars: Map<string, string>[] = [];
  const replacements: { start: number; end: number; lines: string[] }[] = [];
  let stage = -1;
  for (const [index, ins] of df.instructions.entries()) {
    if (ins.keyword === 'FROM') {
      stage++;
      const s = df.stages[stage];
      // A stage built on an earlier one starts with its ENV; an image with its config's ENV.
      const base =
        s?.kind === 'stage' && s.parent !== undefined
          ? (stageVars[s.parent] ?? new Map<string, string>())
          : new Map(Object.entries(s?.kind === 'image' ? (options.imageEnv?.(s.ref) ?? {}) : {}));
      vars.reset(base);
      stageVars[stage] = vars.snapshot();
      continue;
    }
    if (stage >= 0) {
      vars.apply(ins);
      stageVars[stage] = vars.snapshot();
    }
    if (ins.heredocs.length === 0) continue;
    if (ins.keyword === 'RUN') {
      const r = translateRun(ins, escape);
      replacements.push({ start: ins.startLine, end: ins.spanEndLine, lines: r.lines });
      translations.push({ kind: 'heredoc', line: ins.startLine + 1, detail: r.detail, flagged: false });
    } else {
      const r = translateCopy(ins, escape, vars.snapshot(), index);
      replacements.push({ start: ins.startLine, end: ins.spanEndLine, lines: r.lines });
      files.push(...r.files);
      translations.push({ kind: 'heredoc', line: ins.startLine + 1, detail: r.detail, flagged: false });
    }
  }
  // From the bottom up, so earlier line numbers stay valid; pad with blank lines so later ones do too.
  for (const r of replacements.reverse()) {
    const span = r.end - r.start + 1;
    const body = r.lines.length >= span ? r.lines : [...r.lines, ...Array<string>(span - r.lines.length).fill('')];
    lines.splice(r.start, span, ...body);
  }
  return { text: lines.join('\n'), files, translations };
}
