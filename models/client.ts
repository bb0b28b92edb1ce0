import { generateText } from 'ai';
import type { CallWarning, LanguageModel } from 'ai';
import { AuthbenchError, formatProblem, zodProblems } from '../core/index.ts';
import { ResponseCache, cacheKey, defaultCacheDir } from './cache.ts';
import type { CacheMode } from './cache.ts';
import { fromSdkToolCall, toSdkMessages, toSdkTools } from './convert.ts';
import { API_KEY_ENV, loadModelEnv, resolveApiKey } from './env.ts';
import type { ModelEnv } from './env.ts';
import { ModelInfraError, ModelRequestError, classifyFailure } from './errors.ts';
import { computeCostUsd, loadPricing, lookupPrice } from './pricing.ts';
import type { PricingTable } from './pricing.ts';
import { createLanguageModel, isApiModelRef, resolveBaseUrl } from './providers.ts';
import { formatModelRef } from './ref.ts';
import type { ModelRef } from './ref.ts';
import { DEFAULT_RETRY_POLICY, retryDelayMs, sleep as realSleep } from './retry.ts';
import type { RetryPolicy } from './retry.ts';
import { ModelRequestSchema } from './schema.ts';
import type { ModelRequest, ModelResponse } from './schema.ts';

/**
 * Per attempt. With one retry after a timeout (RetryPolicy.maxTimeoutRetries) a hung endpoint fails a
 * call in about a minute; slow local models and long reasoning need a larger --model-timeout.
 */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Injected for tests: waiting, jitter and the wall clock. */
export interface ClientDeps {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1); see seededRandom for reproducible jitter. */
  random: () => number;
  /** Wall-clock ms (latency, HTTP-date Retry-After). */
  now: () => number;
}

export interface ModelClientOptions {
  /** Endpoint (`--base-url`); else the provider's env variable; required for openai-compatible. */
  baseUrl?: string;
  /** Overrides the key from the environment. Used only to build the provider client. */
  apiKey?: string;
  /** Variables to read keys and URLs from. Default: process.env with `./.env` filled in underneath. */
  env?: ModelEnv;
  /** Per-attempt timeout. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  cache?: { mode: CacheMode; dir?: string };
  /** Price table; default: models/pricing.json merged with $AUTHBENCH_PRICING. */
  pricing?: PricingTable;
  /** Flag name used in configuration errors. */
  baseUrlFlag?: string;
  deps?: Partial<ClientDeps>;
}

export interface CompleteOptions {
  /** Cancels the call (and any backoff wait); surfaces as ModelInfraError reason `cancelled`. */
  signal?: AbortSignal;
}

export interface ModelClient {
  readonly ref: ModelRef;
  /** The resolved endpoint (part of the cache key). */
  readonly baseUrl: string;
  readonly cacheMode: CacheMode;
  /**
   * One chat-with-tools call. Resolves with the response, tool calls never
   * executed; rejects with ModelInfraError (kind `infra`: retries exhausted,
   * never the agent's fault) or ModelRequestError (kind `request`: not retried).
   */
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse>;
}

/**
 * Warnings go into each response instead of process warnings (library code
 * never prints). A logger someone else installed is left alone.
 */
function silenceSdkWarningLog(): void {
  const g = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  if (g.AI_SDK_LOG_WARNINGS === undefined) g.AI_SDK_LOG_WARNINGS = false;
}

function formatWarning(w: CallWarning): string {
  switch (w.type) {
    case 'unsupported':
    case 'compatibility':
      return `${w.type}: ${w.feature}${w.details === undefined ? '' : ` (${w.details})`}`;
    case 'deprecated':
      return `deprecated: ${w.setting}: ${w.message}`;
    case 'other':
      return w.message;
    default:
      return JSON.stringify(w);
  }
}

/** Remove every occurrence of the key, in case a provider echoes it in an error. */
function redact(text: string, secret: string | undefined): string {
  return secret === undefined || secret.length < 8 ? text : text.split(secret).join('[redacted]');
}

/**
 * A client for one model. Configuration problems that do not need a key
 * (unknown provider, missing base URL, bad pricing file) are raised here; a
 * missing key only when a call actually has to reach the provider, so a
 * replay from cache needs no key at all.
 */
export async function createModelClient(ref: ModelRef, options: ModelClientOptions = {}): Promise<ModelClient> {
  if (!isApiModelRef(ref)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${formatModelRef(ref)} is a scripted model; it has no provider client`, {
      hint: 'scripted models are run by the scripted agent',
    });
  }
  const env = options.env ?? (await loadModelEnv());
  const baseUrl = resolveBaseUrl(ref, options.baseUrl, env, options.baseUrlFlag);
  const pricing = options.pricing ?? (await loadPricing({ env }));
  const price = lookupPrice(pricing, ref);
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deps: ClientDeps = { sleep: realSleep, random: Math.random, now: Date.now, ...options.deps };
  const cacheMode = options.cache?.mode ?? 'off';
  const cache = cacheMode === 'off' ? undefined : ResponseCache.under(options.cache?.dir ?? defaultCacheDir(env));
  const model = formatModelRef(ref);
  silenceSdkWarningLog();

  let sdkModel: { model: LanguageModel; apiKey: string | undefined } | undefined;
  const getModel = (): { model: LanguageModel; apiKey: string | undefined } => {
    if (sdkModel !== undefined) return sdkModel;
    const apiKey = options.apiKey ?? resolveApiKey(ref.provider, env);
    // A local OpenAI-compatible server usually wants no key; hosted APIs always do.
    if (apiKey === undefined && ref.provider !== 'openai-compatible') {
      throw new ModelRequestError('missing_key', `${model}: ${API_KEY_ENV[ref.provider]} is not set`, { model, attempts: 0 }, {
        hint: `export ${API_KEY_ENV[ref.provider]}=... or put it in a .env file in the working directory`,
      });
    }
    sdkModel = { model: createLanguageModel(ref, baseUrl, apiKey), apiKey };
    return sdkModel;
  };

  const callOnce = async (request: ModelRequest, signal: AbortSignal): Promise<Omit<ModelResponse, 'latencyMs' | 'cached' | 'costUsd'>> => {
    const result = await generateText({
      model: getModel().model,
      instructions: request.system,
      messages: toSdkMessages(request.messages),
      ...(request.tools.length === 0 ? {} : { tools: toSdkTools(request.tools), toolChoice: 'auto' as const }),
      ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.seed === undefined ? {} : { seed: request.seed }),
      // Ours is the only retry loop: the SDK's would double every wait and hide attempts.
      maxRetries: 0,
      abortSignal: signal,
    });
    return {
      text: result.text,
      toolCalls: result.toolCalls.map(fromSdkToolCall),
      finishReason: result.finishReason,
      usage: { inputTokens: result.usage.inputTokens ?? null, outputTokens: result.usage.outputTokens ?? null },
      warnings: (result.warnings ?? []).map(formatWarning),
      ...(result.response.body === undefined ? {} : { raw: result.response.body }),
    };
  };

  const callWithRetries = async (request: ModelRequest, callerSignal: AbortSignal | undefined) => {
    let timeouts = 0;
    for (let attempt = 1; ; attempt++) {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('model call timed out', 'TimeoutError')), timeoutMs);
      const signal = callerSignal === undefined ? timeout.signal : AbortSignal.any([callerSignal, timeout.signal]);
      let delayMs: number;
      try {
        return await callOnce(request, signal);
      } catch (e) {
        if (e instanceof ModelRequestError) throw e;
        const failure = classifyFailure(e, {
          provider: ref.provider,
          timedOut: timeout.signal.aborted,
          cancelled: callerSignal?.aborted === true,
          nowMs: deps.now(),
        });
        const apiKey = sdkModel?.apiKey;
        // The CLI prints a cause's message; drop a cause that echoes the key.
        const causeOpt = apiKey !== undefined && apiKey.length >= 8 && String(e).includes(apiKey) ? {} : { cause: e };
        const status = failure.status === undefined ? {} : { status: failure.status };
        const fields = { model, attempts: attempt, ...status };
        if (failure.kind === 'request') {
          throw new ModelRequestError(failure.reason, `${model}: ${redact(failure.message, apiKey)}`, fields, causeOpt);
        }
        if (failure.reason === 'timeout') timeouts += 1;
        if (!failure.retryable || attempt > policy.maxRetries || timeouts > policy.maxTimeoutRetries) {
          const after = attempt === 1 ? '' : ` (after ${attempt} attempts)`;
          throw new ModelInfraError(failure.reason, `${model}: ${failure.reason}: ${redact(failure.message, apiKey)}${after}`, fields, causeOpt);
        }
        delayMs = retryDelayMs(attempt - 1, policy, deps.random, failure.retryAfterMs);
      } finally {
        clearTimeout(timer);
      }
      try {
        await deps.sleep(delayMs, callerSignal);
      } catch (e) {
        throw new ModelInfraError('cancelled', `${model}: cancelled by caller while waiting to retry`, { model, attempts: attempt }, { cause: e });
      }
    }
  };

  const complete = async (request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> => {
    const started = deps.now();
    const parsed = ModelRequestSchema.safeParse(request);
    if (!parsed.success) {
      throw new AuthbenchError('INVALID_ARGUMENT', `${model}: malformed model request`, {
        details: zodProblems(parsed.error, 'model request').map(formatProblem),
      });
    }
    const req = parsed.data;
    const names = req.tools.map((t) => t.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw new AuthbenchError('INVALID_ARGUMENT', `${model}: tool ${JSON.stringify(dup)} offered twice`);

    const key = cacheKey({ provider: ref.provider, model: ref.name, baseUrl, request: req });
    if (cache !== undefined) {
      const hit = await cache.get(key);
      if (hit !== undefined) {
        const { costUsd, latencyMs, ...rest } = hit.response;
        return { ...rest, costUsd: 0, latencyMs: deps.now() - started, cached: true, original: { costUsd, latencyMs } };
      }
      if (cacheMode === 'replay-only') {
        throw new ModelRequestError('cache_miss', `${model}: call not in the response cache (replay-only)`, { model, attempts: 0 }, {
          details: [`cache key ${key}`, `looked in ${cache.pathOf(key)}`],
          hint: 'replay-only reproduces a recorded run; record it first with the cache in read-write mode',
        });
      }
    }
    const got = await callWithRetries(req, callOptions.signal);
    const response: ModelResponse = {
      ...got,
      costUsd: computeCostUsd(price, got.usage),
      latencyMs: deps.now() - started,
      cached: false,
    };
    if (cache !== undefined) {
      const { cached: _c, ...stored } = response;
      await cache.put({
        schema_version: 1,
        key,
        provider: ref.provider,
        model: ref.name,
        base_url: baseUrl,
        created_at: new Date(deps.now()).toISOString(),
        request: req,
        response: stored,
      });
    }
    return response;
  };

  return { ref, baseUrl, cacheMode, complete };
}
