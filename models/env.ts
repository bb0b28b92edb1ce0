import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import type { EnvName } from '../core/index.ts';
import type { Provider } from './ref.ts';

/**
 * The variables the provider layer reads: the process environment with a
 * `.env` file filled in underneath. It is a separate object on purpose:
 * keys from `.env` never enter `process.env`, so nothing that spawns a
 * process or builds a container environment from it can pick them up.
 */
export type ModelEnv = Readonly<Record<string, string | undefined>>;

/** Which variable holds each provider's key. */
export const API_KEY_ENV: Readonly<Record<Exclude<Provider, 'scripted'>, EnvName>> = {
  openai: ENV.OPENAI_API_KEY,
  anthropic: ENV.ANTHROPIC_API_KEY,
  'openai-compatible': ENV.OPENAI_COMPATIBLE_API_KEY,
};

/**
 * Parse `.env` content (`KEY=value`, `export KEY=value`, quotes, `#` comments).
 * Node's own parser: dotenv-compatible syntax without a dependency.
 */
export function parseDotEnv(content: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parseEnv(content))) if (v !== undefined) out[k] = v;
  return out;
}

/** Fill in `.env` values under `env`; a variable already set (even to '') is never overwritten. */
export function mergeDotEnv(env: ModelEnv, dotenv: Readonly<Record<string, string>>): ModelEnv {
  const out: Record<string, string | undefined> = { ...dotenv };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return Object.freeze(out);
}

export interface LoadModelEnvOptions {
  /** Base environment (default: process.env). */
  env?: ModelEnv;
  /** A `.env` file to read; must exist when given. Default: `.env` in `cwd`, skipped when absent. */
  dotenvPath?: string;
  cwd?: string;
}

export async function loadModelEnv(options: LoadModelEnvOptions = {}): Promise<ModelEnv> {
  const env = options.env ?? process.env;
  const explicit = options.dotenvPath !== undefined;
  const path = resolve(options.cwd ?? process.cwd(), options.dotenvPath ?? '.env');
  let content: string;
  try {
    content = await readFile(path, 'utf8');
  } catch (e) {
    if (!explicit && (e as NodeJS.ErrnoException).code === 'ENOENT') return mergeDotEnv(env, {});
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot read env file: ${(e as Error).message}`, {
      file: options.dotenvPath ?? '.env',
      cause: e,
    });
  }
  return mergeDotEnv(env, parseDotEnv(content));
}

export function resolveApiKey(provider: Exclude<Provider, 'scripted'>, env: ModelEnv): string | undefined {
  return readEnv(API_KEY_ENV[provider], env);
}
