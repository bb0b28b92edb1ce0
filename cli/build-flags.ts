/**
 * The build flags every command that builds images takes (build, base build,
 * verify, gen-gold, eval, score, policy): `--base-map PATTERN=IMAGE` and
 * `--build-arg KEY=VALUE`, both repeatable, and the host's CA bundle and
 * proxies for RUN steps only (`--build-ca FILE`, `--build-proxy-from-env`).
 * The repeatable ones are plain string options that yargs collects into an
 * array when repeated, not `array: true`, which would swallow the positionals
 * after them (`build --base-map a=b my-task`).
 */
import { readFile } from 'node:fs/promises';
import chalk from 'chalk';
import type { Argv } from 'yargs';
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import type { BaseMapEntry, BuildHostAccess, BuildHostRecord, SubstitutionRecord, Translation } from '../docker/index.ts';

export interface BuildFlagArgs {
  'base-map'?: string | string[];
  'build-arg'?: string | string[];
  'build-ca'?: string | string[];
  'build-proxy-from-env'?: boolean;
}

export function withBuildFlags<T>(y: Argv<T>): Argv<T & BuildFlagArgs> {
  return y
    .option('base-map', {
      describe: 'Extra FROM substitution PATTERN=IMAGE, checked before dataset recipes and the map file (repeatable)',
      type: 'string',
    })
    .option('build-arg', { describe: 'Docker build argument KEY=VALUE (repeatable)', type: 'string' })
    .option('build-ca', {
      describe: `PEM CA certificates that builds' RUN steps trust (apt, pip, curl behind a TLS-intercepting proxy); not kept in the image (default: $${ENV.AUTHBENCH_BUILD_CA})`,
      type: 'string',
    })
    .option('build-proxy-from-env', {
      describe: `Pass this shell's ${ENV.HTTP_PROXY}/${ENV.HTTPS_PROXY}/${ENV.NO_PROXY} to builds as Docker's proxy build args (kept out of the image)`,
      type: 'boolean',
      default: false,
    }) as Argv<T & BuildFlagArgs>;
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

export interface ParsedBuildFlags {
  baseMapEntries: BaseMapEntry[];
  buildArgs: Record<string, string>;
  hostAccess?: BuildHostAccess;
}

/** The flags as the library's build options; `env` supplies $AUTHBENCH_BUILD_CA and the proxies. */
export async function parseBuildFlags(args: BuildFlagArgs, env: NodeJS.ProcessEnv = process.env): Promise<ParsedBuildFlags> {
  const { certificatesOf, parseBaseMapFlag, proxyBuildArgs } = await import('../docker/index.ts');
  const baseMapEntries = list(args['base-map']).map((flag) => {
    const entry = parseBaseMapFlag(flag);
    if (entry === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--base-map expects PATTERN=IMAGE, got ${JSON.stringify(flag)}`);
    return entry;
  });
  const buildArgs = keyValues(list(args['build-arg']), 'build-arg');

  const caFiles = list(args['build-ca']);
  if (caFiles.length > 1) throw new AuthbenchError('INVALID_ARGUMENT', '--build-ca given more than once: concatenate the certificates into one PEM file');
  const caFile = caFiles[0] ?? readEnv(ENV.AUTHBENCH_BUILD_CA, env);
  let caBundle: string | undefined;
  if (caFile !== undefined) {
    const text = await readFile(caFile, 'utf8').catch((e: unknown) => {
      throw new AuthbenchError('INVALID_ARGUMENT', `--build-ca: cannot read the file (${(e as NodeJS.ErrnoException).code ?? String(e)})`, { file: caFile });
    });
    caBundle = certificatesOf(text, caFile);
  }
  const proxy = args['build-proxy-from-env'] === true ? proxyBuildArgs(env) : {};
  if (args['build-proxy-from-env'] === true && Object.keys(proxy).length === 0) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--build-proxy-from-env: none of ${ENV.HTTP_PROXY}, ${ENV.HTTPS_PROXY}, ${ENV.NO_PROXY} (or their lower-case spellings) is set`);
  }
  const hostAccess: BuildHostAccess = {
    ...(caBundle === undefined ? {} : { caBundle }),
    ...(Object.keys(proxy).length === 0 ? {} : { proxy }),
  };
  return { baseMapEntries, buildArgs, ...(Object.keys(hostAccess).length === 0 ? {} : { hostAccess }) };
}

/** What the builds of a run got from the host, for one line under a table; undefined when nothing was passed. */
export function hostAccessLine(records: readonly (BuildHostRecord | undefined)[]): string | undefined {
  const built = records.filter((r): r is BuildHostRecord => r !== undefined);
  if (built.length === 0) return undefined;
  const proxies = [...new Set(built.flatMap((r) => r.proxy))].filter((p) => p === p.toUpperCase());
  const what = [...(built.some((r) => r.caBundle) ? ['the build CA'] : []), ...(proxies.length > 0 ? [`proxies (${proxies.join(', ')})`] : [])].join(' and ') || 'nothing';
  const runs = built.reduce((n, r) => n + r.runsWithCa, 0);
  const without = built.flatMap((r) => r.runsWithoutCa);
  return `${built.length} build(s) got ${what} for their RUN steps${runs > 0 ? ` (${runs} with the CA)` : ''}; none of it is kept in the images${without.length > 0 ? `; without the CA: ${without.join('; ')}` : ''}`;
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
