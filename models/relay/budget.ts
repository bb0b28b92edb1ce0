import { z } from 'zod';

/**
 * The relay's budget, pure: requests are counted when admitted (so
 * concurrent requests never exceed the count), tokens and cost when the
 * answer is in. A request admitted while under the token or cost limit may
 * take the run over it by that one answer; the next is refused.
 */

export const RelayBudgetSchema = z
  .object({
    maxRequests: z.number().int().positive().optional().describe('Model calls admitted.'),
    maxTotalTokens: z.number().int().positive().optional().describe('Input + output tokens.'),
    maxCostUsd: z.number().positive().optional().describe('USD by the pricing table (calls of unknown cost count 0).'),
  })
  .strict()
  .describe('Limits on what an agent may spend through the relay.');
export type RelayBudget = z.infer<typeof RelayBudgetSchema>;

export interface BudgetTotals {
  requests: number;
  tokens: number;
  costUsd: number;
}

export const EMPTY_TOTALS: BudgetTotals = { requests: 0, tokens: 0, costUsd: 0 };

/** Why a new request may not be admitted, or undefined when it may. */
export function budgetRefusal(budget: RelayBudget, totals: BudgetTotals): string | undefined {
  if (budget.maxRequests !== undefined && totals.requests >= budget.maxRequests) {
    return `request budget exhausted: ${totals.requests} of ${budget.maxRequests} requests used`;
  }
  if (budget.maxTotalTokens !== undefined && totals.tokens >= budget.maxTotalTokens) {
    return `token budget exhausted: ${totals.tokens} of ${budget.maxTotalTokens} tokens used`;
  }
  if (budget.maxCostUsd !== undefined && totals.costUsd >= budget.maxCostUsd) {
    return `cost budget exhausted: $${totals.costUsd.toFixed(4)} of $${budget.maxCostUsd} used`;
  }
  return undefined;
}

export function admit(totals: BudgetTotals): BudgetTotals {
  return { ...totals, requests: totals.requests + 1 };
}

export function charge(totals: BudgetTotals, tokens: number, costUsd: number | null): BudgetTotals {
  return { ...totals, tokens: totals.tokens + tokens, costUsd: totals.costUsd + (costUsd ?? 0) };
}
