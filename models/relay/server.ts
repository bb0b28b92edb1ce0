import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthbenchError, hashJson, sha256 } from '../../core/index.ts';
import { computeCostUsd, lookupPrice, ModelRequestSchema } from '../index.ts';
import type { CacheMode, PricingTable, ResponseCache } from '../index.ts';
import { anthropicMessages } from './anthropic.ts';
import type { RelayBackend } from './backends.ts';
import { admit, budgetRefusal, charge, EMPTY_TOTALS } from './budget.ts';
import type { BudgetTotals, RelayBudget } from './budget.ts';
import { openAiChat, openAiErrorBody } from './openai.ts';
import { RelayRecordSchema } from './records.ts';
import { openAiResponses } from './responses.ts';
import type { BodyDigest, RecordSink, RelayOutcome, RelayRecord } from './records.ts';
import { isPlainObject, REFUSAL_STATUS } from './wire.ts';
import type { ApiCodec, Refusal, RelayApi, RelayReply } from './wire.ts';

/**
 * The model relay: an HTTP server an installed agent calls instead of its
 * provider. It checks the model name, the budget and the request size,
 * answers from the cache, a scripted model or the provider (with the host's
 * key, which never leaves it), and records every exchange.
 */

/** Where to listen: TCP (127.0.0.1 and a free port by default) or a unix socket path. */
export type RelayListen = { host?: string; port?: number } | { socketPath: string };

export interface RelayOptions {
  /** Model names a client may ask for (Claude Code, for one, also calls a small model); the first is listed first. */
  models: readonly [string, ...string[]];
  backend: RelayBackend;
  listen?: RelayListen;
  budget?: RelayBudget;
  /** Largest request body accepted. */
  maxRequestBytes?: number;
  /** Prices for the cost budget and records (looked up as `<backend provider>/<model>`). */
  pricing?: PricingTable;
  cache?: { cache: ResponseCache; mode: Exclude<CacheMode, 'off'> };
  sink?: RecordSink;
  /** Keep request and response bodies in records, not only their digests. */
  recordBodies?: boolean;
  now?: () => number;
}

export interface Relay {
  /** Base URL for HTTP clients (`http://127.0.0.1:PORT`, or `http://localhost` over a unix socket). */
  readonly url: string;
  readonly port: number | null;
  readonly socketPath: string | null;
  /** Records so far, in the order the exchanges finished. */
  events(): readonly RelayRecord[];
  totals(): BudgetTotals;
  /** Stops accepting, waits for exchanges in flight and the sink; rejects with the first sink failure. */
  close(): Promise<void>;
}

/** Anthropic allows 32 MB; an agent's request never comes near it, a runaway one might. */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;

const CLOSE_GRACE_MS = 5_000;

const ID_PREFIX: Record<RelayApi, string> = { 'openai-chat': 'chatcmpl', 'openai-responses': 'resp', 'anthropic-messages': 'msg' };

const CODECS: readonly ApiCodec[] = [openAiChat, openAiResponses, anthropicMessages];

/** Remove every occurrence of each secret (shorter strings are never keys and would mangle text). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 8) out = out.split(s).join('[redacted]');
  return out;
}

type BodyRead = { ok: true; bytes: Buffer } | { ok: false };

function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve({ ok: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve({ ok: false });
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve({ ok: true, bytes: Buffer.concat(chunks) }));
    req.on('error', reject);
  });
}

function digest(text: string, body: unknown, keep: boolean): BodyDigest {
  return { sha256: sha256(text), bytes: Buffer.byteLength(text), ...(keep ? { body } : {}) };
}

interface Exchange {
  status: number;
  contentType: string;
  payload: string;
  /** Parsed response for the record (the text for a stream). */
  responseBody: unknown;
  outcome: RelayOutcome;
  source: RelayRecord['source'];
  error?: string;
  reply?: RelayReply;
  costUsd: number | null;
}

export async function startRelay(options: RelayOptions): Promise<Relay> {
  const now = options.now ?? Date.now;
  const limit = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const backend = options.backend;
  const secrets = backend.secrets;
  const records: RelayRecord[] = [];
  const inFlight = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let totals = EMPTY_TOTALS;
  let seq = 0;
  let sinkChain: Promise<void> = Promise.resolve();
  let sinkError: unknown;

  const refuse = (codec: ApiCodec | undefined, refusal: Refusal, source: RelayRecord['source'] = 'relay', outcome: RelayOutcome = refusal.kind): Exchange => {
    const body = (codec?.errorBody ?? openAiErrorBody)(refusal);
    return { status: REFUSAL_STATUS[refusal.kind], contentType: 'application/json', payload: JSON.stringify(body), responseBody: body, outcome, source, error: refusal.message, costUsd: null };
  };

  const replyExchange = (codec: ApiCodec, reply: RelayReply, model: string, stream: boolean, streamUsage: boolean, source: RelayRecord['source'], costUsd: number | null, id: string): Exchange => {
    const meta = { id, model, created: Math.floor(now() / 1000) };
    if (stream) {
      const payload = codec.encodeStream(reply, { ...meta, streamUsage }).join('');
      return { status: 200, contentType: 'text/event-stream', payload, responseBody: payload, outcome: source === 'cache' ? 'cached' : 'ok', source, reply, costUsd };
    }
    const body = codec.encodeReply(reply, meta);
    return { status: 200, contentType: 'application/json', payload: JSON.stringify(body), responseBody: body, outcome: source === 'cache' ? 'cached' : 'ok', source, reply, costUsd };
  };

  const priceOf = (model: string) => (options.pricing === undefined ? undefined : lookupPrice(options.pricing, { provider: backend.provider, name: model }));

  const exchange = async (codec: ApiCodec, text: string, headers: IncomingMessage['headers'], n: number, note: (model: string, stream: boolean, body: unknown) => void): Promise<Exchange> => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      return refuse(codec, { kind: 'invalid_request', message: `the request body is not JSON: ${(e as Error).message}` });
    }
    note('', false, body);
    if (!isPlainObject(body)) return refuse(codec, { kind: 'invalid_request', message: 'the request body must be a JSON object' });
    const decoded = codec.decodeRequest(body);
    if ('kind' in decoded) return refuse(codec, decoded);
    note(decoded.model, decoded.stream, body);
    if (!options.models.includes(decoded.model)) {
      return refuse(codec, { kind: 'unknown_model', message: `model ${JSON.stringify(decoded.model)} is not served here; this run uses ${options.models.join(', ')}` });
    }
    if (!backend.supports(codec.api)) return refuse(codec, { kind: 'not_found', message: `${codec.path} is not served by this relay's ${backend.provider} backend` });
    const over = options.budget === undefined ? undefined : budgetRefusal(options.budget, totals);
    if (over !== undefined) return refuse(codec, { kind: 'over_budget', message: `authbench model relay: ${over}` });
    totals = admit(totals);
    const id = `${ID_PREFIX[codec.api]}_relay_${n}`;

    // The decoded call identifies it, not the raw body: clients add per-session and streaming-only
    // fields (Claude Code's metadata.user_id, the AI SDK's eager_input_streaming) that change no answer.
    const key = hashJson({ relay: 1, api: codec.api, provider: backend.provider, endpoint: backend.endpoint, model: decoded.model, request: decoded.request });
    if (options.cache !== undefined) {
      const hit = await options.cache.cache.get(key);
      if (hit !== undefined) {
        const { text: t, toolCalls, finishReason, usage } = hit.response;
        return replyExchange(codec, { text: t, toolCalls, finishReason, usage }, decoded.model, decoded.stream, decoded.streamUsage, 'cache', 0, id);
      }
      if (options.cache.mode === 'replay-only') {
        return refuse(codec, { kind: 'backend_error', message: `call not in the response cache (replay-only); key ${key}` }, 'relay', 'cache_miss');
      }
    }
    const started = now();
    const result = await backend.answer({ api: codec.api, codec, decoded, body, headers }, shutdown.signal);
    if (result.kind === 'refusal') return refuse(codec, result.refusal, backend.source);
    if (result.kind === 'upstream_error') {
      const payload = redact(result.body, secrets);
      let parsed: unknown = payload;
      try {
        parsed = JSON.parse(payload);
      } catch {
        // not JSON: recorded as text
      }
      return { status: result.status, contentType: 'application/json', payload, responseBody: parsed, outcome: 'upstream_error', source: 'upstream', error: result.message, costUsd: null };
    }
    const reply = result.reply;
    const costUsd = backend.source === 'scripted' && priceOf(decoded.model) === undefined ? 0 : computeCostUsd(priceOf(decoded.model), reply.usage);
    totals = charge(totals, (reply.usage.inputTokens ?? 0) + (reply.usage.outputTokens ?? 0), costUsd);
    const request = ModelRequestSchema.safeParse(decoded.request);
    // A call the models module could not read back (say, a tool name it rejects) is simply not cached.
    if (options.cache !== undefined && request.success) {
      await options.cache.cache.put({
        schema_version: 1,
        key,
        provider: `relay/${backend.provider}`,
        model: decoded.model,
        base_url: backend.endpoint,
        created_at: new Date(now()).toISOString(),
        request: request.data,
        response: { ...reply, costUsd, latencyMs: now() - started, warnings: [] },
      });
    }
    return replyExchange(codec, reply, decoded.model, decoded.stream, decoded.streamUsage, backend.source, costUsd, id);
  };

  const modelsList = (anthropic: boolean): unknown =>
    anthropic
      ? { data: options.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' })), has_more: false, first_id: options.models[0], last_id: options.models.at(-1) }
      : { object: 'list', data: options.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'authbench-relay' })) };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const received = now();
    const n = ++seq;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const codec = CODECS.find((c) => c.path === path);
    const anthropicClient = req.headers['anthropic-version'] !== undefined || codec?.api === 'anthropic-messages';
    let requestText = '';
    let requestBody: unknown;
    let model: string | null = null;
    let stream = false;
    let result: Exchange;
    const note = (m: string, s: boolean, b: unknown): void => {
      requestBody = b;
      if (m !== '') model = m;
      stream = s;
    };
    const errorCodec = codec ?? (anthropicClient ? anthropicMessages : openAiChat);
    if (method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const body = modelsList(anthropicClient);
      result = { status: 200, contentType: 'application/json', payload: JSON.stringify(body), responseBody: body, outcome: 'ok', source: 'relay', costUsd: null };
    } else if (codec === undefined) {
      result = refuse(errorCodec, { kind: 'not_found', message: `${method} ${path} is not served by the authbench model relay` });
    } else if (method !== 'POST') {
      result = refuse(codec, { kind: 'method_not_allowed', message: `${path} takes POST` });
    } else {
      const read = await readBody(req, limit);
      if (!read.ok) {
        result = refuse(codec, { kind: 'too_large', message: `the request body exceeds ${limit} bytes` });
      } else {
        requestText = read.bytes.toString('utf8');
        requestBody = requestText;
        try {
          result = await exchange(codec, requestText, req.headers, n, note);
        } catch (e) {
          result = refuse(codec, { kind: 'backend_error', message: `authbench model relay failed: ${(e as Error).message}` });
        }
      }
    }
    const payload = redact(result.payload, secrets);
    await new Promise<void>((resolve) => {
      res.on('close', resolve);
      res.writeHead(result.status, {
        'content-type': result.contentType,
        ...(result.contentType === 'text/event-stream' ? { 'cache-control': 'no-cache' } : {}),
        ...(result.status === 413 ? { connection: 'close' } : {}),
      });
      res.end(payload);
    });
    const record: RelayRecord = {
      schema_version: 1,
      seq: n,
      ts: new Date(received).toISOString(),
      api: codec?.api ?? (path.endsWith('/models') ? 'models' : 'unknown'),
      method,
      path,
      model,
      stream,
      source: result.source,
      status: result.status,
      outcome: result.outcome,
      ...(result.error === undefined ? {} : { error: result.error }),
      latency_ms: Math.max(0, now() - received),
      input_tokens: result.reply?.usage.inputTokens ?? null,
      output_tokens: result.reply?.usage.outputTokens ?? null,
      cost_usd: result.costUsd,
      request: digest(requestText, requestBody, options.recordBodies === true),
      response: digest(payload, result.responseBody, options.recordBodies === true),
      ...(result.reply === undefined ? {} : { text: result.reply.text }),
      tool_calls: (result.reply?.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.args })),
      totals: { requests: totals.requests, tokens: totals.tokens, cost_usd: totals.costUsd },
    };
    // Redacted as a whole, so a key echoed anywhere (an upstream error body, a request) never reaches a record.
    const safe = RelayRecordSchema.parse(JSON.parse(redact(JSON.stringify(record), secrets)));
    records.push(safe);
    if (options.sink !== undefined) {
      const sink = options.sink;
      sinkChain = sinkChain.then(() => sink(safe)).catch((e: unknown) => {
        sinkError ??= e;
      });
    }
  };

  const server = createServer((req, res) => {
    const p = handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  });

  const listen = options.listen ?? {};
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const where = 'socketPath' in listen ? listen.socketPath : `${listen.host ?? '127.0.0.1'}:${listen.port ?? 0}`;
      reject(new AuthbenchError('MODEL_UNAVAILABLE', `model relay cannot listen on ${where}: ${e.code ?? e.message}`, { cause: e }));
    });
    if ('socketPath' in listen) server.listen(listen.socketPath, resolve);
    else server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : null;
  const host = 'socketPath' in listen ? null : (listen.host ?? '127.0.0.1');
  const url = port === null || host === null ? 'http://localhost' : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    socketPath: 'socketPath' in listen ? listen.socketPath : null,
    events: () => [...records],
    totals: () => totals,
    close: () =>
      (closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Exchanges in flight finish, unless the provider keeps them waiting past the grace period.
        const grace = setTimeout(() => shutdown.abort(), CLOSE_GRACE_MS);
        await Promise.allSettled([...inFlight]);
        clearTimeout(grace);
        shutdown.abort();
        server.closeAllConnections();
        await stopped;
        await sinkChain;
        if (sinkError !== undefined) throw new AuthbenchError('INTERNAL', `model relay: writing a record failed: ${(sinkError as Error).message}`, { cause: sinkError });
      })()),
  };
}
