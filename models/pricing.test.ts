import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { computeCostUsd, loadPricing, lookupPrice } from './pricing.ts';

describe('pricing', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authbench-pricing-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the bundled table', async () => {
    const table = await loadPricing({ env: {} });
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5' })).toBeDefined();
    expect(lookupPrice(table, { provider: 'anthropic', name: 'claude-sonnet-4-5' })).toBeDefined();
  });

  it('merges a user file named by AUTHBENCH_PRICING over it by key', async () => {
    const file = join(dir, 'prices.json');
    await writeFile(
      file,
      JSON.stringify({
        models: {
          'openai/gpt-5': { input_usd_per_mtok: 100, output_usd_per_mtok: 200 },
          'openai-compatible/qwen': { input_usd_per_mtok: 0, output_usd_per_mtok: 0 },
        },
      }),
    );
    const table = await loadPricing({ env: { AUTHBENCH_PRICING: file } });
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5' })).toEqual({ input_usd_per_mtok: 100, output_usd_per_mtok: 200 });
    expect(lookupPrice(table, { provider: 'openai-compatible', name: 'qwen' })).toEqual({ input_usd_per_mtok: 0, output_usd_per_mtok: 0 });
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5-mini' })).toBeDefined();
  });

  it('names the file and field of a bad user file', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ models: { 'openai/x': { input_usd_per_mtok: -1, output_usd_per_mtok: 1 } } }));
    const err = await loadPricing({ path: file, env: {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_CONFIG', file });
    expect((err as { details: string[] }).details.join('\n')).toContain('models.openai/x.input_usd_per_mtok');
  });

  it('falls back from a dated snapshot to its undated price', () => {
    const table = { 'openai/gpt-5': { input_usd_per_mtok: 1, output_usd_per_mtok: 2 } };
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5-2025-08-07' })).toEqual(table['openai/gpt-5']);
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5-20250807' })).toEqual(table['openai/gpt-5']);
    expect(lookupPrice(table, { provider: 'openai', name: 'gpt-5-turbo' })).toBeUndefined();
    expect(lookupPrice(table, { provider: 'anthropic', name: 'gpt-5' })).toBeUndefined();
  });

  it('computes cost, null when price or usage is unknown', () => {
    const price = { input_usd_per_mtok: 3, output_usd_per_mtok: 15 };
    expect(computeCostUsd(price, { inputTokens: 2_000_000, outputTokens: 100_000 })).toBeCloseTo(7.5, 12);
    expect(computeCostUsd(price, { inputTokens: 0, outputTokens: 0 })).toBe(0);
    expect(computeCostUsd(undefined, { inputTokens: 10, outputTokens: 10 })).toBeNull();
    expect(computeCostUsd(price, { inputTokens: null, outputTokens: 10 })).toBeNull();
  });
});
