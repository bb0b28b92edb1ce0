/**
 * Retry timing, kept pure: the client injects `sleep` and `random` so tests
 * see the exact schedule without waiting.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 requests). */
  maxRetries: number;
  /** Backoff before the first retry, before jitter. */
  baseDelayMs: number;
  /** Growth per retry. */
  factor: number;
  /** Cap on the exponential backoff. */
  maxDelayMs: number;
  /** Cap on a server's Retry-After, so a hostile or broken header cannot park a run for hours. */
  maxRetryAfterMs: number;
  /**
   * Retries after a timed-out attempt, within maxRetries: a second hang means the endpoint is dead,
   * so a hung endpoint costs about 2 × the timeout rather than (maxRetries + 1) × it.
   */
  maxTimeoutRetries: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxRetries: 4,
  baseDelayMs: 1_000,
  factor: 2,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
  maxTimeoutRetries: 1,
};

/**
 * Retry-After as milliseconds to wait: delta-seconds or an HTTP date
 * (RFC 9110 §10.2.3). A date in the past means "now" (0). Unparseable → undefined.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * "Equal jitter" backoff for retry number `retry` (0 = first retry): half the
 * capped exponential delay is fixed, half is random, so concurrent runs spread
 * out but never retry immediately.
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** retry);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** The wait before retry `retry`: the server's Retry-After when it sent one, else backoff. */
export function retryDelayMs(
  retry: number,
  policy: RetryPolicy,
  random: () => number,
  retryAfterMs: number | undefined,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  return backoffDelayMs(retry, policy, random);
}

/** Reproducible jitter: the one seeded PRNG lives in core. */
export { seededRandom } from '../core/index.ts';

/** Sleep that wakes early (rejecting with the signal's reason) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
