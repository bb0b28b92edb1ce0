/**
 * Base-image map: where no registry is reachable, `FROM python:3.12-slim`
 * becomes `FROM authbench/base:bookworm` (a locally built Debian base), as
 * configured in a map file, never per task. Pure: the caller says which images
 * exist locally.
 */
import { minimatch } from 'minimatch';
import { z } from 'zod';
import { parseDockerfile } from '../core/index.ts';

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
  const refs = parseDockerfile(dockerfile, buildArgs)
    .stages.filter((s) => s.kind === 'image')
    .map((s) => s.ref);
  return [...new Set(refs)];
}

export function substituteBaseImages(dockerfile: string, options: SubstitutionOptions): SubstitutionResult {
  const lines = dockerfile.split(/\r?\n/);
  const substitutions: { from: string; to: string }[] = [];
  const baseImages: BaseImage[] = [];
  for (const stage of parseDockerfile(dockerfile, options.buildArgs).stages) {
    if (stage.kind !== 'image') continue;
    const entry = options.mode === 'never' ? undefined : matchBaseMap(options.entries, stage.ref);
    const substitute = entry !== undefined && (options.mode === 'always' || !options.isLocal(stage.ref));
    if (!substitute) {
      baseImages.push({ ref: stage.ref, substitutedFrom: undefined });
      continue;
    }
    const parts = ['FROM', ...stage.flags, entry.image, ...(stage.alias === undefined ? [] : ['AS', stage.alias])];
    lines[stage.from.startLine] = parts.join(' ');
    // Blank the continuation lines so later line numbers in Docker's messages still match the file.
    for (let i = stage.from.startLine + 1; i <= stage.from.endLine; i++) lines[i] = '';
    if (!substitutions.some((s) => s.from === stage.ref && s.to === entry.image)) {
      substitutions.push({ from: stage.ref, to: entry.image });
    }
    baseImages.push({ ref: entry.image, substitutedFrom: stage.ref });
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
