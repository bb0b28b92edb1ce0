/**
 * A model's setup checked before a job builds or runs anything: its base URL
 * resolves to an http(s) URL and its key is set. The client itself asks for
 * the key only on the first call that reaches the provider (a cache replay
 * needs none), which for `eval` would be after every image was built.
 */
import { AuthbenchError } from '../core/index.ts';
import { API_KEY_ENV, resolveApiKey, type ModelEnv } from './env.ts';
import { resolveBaseUrl, type ApiModelRef } from './providers.ts';
import { formatModelRef } from './ref.ts';
import type { CacheMode } from './cache.ts';

export interface ModelSetupOptions {
  baseUrl?: string;
  cacheMode: CacheMode;
  env: ModelEnv;
  baseUrlFlag?: string;
}

/** INVALID_ARGUMENT for a missing or malformed base URL, or a missing key where calls will need one. Returns the base URL. */
export function checkModelSetup(ref: ApiModelRef, options: ModelSetupOptions): string {
  const baseUrl = resolveBaseUrl(ref, options.baseUrl, options.env, options.baseUrlFlag);
  // A local OpenAI-compatible server usually wants no key, and replay-only never calls out.
  if (ref.provider !== 'openai-compatible' && options.cacheMode !== 'replay-only' && resolveApiKey(ref.provider, options.env) === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${formatModelRef(ref)}: ${API_KEY_ENV[ref.provider]} is not set`, {
      hint: `export ${API_KEY_ENV[ref.provider]}=... or put it in a .env file in the working directory (or --cache replay-only to replay a recorded run)`,
    });
  }
  return baseUrl;
}
