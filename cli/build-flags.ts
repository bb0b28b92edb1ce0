/**
 * The build flags of commands that build images: `--base-map PATTERN=IMAGE`
 * and `--build-arg KEY=VALUE`, both repeatable. They are plain string options
 * that yargs collects into an array when repeated, not `array: true`, which
 * would swallow the positionals after them (`build --base-map a=b my-task`).
 */
import chalk from 'chalk';
import type { Argv } from 'yargs';
import { AuthbenchError } from '../core/index.ts';
import type { BaseMapEntry, SubstitutionRecord, Translation } from '../docker/index.ts';

export interface BuildFlagArgs {
  'base-map'?: string | string[];
  'build-arg'?: string | string[];
}

export function withBuildFlags<T>(y: Argv<T>): Argv<T & BuildFlagArgs> {
  return y
    .option('base-map', {
      describe: 'Extra FROM substitution PATTERN=IMAGE, checked before dataset recipes and the map file (repeatable)',
      type: 'string',
    })
    .option('build-arg', { describe: 'Docker build argument KEY=VALUE (repeatable)', type: 'string' }) as Argv<T & BuildFlagArgs>;
}

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** `K=V` flags; the value may itself contain `=`. */
export function keyValues(values: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new AuthbenchError('INVALID_ARGUMENT', `--${flag} expects KEY=VALUE, got ${JSON.stringify(v)}`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

export async function parseBuildFlags(args: BuildFlagArgs): Promise<{ baseMapEntries: BaseMapEntry[]; buildArgs: Record<string, string> }> {
  const { parseBaseMapFlag } = await import('../docker/index.ts');
  const baseMapEntries = list(args['base-map']).map((flag) => {
    const entry = parseBaseMapFlag(flag);
    if (entry === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--base-map expects PATTERN=IMAGE, got ${JSON.stringify(flag)}`);
    return entry;
  });
  return { baseMapEntries, buildArgs: keyValues(list(args['build-arg']), 'build-arg') };
}

/** One substitution for a table cell: `a → b`, the recipe, and in yellow where the substitute differs. */
export function substitutionCell(s: SubstitutionRecord): string {
  const recipe = s.via === 'recipe' && s.recipe !== undefined ? chalk.dim(` [${s.recipe}]`) : '';
  const differs = (s.differs ?? []).length > 0 ? chalk.yellow(` ≠ ${(s.differs ?? []).join(', ')}`) : '';
  return `${s.from} → ${s.to}${recipe}${differs}`;
}

/** Translations for a table cell: counts per kind, `!` when one is flagged. */
export function translationsCell(translations: readonly Translation[]): string {
  if (translations.length === 0) return chalk.dim('-');
  const counts = new Map<string, number>();
  for (const t of translations) counts.set(t.kind, (counts.get(t.kind) ?? 0) + 1);
  const text = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  return translations.some((t) => t.flagged) ? chalk.yellow(`${text} !`) : text;
}
