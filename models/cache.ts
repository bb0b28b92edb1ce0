import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ENV, hashJson, readEnv, writeJsonAtomic } from '../core/index.ts';
import type { ModelEnv } from './env.ts';
import { ModelRequestSchema, ModelResponseSchema } from './schema.ts';
import type { ModelRequest } from './schema.ts';

/**
 * `replay-only` reproduces a run exactly and costs nothing: every call must
 * be in the cache, and a miss is an error rather than a silent paid request.
 */
export const CACHE_MODES = ['off', 'read-write', 'replay-only'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

/** Bump when the key material or the entry format changes, so old entries stop matching. */
const CACHE_FORMAT_VERSION = 1;

export function defaultCacheDir(env: ModelEnv = process.env): string {
  return readEnv(ENV.AUTHBENCH_CACHE_DIR, env) ?? join(homedir(), '.cache', 'authbench');
}

/** What identifies a call. Never the API key: the same call with another key is the same call. */
export interface CacheKeyInput {
  provider: string;
  model: string;
  /** Effective base URL, or null for the provider's default endpoint. */
  baseUrl: string | null;
  request: ModelRequest;
}

export function cacheKey(input: CacheKeyInput): string {
  return hashJson({ v: CACHE_FORMAT_VERSION, ...input });
}

const CachedResponseSchema = ModelResponseSchema.omit({ cached: true, original: true });

export const CacheEntrySchema = z
  .object({
    schema_version: z.literal(CACHE_FORMAT_VERSION).describe('Entry format version.'),
    key: z.string().regex(/^[0-9a-f]{64}$/).describe('sha256 of the canonical call.'),
    provider: z.string().describe('Provider that answered.'),
    model: z.string().describe('Model name.'),
    base_url: z.string().nullable().describe('Endpoint, null for the provider default.'),
    created_at: z.string().describe('ISO time the response was received.'),
    request: ModelRequestSchema.describe('The call, for inspection (the key is its hash).'),
    response: CachedResponseSchema.describe('The response as first received, with its original cost and latency.'),
  })
  .describe('One cached model response, one file per call.');
export type CacheEntry = z.infer<typeof CacheEntrySchema>;

/** Files under `<dir>/<k[0..2]>/<k>.json`, so no directory grows huge. */
export class ResponseCache {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  static under(cacheDir: string): ResponseCache {
    return new ResponseCache(join(cacheDir, 'responses'));
  }

  pathOf(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The entry, or undefined when absent or unreadable (a torn or foreign file is a miss, then overwritten). */
  async get(key: string): Promise<CacheEntry | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(key), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = CacheEntrySchema.safeParse(json);
    return parsed.success && parsed.data.key === key ? parsed.data : undefined;
  }

  async put(entry: CacheEntry): Promise<void> {
    await writeJsonAtomic(this.pathOf(entry.key), entry);
  }
}
