/**
 * Base-image map: where no registry is reachable, `FROM python:3.12-slim`
 * becomes `FROM authbench/base:bookworm` (a locally built Debian base), as
 * configured in a map file, never per task. Pure: the caller says which images
 * exist locally.
 */
import { minimatch } from 'minimatch';
import { z } from 'zod';

export const BaseMapEntrySchema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe('minimatch pattern over the image reference as written in FROM (after ARG expansion), e.g. `python:3*`'),
    image: z.string().min(1).describe('Locally available image used instead, e.g. `authbench/base:bookworm`'),
  })
  .strict();

export const BaseMapModeSchema = z
  .enum(['auto', 'always', 'never'])
  .describe('auto: substitute only images missing locally; always: every matching image; never: no substitution');

export const BaseMapFileSchema = z
  .object({
    $comment: z.string().optional().describe('Free text for humans'),
    mode: BaseMapModeSchema.optional().describe('Default substitution mode (auto when absent)'),
    entries: z.array(BaseMapEntrySchema).describe('Checked in order; the first matching pattern wins'),
  })
  .strict();

export type BaseMapEntry = z.infer<typeof BaseMapEntrySchema>;
export type BaseMapMode = z.infer<typeof BaseMapModeSchema>;
export type BaseMapFile = z.infer<typeof BaseMapFileSchema>;

/**
 * `docker.io/library/python:3` and `python:3` name the same image; an
 * untagged reference means `:latest`. Patterns are matched against both the
 * reference as written and this normal form.
 */
export function normalizeImageRef(ref: string): string {
  let r = ref.trim();
  for (const prefix of ['index.docker.io/', 'docker.io/', 'registry-1.docker.io/']) {
    if (r.startsWith(prefix)) r = r.slice(prefix.length);
  }
  if (r.startsWith('library/')) r = r.slice('library/'.length);
  const lastSegment = r.slice(r.lastIndexOf('/') + 1);
  if (!lastSegment.includes(':') && !r.includes('@')) r = `${r}:latest`;
  return r;
}

export function matchBaseMap(entries: readonly BaseMapEntry[], ref: string): BaseMapEntry | undefined {
  const normal = normalizeImageRef(ref);
  return entries.find((e) => minimatch(ref, e.pattern) || minimatch(normal, e.pattern));
}

export interface FromInstruction {
  /** 0-based physical line range the instruction occupies (continuations included). */
  startLine: number;
  endLine: number;
  /** `--platform=…` style flags, kept verbatim. */
  flags: string[];
  /** The image word as written, e.g. `${BASE}`. */
  rawRef: string;
  /** After expanding global ARGs. */
  ref: string;
  alias: string | undefined;
  /** `stage`: an earlier stage's alias; `unresolved`: expanded to nothing. */
  kind: 'image' | 'stage' | 'scratch' | 'unresolved';
}

interface LogicalLine {
  startLine: number;
  endLine: number;
  text: string;
}

/** Join `\`-continued lines; comment lines inside a continuation are dropped, as Docker does. */
function logicalLines(lines: readonly string[]): LogicalLine[] {
  const out: LogicalLine[] = [];
  let current: LogicalLine | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const trimmed = line.trim();
    if (current === undefined) {
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      current = { startLine: i, endLine: i, text: '' };
    } else if (trimmed.startsWith('#') || trimmed === '') {
      current.endLine = i;
      continue;
    }
    current.endLine = i;
    const body = line.replace(/\s+$/, '');
    if (body.endsWith('\\')) {
      current.text += `${body.slice(0, -1)} `;
      continue;
    }
    current.text += body;
    out.push(current);
    current = undefined;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** Whitespace-separated words; quotes group and are removed. */
function words(text: string): string[] {
  const out: string[] = [];
  const re = /(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"']+))/g;
  // A word may be a mix like NAME="a b": glue adjacent pieces.
  let word = '';
  let lastEnd = -1;
  for (const m of text.matchAll(re)) {
    const piece = m[1] ?? m[2] ?? m[3] ?? '';
    if (lastEnd !== -1 && m.index !== lastEnd) {
      out.push(word);
      word = '';
    }
    word += piece;
    lastEnd = m.index + m[0].length;
  }
  if (lastEnd !== -1) out.push(word);
  return out;
}

/** Docker's variable forms in FROM: `$X`, `${X}`, `${X:-default}`, `${X:+alternative}`. */
export function expandVariables(word: string, vars: ReadonlyMap<string, string>): string {
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

/** Every FROM of a Dockerfile with global ARGs (declared before the first FROM) expanded. */
export function parseFromInstructions(
  dockerfile: string,
  buildArgs: Readonly<Record<string, string>> = {},
): FromInstruction[] {
  const lines = dockerfile.split(/\r?\n/);
  const globalArgs = new Map<string, string>();
  const aliases = new Set<string>();
  const out: FromInstruction[] = [];
  let seenFrom = false;
  for (const logical of logicalLines(lines)) {
    const m = /^\s*([A-Za-z]+)(?:\s+([^]*))?$/.exec(logical.text);
    if (m === null) continue;
    const keyword = (m[1] ?? '').toUpperCase();
    const rest = (m[2] ?? '').trim();
    if (keyword === 'ARG' && !seenFrom) {
      for (const w of words(rest)) {
        const eq = w.indexOf('=');
        const name = eq === -1 ? w : w.slice(0, eq);
        const given = buildArgs[name];
        if (given !== undefined) globalArgs.set(name, given);
        else if (eq !== -1) globalArgs.set(name, expandVariables(w.slice(eq + 1), globalArgs));
      }
      continue;
    }
    if (keyword !== 'FROM') continue;
    seenFrom = true;
    const tokens = words(rest);
    const flags: string[] = [];
    while (tokens[0]?.startsWith('--') === true) flags.push(tokens.shift() ?? '');
    const rawRef = tokens[0] ?? '';
    const alias = tokens[1]?.toUpperCase() === 'AS' ? tokens[2] : undefined;
    const ref = expandVariables(rawRef, globalArgs).trim();
    const kind: FromInstruction['kind'] =
      ref === ''
        ? 'unresolved'
        : ref.toLowerCase() === 'scratch'
          ? 'scratch'
          : aliases.has(ref.toLowerCase())
            ? 'stage'
            : 'image';
    out.push({ startLine: logical.startLine, endLine: logical.endLine, flags, rawRef, ref, alias, kind });
    if (alias !== undefined) aliases.add(alias.toLowerCase());
  }
  return out;
}

export interface SubstitutionOptions {
  entries: readonly BaseMapEntry[];
  mode: BaseMapMode;
  buildArgs?: Readonly<Record<string, string>>;
  /** Whether an image reference exists in the local image store (consulted in auto mode only). */
  isLocal: (ref: string) => boolean;
}

export interface BaseImage {
  /** The image the build will use. */
  ref: string;
  /** The original reference when `ref` is a substitute. */
  substitutedFrom: string | undefined;
}

export interface SubstitutionResult {
  /** The Dockerfile to build (identical to the input when nothing was substituted, modulo CRLF). */
  text: string;
  substitutions: { from: string; to: string }[];
  /** Every external image the build starts from, in order, without duplicates. */
  baseImages: BaseImage[];
}

/** The external image references a Dockerfile starts from (before substitution). */
export function externalImageRefs(dockerfile: string, buildArgs: Readonly<Record<string, string>> = {}): string[] {
  const refs = parseFromInstructions(dockerfile, buildArgs)
    .filter((f) => f.kind === 'image')
    .map((f) => f.ref);
  return [...new Set(refs)];
}

export function substituteBaseImages(dockerfile: string, options: SubstitutionOptions): SubstitutionResult {
  const lines = dockerfile.split(/\r?\n/);
  const substitutions: { from: string; to: string }[] = [];
  const baseImages: BaseImage[] = [];
  for (const from of parseFromInstructions(dockerfile, options.buildArgs)) {
    if (from.kind !== 'image') continue;
    const entry = options.mode === 'never' ? undefined : matchBaseMap(options.entries, from.ref);
    const substitute = entry !== undefined && (options.mode === 'always' || !options.isLocal(from.ref));
    if (!substitute) {
      baseImages.push({ ref: from.ref, substitutedFrom: undefined });
      continue;
    }
    const parts = ['FROM', ...from.flags, entry.image, ...(from.alias === undefined ? [] : ['AS', from.alias])];
    lines[from.startLine] = parts.join(' ');
    // Blank the continuation lines so later line numbers in Docker's messages still match the file.
    for (let i = from.startLine + 1; i <= from.endLine; i++) lines[i] = '';
    if (!substitutions.some((s) => s.from === from.ref && s.to === entry.image)) {
      substitutions.push({ from: from.ref, to: entry.image });
    }
    baseImages.push({ ref: entry.image, substitutedFrom: from.ref });
  }
  const unique = baseImages.filter((b, i) => baseImages.findIndex((o) => o.ref === b.ref) === i);
  return { text: lines.join('\n'), substitutions, baseImages: unique };
}

/** `--base-map PATTERN=IMAGE` from the command line. */
export function parseBaseMapFlag(value: string): BaseMapEntry | undefined {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1) return undefined;
  return { pattern: value.slice(0, eq).trim(), image: value.slice(eq + 1).trim() };
}
