import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AuthbenchError, ENV, readEnv, zodProblems, formatProblem } from '../core/index.ts';
import type { ModelEnv } from './env.ts';
import type { ModelRef } from './ref.ts';
import type { Usage } from './schema.ts';

export const ModelPriceSchema = z
  .object({
    input_usd_per_mtok: z.number().nonnegative().describe('USD per million input (prompt) tokens.'),
    output_usd_per_mtok: z.number().nonnegative().describe('USD per million output (generated) tokens.'),
  })
  .strict()
  .describe('List price of one model.');
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

export const PricingFileSchema = z
  .object({
    _comment: z.string().optional().describe('Free text for humans.'),
    as_of: z.string().optional().describe('When the prices were checked.'),
    models: z.record(z.string().min(1), ModelPriceSchema).describe('Prices keyed by `provider/name`.'),
  })
  .strict()
  .describe('A pricing table: the bundled models/pricing.json or a user override with the same shape.');
export type PricingFile = z.infer<typeof PricingFileSchema>;

export type PricingTable = Readonly<Record<string, ModelPrice>>;

export const BUNDLED_PRICING_PATH = fileURLToPath(new URL('./pricing.json', import.meta.url));

export function parsePricing(value: unknown, file: string): PricingTable {
  const parsed = PricingFileSchema.safeParse(value);
  if (!parsed.success) {
    const problems = zodProblems(parsed.error, file);
    throw new AuthbenchError('INVALID_CONFIG', 'invalid pricing file', {
      file,
      details: problems.map(formatProblem),
    });
  }
  return parsed.data.models;
}

async function readPricingFile(path: string, shownAs: string): Promise<PricingTable> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `cannot read pricing file: ${(e as Error).message}`, { file: shownAs, cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('INVALID_CONFIG', `pricing file is not JSON: ${(e as Error).message}`, { file: shownAs, cause: e });
  }
  return parsePricing(json, shownAs);
}

export interface LoadPricingOptions {
  /** A user pricing file merged over the bundled table (default: $AUTHBENCH_PRICING). */
  path?: string;
  env?: ModelEnv;
}

/** The bundled table with the user's file (option, else AUTHBENCH_PRICING) merged over it by key. */
export async function loadPricing(options: LoadPricingOptions = {}): Promise<PricingTable> {
  const bundled = await readPricingFile(BUNDLED_PRICING_PATH, 'models/pricing.json');
  const userPath = options.path ?? readEnv(ENV.AUTHBENCH_PRICING, options.env ?? process.env);
  if (userPath === undefined) return bundled;
  return { ...bundled, ...(await readPricingFile(userPath, userPath)) };
}

/** Exact `provider/name`, else the name without a trailing snapshot date (`gpt-5-2025-08-07` → `gpt-5`). */
export function lookupPrice(table: PricingTable, ref: ModelRef): ModelPrice | undefined {
  const key = `${ref.provider}/${ref.name}`;
  const exact = table[key];
  if (exact !== undefined) return exact;
  const undated = key.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
  return undated === key ? undefined : table[undated];
}

/** Cost of one call; null (not 0) when the price or the token counts are unknown. */
export function computeCostUsd(price: ModelPrice | undefined, usage: Usage): number | null {
  if (price === undefined || usage.inputTokens === null || usage.outputTokens === null) return null;
  return (usage.inputTokens * price.input_usd_per_mtok + usage.outputTokens * price.output_usd_per_mtok) / 1e6;
}
