import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  NoContentGeneratedError,
  TypeValidationError,
} from 'ai';
import { AuthbenchError } from '../core/index.ts';
import type { ErrorOptions } from '../core/index.ts';
import { parseRetryAfter } from './retry.ts';

/**
 * Why a model call failed. `infra` reasons say nothing about the agent: a run
 * records them as infrastructure errors, never as agent failures. `request`
 * reasons mean the call itself is wrong (key, model name, replay cache) and
 * retrying cannot help.
 */
export const INFRA_REASONS = ['rate_limit', 'server', 'timeout', 'network', 'invalid_response', 'cancelled'] as const;
export const REQUEST_REASONS = ['auth', 'not_found', 'bad_request', 'missing_key', 'cache_miss'] as const;
export type InfraReason = (typeof INFRA_REASONS)[number];
export type RequestReason = (typeof REQUEST_REASONS)[number];

interface ModelErrorFields {
  /** `provider/name` of the model called. */
  model: string;
  /** HTTP status of the last response, when there was one. */
  status?: number;
  /** Requests made before giving up (0 when none was made). */
  attempts: number;
}

/** The provider could not serve the call (after retries): exit 125, never the agent's fault. */
export class ModelInfraError extends AuthbenchError {
  readonly kind = 'infra' as const;
  readonly reason: InfraReason;
  readonly model: string;
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(reason: InfraReason, message: string, fields: ModelErrorFields, options: ErrorOptions = {}) {
    super('MODEL_UNAVAILABLE', message, options);
    this.reason = reason;
    this.model = fields.model;
    this.status = fields.status;
    this.attempts = fields.attempts;
  }
}

/** The call was rejected for a reason retrying cannot fix (bad key, unknown model, 400, replay miss). */
export class ModelRequestError extends AuthbenchError {
  readonly kind = 'request' as const;
  readonly reason: RequestReason;
  readonly model: string;
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(reason: RequestReason, message: string, fields: ModelErrorFields, options: ErrorOptions = {}) {
    super('MODEL_REQUEST_FAILED', message, options);
    this.reason = reason;
    this.model = fields.model;
    this.status = fields.status;
    this.attempts = fields.attempts;
  }
}

export type ModelError = ModelInfraError | ModelRequestError;

export function isModelError(e: unknown): e is ModelError {
  return e instanceof ModelInfraError || e instanceof ModelRequestError;
}

/** One failed attempt, classified. */
export type AttemptFailure =
  | { kind: 'infra'; reason: InfraReason; retryable: boolean; message: string; status?: number; retryAfterMs?: number }
  | { kind: 'request'; reason: RequestReason; message: string; status?: number };

export interface ClassifyContext {
  provider: string;
  /** Our per-attempt timeout fired. */
  timedOut: boolean;
  /** The caller's own signal aborted. */
  cancelled: boolean;
  nowMs: number;
}

/** Map whatever one attempt threw (AI SDK errors, fetch errors, aborts) to a failure class. */
export function classifyFailure(error: unknown, ctx: ClassifyContext): AttemptFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (ctx.cancelled) return { kind: 'infra', reason: 'cancelled', retryable: false, message: 'cancelled by caller' };
  if (ctx.timedOut) return { kind: 'infra', reason: 'timeout', retryable: true, message: 'request timed out' };
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return { kind: 'infra', reason: 'network', retryable: true, message };
    const retryAfterMs = parseRetryAfter(header(error.responseHeaders, 'retry-after'), ctx.nowMs);
    const withRetryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
    if (status === 429) return { kind: 'infra', reason: 'rate_limit', retryable: true, message, status, ...withRetryAfter };
    if (status === 408) return { kind: 'infra', reason: 'timeout', retryable: true, message, status };
    if (status >= 500) {
      // Retry-After is only meaningful on 503 (RFC 9110); other 5xx use plain backoff.
      const ra = status === 503 ? withRetryAfter : {};
      return { kind: 'infra', reason: 'server', retryable: true, message, status, ...ra };
    }
    if (status === 401) return { kind: 'request', reason: 'auth', message: `bad API key for ${ctx.provider}: ${message}`, status };
    if (status === 403) return { kind: 'request', reason: 'auth', message: `API key for ${ctx.provider} is not allowed to do this: ${message}`, status };
    if (status === 404) return { kind: 'request', reason: 'not_found', message: `not found (wrong model name or base URL?): ${message}`, status };
    return { kind: 'request', reason: 'bad_request', message, status };
  }
  if (
    InvalidResponseDataError.isInstance(error) ||
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) ||
    NoContentGeneratedError.isInstance(error)
  ) {
    return { kind: 'infra', reason: 'invalid_response', retryable: true, message: `unusable response: ${message}` };
  }
  if (isNetworkError(error)) return { kind: 'infra', reason: 'network', retryable: true, message };
  return { kind: 'request', reason: 'bad_request', message };
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** undici reports socket failures as `TypeError('fetch failed')` with the errno deep in `cause`. */
function isNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && NETWORK_CODES.has(code)) return true;
    if (e instanceof TypeError && e.message === 'fetch failed') return true;
  }
  return false;
}
