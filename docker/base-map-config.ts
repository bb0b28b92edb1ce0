import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AuthbenchError, ENV, formatProblem, readEnv, zodProblems } from '../core/index.ts';
import type { BaseMapEntry, BaseMapMode } from './base-map.ts';
import { BaseMapFileSchema } from './base-map.ts';

export const DEFAULT_BASE_MAP_FILE = fileURLToPath(new URL('./base-map.json', import.meta.url));

export interface BaseMap {
  entries: BaseMapEntry[];
  mode: BaseMapMode;
  /** The file the entries came from (after any extra entries). */
  file: string;
}

/** Load the map from `file`, else $AUTHBENCH_BASE_MAP, else the bundled default. */
export async function loadBaseMap(file?: string, env: NodeJS.ProcessEnv = process.env): Promise<BaseMap> {
  const path = file ?? readEnv(ENV.AUTHBENCH_BASE_MAP, env) ?? DEFAULT_BASE_MAP_FILE;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `cannot read base-image map: ${(e as Error).message}`, {
      file: path,
      ...(file === undefined && path !== DEFAULT_BASE_MAP_FILE ? { hint: `set by ${ENV.AUTHBENCH_BASE_MAP}` } : {}),
      cause: e,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `base-image map is not valid JSON: ${(e as Error).message}`, { file: path });
  }
  const parsed = BaseMapFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new AuthbenchError('INVALID_CONFIG', 'invalid base-image map', {
      file: path,
      details: zodProblems(parsed.error, path).map(formatProblem),
    });
  }
  return { entries: parsed.data.entries, mode: parsed.data.mode ?? 'auto', file: path };
}
