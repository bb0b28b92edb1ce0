import type { FINISH_REASONS, ModelRequest, ToolCall, Usage } from '../index.ts';

/**
 * What every API the relay speaks reduces to: one chat-with-tools call in
 * authbench's own request format, and a reply of text plus tool calls. The
 * codecs translate each provider's wire format to and from it, so budget,
 * cache, records and scripted models are written once.
 */

/** The wire APIs the relay serves (OpenAI Chat Completions and Responses, Anthropic Messages). */
export const RELAY_APIS = ['openai-chat', 'openai-responses', 'anthropic-messages'] as const;
export type RelayApi = (typeof RELAY_APIS)[number];

export type FinishReason = (typeof FINISH_REASONS)[number];

/** A model's answer as the relay hands it to a codec. */
export interface RelayReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
}

/** A client request, decoded. */
export interface DecodedRequest {
  model: string;
  stream: boolean;
  /** Chat Completions' `stream_options.include_usage`: a final usage chunk is wanted. */
  streamUsage: boolean;
  request: ModelRequest;
}

/**
 * Why the relay refuses or fails an exchange. Each kind has one HTTP status;
 * each codec names it in its API's own error vocabulary, so the agent sees an
 * error it knows how to show (and whether to retry).
 */
export const REFUSAL_STATUS = {
  invalid_request: 400,
  /** 403, not 429: clients retry a 429 for minutes, and an exhausted budget does not recover. */
  over_budget: 403,
  not_found: 404,
  unknown_model: 404,
  method_not_allowed: 405,
  too_large: 413,
  backend_error: 500,
  upstream_unreachable: 502,
} as const;
export type RefusalKind = keyof typeof REFUSAL_STATUS;

export interface Refusal {
  kind: RefusalKind;
  message: string;
}

/** One wire API: its path, request decoding, reply and error encoding, and what the upstream needs. */
export interface ApiCodec {
  readonly api: RelayApi;
  /** Path the client posts to (`/v1/...`). */
  readonly path: string;
  /** Path under the upstream base URL (which ends in `/v1`, as the models module resolves it). */
  readonly upstreamPath: string;
  decodeRequest(body: unknown): DecodedRequest | Refusal;
  /** The non-streaming response body. */
  encodeReply(reply: RelayReply, meta: ReplyMeta): unknown;
  /** The streaming response as server-sent-event frames, in order. */
  encodeStream(reply: RelayReply, meta: ReplyMeta & { streamUsage: boolean }): string[];
  /** A provider's non-streaming response body → the reply (a refusal when it is not one). */
  decodeUpstream(body: unknown): RelayReply | Refusal;
  errorBody(refusal: Refusal): unknown;
  /** The body sent upstream: the client's own, non-streaming (the relay re-streams the reply itself). */
  upstreamBody(body: Record<string, unknown>): Record<string, unknown>;
  /** The provider's authentication headers for `key`. */
  authHeaders(key: string): Record<string, string>;
  /** Client headers passed upstream (lower case); everything else, credentials included, is dropped. */
  readonly forwardHeaders: readonly string[];
}

export interface ReplyMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'kind' in value && typeof (value as Refusal).kind === 'string' && (value as Refusal).kind in REFUSAL_STATUS;
}

/** One SSE frame; `event` only for APIs that name their events (Anthropic). */
export function sseFrame(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Tool arguments as a model wrote them: parsed JSON, or the raw text with why it did not parse. */
export function parseToolArguments(id: string, name: string, raw: string): ToolCall {
  try {
    return { id, name, args: JSON.parse(raw === '' ? '{}' : raw) as unknown };
  } catch (e) {
    return { id, name, args: raw, parseError: `arguments are not valid JSON: ${(e as Error).message}` };
  }
}
