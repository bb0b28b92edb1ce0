import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResponseCache, cacheKey, defaultCacheDir } from './cache.ts';
import type { CacheEntry } from './cache.ts';
import type { ModelRequest } from './schema.ts';

const request: ModelRequest = { system: 's', messages: [{ role: 'user', content: 'u' }], tools: [] };
const base = { provider: 'openai', model: 'gpt-5', baseUrl: 'https://api.openai.com/v1', request };

describe('cacheKey', () => {
  it('is a sha256 that ignores key order and absent fields', () => {
    const k = cacheKey(base);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey({ request: { tools: [], messages: [{ content: 'u', role: 'user' }], system: 's' }, baseUrl: base.baseUrl, model: 'gpt-5', provider: 'openai' })).toBe(k);
  });

  it.each([
    ['provider', { ...base, provider: 'openai-compatible' }],
    ['model', { ...base, model: 'gpt-5-mini' }],
    ['base URL', { ...base, baseUrl: 'http://127.0.0.1:8000/v1' }],
    ['system', { ...base, request: { ...request, system: 't' } }],
    ['messages', { ...base, request: { ...request, messages: [{ role: 'user' as const, content: 'v' }] } }],
    ['tools', { ...base, request: { ...request, tools: [{ name: 'x', description: '', parameters: {} }] } }],
    ['temperature', { ...base, request: { ...request, temperature: 0 } }],
    ['seed', { ...base, request: { ...request, seed: 1 } }],
    ['max tokens', { ...base, request: { ...request, maxOutputTokens: 10 } }],
  ])('changes with %s', (_what, other) => {
    expect(cacheKey(other)).not.toBe(cacheKey(base));
  });
});

describe('ResponseCache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authbench-cache-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const entry = (key: string): CacheEntry => ({
    schema_version: 1,
    key,
    provider: 'openai',
    model: 'gpt-5',
    base_url: base.baseUrl,
    created_at: '2025-01-01T00:00:00.000Z',
    request,
    response: { text: 'hi', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 }, costUsd: null, latencyMs: 5, warnings: [] },
  });

  it('stores under responses/<2 hex>/<key>.json and reads it back', async () => {
    const cache = ResponseCache.under(dir);
    const key = cacheKey(base);
    expect(await cache.get(key)).toBeUndefined();
    await cache.put(entry(key));
    expect(cache.pathOf(key)).toBe(join(dir, 'responses', key.slice(0, 2), `${key}.json`));
    expect(await cache.get(key)).toEqual(entry(key));
  });

  it('treats a torn or foreign file as a miss', async () => {
    const cache = ResponseCache.under(dir);
    const key = cacheKey(base);
    await mkdir(dirname(cache.pathOf(key)), { recursive: true });
    await writeFile(cache.pathOf(key), '{"schema_version": 1, "key": ');
    expect(await cache.get(key)).toBeUndefined();
    const other = cacheKey({ ...base, model: 'x' });
    await writeFile(cache.pathOf(key), JSON.stringify(entry(other)));
    expect(await cache.get(key)).toBeUndefined();
  });

  it('defaults to AUTHBENCH_CACHE_DIR, else ~/.cache/authbench', () => {
    expect(defaultCacheDir({ AUTHBENCH_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(defaultCacheDir({})).toMatch(/\.cache\/authbench$/);
  });
});
