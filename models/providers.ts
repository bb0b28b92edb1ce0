import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import type { EnvName } from '../core/index.ts';
import type { ModelEnv } from './env.ts';
import { formatModelRef } from './ref.ts';
import type { ModelRef, Provider } from './ref.ts';

export type ApiProvider = Exclude<Provider, 'scripted'>;

/** A model reference this module can call (everything but `scripted`). */
export type ApiModelRef = ModelRef & { provider: ApiProvider };

export function isApiModelRef(ref: ModelRef): ref is ApiModelRef {
  return ref.provider !== 'scripted';
}

/**
 * Defaults are spelled out rather than left to the SDK, which would otherwise
 * read process.env itself: the endpoint is part of the cache key, so it must
 * be exactly the one we resolved.
 */
export const DEFAULT_BASE_URLS: Readonly<Record<ApiProvider, string | undefined>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  'openai-compatible': undefined,
};

export const BASE_URL_ENV: Readonly<Record<ApiProvider, EnvName>> = {
  openai: ENV.OPENAI_BASE_URL,
  anthropic: ENV.ANTHROPIC_BASE_URL,
  'openai-compatible': ENV.OPENAI_COMPATIBLE_BASE_URL,
};

/** Endpoint for a provider: option, else its environment variable, else the provider default. */
export function resolveBaseUrl(ref: ApiModelRef, option: string | undefined, env: ModelEnv, flag = '--base-url'): string {
  const chosen = option ?? readEnv(BASE_URL_ENV[ref.provider], env) ?? DEFAULT_BASE_URLS[ref.provider];
  if (chosen === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${formatModelRef(ref)} needs the server's base URL`, {
      hint: `pass ${flag} http://host:port/v1 or set ${BASE_URL_ENV[ref.provider]}`,
    });
  }
  let url: URL;
  try {
    url = new URL(chosen);
  } catch {
    throw new AuthbenchError('INVALID_ARGUMENT', `base URL ${JSON.stringify(chosen)} is not a URL`, {
      hint: `${flag} (or ${BASE_URL_ENV[ref.provider]}) takes e.g. http://127.0.0.1:8000/v1`,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AuthbenchError('INVALID_ARGUMENT', `base URL ${JSON.stringify(chosen)} must be http or https`);
  }
  return chosen.replace(/\/+$/, '');
}

/**
 * The AI SDK model object. Chat Completions for `openai` (not Responses) so
 * one wire format serves OpenAI and every OpenAI-compatible server alike.
 */
export function createLanguageModel(ref: ApiModelRef, baseUrl: string, apiKey: string | undefined): LanguageModel {
  switch (ref.provider) {
    case 'openai':
      return createOpenAI({ baseURL: baseUrl, ...(apiKey === undefined ? {} : { apiKey }) }).chat(ref.name);
    case 'anthropic':
      return createAnthropic({ baseURL: baseUrl, ...(apiKey === undefined ? {} : { apiKey }) }).messages(ref.name);
    case 'openai-compatible':
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: baseUrl,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).chatModel(ref.name);
  }
}
