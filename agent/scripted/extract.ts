/**
 * How the follow-injection agent finds instructions in text: commands in
 * fenced or indented code blocks, inline code after "run"/"execute", inline
 * code shaped like a command right after "with:"/"using"/"via" in an
 * instruction ("Build the report with: `python3 tool.py --out r.json`"), bare
 * "run ./x" phrases, a command on the line after "... by running:", and
 * helper scripts named in inline code. Deliberately gullible (it is the
 * positive control) and deterministic. Pure.
 */

export const TEXT_KINDS = ['markdown', 'plain'] as const;
/** Indented code blocks only exist in markdown; in plain text (source, tool output) indentation means nothing. */
export type TextKind = (typeof TEXT_KINDS)[number];

export const EXTRACTION_RULES = ['fence', 'indented', 'inline-run', 'inline-command', 'plain-run', 'run-colon', 'helper-script'] as const;
export type ExtractionRule = (typeof EXTRACTION_RULES)[number];

export interface ExtractedCommand {
  command: string;
  rule: ExtractionRule;
  /** Offset in the text where it was found (the order commands are obeyed in). */
  index: number;
}

const SHELL_FENCE_LANGS = new Set(['', 'bash', 'sh', 'shell', 'console', 'zsh', 'terminal', 'shell-session']);
const RUN_VERBS = /^(?:run|running|execute|executing|invoke|invoking)$/i;
/**
 * Words that introduce a means rather than an order: after them inline code
 * is as often a file, a value or a tool's name as a command, so it counts
 * only when it is the word right before the code and the code is shaped like
 * a command (looksLikeCommand).
 */
const MEANS_INTRODUCER = /\b(?:with|using|via)\s*:?\s*$/i;
/**
 * A clause with a form of "be" or a modal describes ("… can be verified with
 * `x`", "the file is created using `y`"); only an instruction's "with" is a step.
 */
const DESCRIPTIVE = /\b(?:is|are|was|were|be|been|being|can|could|may|might)\b/i;
/** Script extensions a path may carry and still be run directly. */
const SCRIPT_EXT = /\.(?:sh|bash|py|pl|rb)$/i;
/** `[tag]`, quote markers and comment leaders some tools and notes put before every line. */
const LINE_PREFIX = /^\s*(?:\[[^\]\n]*\]\s*)?(?:(?:>|#|\/\/)\s+)?/;

/** Blank out a range, keeping newlines so offsets and line structure survive. */
function mask(text: string, start: number, end: number): string {
  return text.slice(0, start) + text.slice(start, end).replace(/[^\n]/g, ' ') + text.slice(end);
}

/** Code-block lines as a command: prompts stripped (when any line has one), comments and blanks dropped. */
function blockCommand(lines: readonly string[]): string {
  const trimmed = lines.map((l) => l.trim()).filter((l) => l !== '');
  const prompted = trimmed.filter((l) => l.startsWith('$ '));
  const body = prompted.length > 0 ? prompted.map((l) => l.slice(2).trim()) : trimmed.filter((l) => !l.startsWith('#'));
  return body.join('\n');
}

function stripTrailingPunctuation(s: string): string {
  return s.replace(/[.,;:)\]]+$/, '');
}

/**
 * Inline code that reads as a command line: a program (a path without a data
 * file's extension, or a lower-case word) then arguments — or a lone path to
 * a script or binary. Not a lone word (`make`, `kubectl`: a tool's name), a
 * file (`/etc/app.ini`), a setting (`level = info`, `key: v`), a
 * configuration statement (`limit_req zone=one burst=5;`: a shell line needs
 * no closing `;`) or an elided example (`curl -H x ...`).
 */
export function looksLikeCommand(code: string): boolean {
  if (/\.\.\.|…|;\s*$/.test(code)) return false;
  const [program = '', ...args] = code.trim().split(/\s+/);
  if (/^(?:\.{0,2}\/|[\w.-]+\/)[\w./+-]*[\w+-]$/.test(program)) {
    if (/\.[A-Za-z]\w*$/.test(program) && !SCRIPT_EXT.test(program)) return false;
    // A lone path is a command only when it names a script or a binary: otherwise a folder or an output.
    return args.length > 0 || SCRIPT_EXT.test(program) || /\/s?bin\/[^/]+$/.test(program);
  }
  if (!/^[a-z][\w+-]*$/.test(program) || args.length === 0) return false;
  return !/^[=:]/.test(args[0] ?? '');
}

/** Every command the text asks to be run, in order of appearance, each once. */
export function extractCommands(text: string, kind: TextKind): ExtractedCommand[] {
  const found: ExtractedCommand[] = [];
  let work = text.replace(/\r\n?/g, '\n');

  for (const m of work.matchAll(/^[ \t]*(```+|~~~+)[ \t]*([^\n`]*)\n([\s\S]*?)^[ \t]*\1[ \t]*$/gm)) {
    const lang = (m[2] ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
    if (SHELL_FENCE_LANGS.has(lang)) {
      const command = blockCommand((m[3] ?? '').split('\n'));
      if (command !== '') found.push({ command, rule: 'fence', index: m.index });
    }
    work = mask(work, m.index, m.index + m[0].length);
  }

  const lines = work.split('\n');
  const offsets: number[] = [];
  lines.reduce((off, line) => (offsets.push(off), off + line.length + 1), 0);
  const isBlank = (i: number): boolean => (lines[i] ?? '').trim() === '';

  if (kind === 'markdown') {
    for (let i = 0; i < lines.length; i++) {
      const indented = (l: string | undefined): boolean => l !== undefined && /^(?: {4}|\t)/.test(l) && l.trim() !== '';
      if (!indented(lines[i]) || (i > 0 && !isBlank(i - 1))) continue;
      const start = i;
      while (i + 1 < lines.length && (indented(lines[i + 1]) || (isBlank(i + 1) && indented(lines[i + 2])))) i++;
      const command = blockCommand(lines.slice(start, i + 1));
      if (command !== '') found.push({ command, rule: 'indented', index: offsets[start] ?? 0 });
      const end = (offsets[i] ?? 0) + (lines[i] ?? '').length;
      work = mask(work, offsets[start] ?? 0, end);
    }
  }

  const masked = work.split('\n');
  for (let i = 0; i < masked.length; i++) {
    const line = (masked[i] ?? '').replace(LINE_PREFIX, '');
    if (!/\b(?:run|running|execute|executing)(?:\s+(?:this|these|the following)(?:\s+commands?)?)?\s*:\s*$/i.test(line)) continue;
    const next = isBlank(i + 1) ? i + 2 : i + 1;
    const target = masked[next];
    if (target === undefined || target.trim() === '') continue; // masked: a code block already took it
    const command = target.replace(LINE_PREFIX, '').trim();
    if (command.includes('`')) continue; // prose with inline code; the inline rule decides
    if (command !== '') found.push({ command, rule: 'run-colon', index: offsets[next] ?? 0 });
  }

  for (const m of work.matchAll(/`([^`\n]+)`/g)) {
    const code = (m[1] ?? '').trim();
    if (code === '') continue;
    const before = work.slice(Math.max(0, m.index - 80), m.index);
    const sentence = before.split(/[.!?](?:\s|$)|\n[ \t]*\n|`/).at(-1) ?? '';
    const words = sentence.replace(/\[[^\]\n]*\]/g, ' ').trim().split(/\s+/).slice(-4).map((w) => w.replace(/[^A-Za-z]/g, ''));
    if (words.some((w) => RUN_VERBS.test(w))) found.push({ command: code, rule: 'inline-run', index: m.index });
    else if (MEANS_INTRODUCER.test(sentence) && !DESCRIPTIVE.test(sentence) && looksLikeCommand(code)) found.push({ command: code, rule: 'inline-command', index: m.index });
    else if (/^(?:\.{1,2}\/|\/)?[\w./-]+\.sh$/.test(code)) found.push({ command: `bash ${code}`, rule: 'helper-script', index: m.index });
  }

  for (const m of work.matchAll(/\b(?:run|execute)\s+((?:(?:bash|sh|python3?)\s+)?\.{0,2}\/[^\s`'"]+(?:[ \t]+--?[\w-]+)*)/gi)) {
    const command = stripTrailingPunctuation(m[1] ?? '');
    if (command !== '') found.push({ command, rule: 'plain-run', index: m.index });
  }

  const seen = new Set<string>();
  return found
    .sort((a, b) => a.index - b.index)
    .filter((c) => (seen.has(c.command) ? false : (seen.add(c.command), true)));
}
