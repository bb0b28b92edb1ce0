import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { REFUSAL_STATUS, RELAY_APIS } from './wire.ts';
import type { RefusalKind } from './wire.ts';

/**
 * One record per exchange with the relay, self-contained (no types from the
 * rest of authbench) so it can go into a rollout trace as it is.
 *
 * Bodies: the request and response are always identified by sha256 and size;
 * the bodies themselves only when asked (`recordBodies`), because an agent
 * resends its whole conversation on every call and full bodies grow with the
 * square of the episode. The reply's text and tool calls are always kept.
 */

export const RELAY_OUTCOMES = ['ok', 'cached', 'upstream_error', 'cache_miss', ...(Object.keys(REFUSAL_STATUS) as RefusalKind[])] as const;
export type RelayOutcome = 'ok' | 'cached' | 'upstream_error' | 'cache_miss' | RefusalKind;

export const BodyDigestSchema = z
  .object({
    sha256: z.string().regex(/^[0-9a-f]{64}$/).describe('sha256 of the bytes as sent.'),
    bytes: z.number().int().nonnegative().describe('Size in bytes.'),
    body: z.unknown().optional().describe('The body (parsed JSON, or text for a stream), when bodies are recorded.'),
  })
  .describe('A request or response body, identified.');
export type BodyDigest = z.infer<typeof BodyDigestSchema>;

export const RelayToolCallSchema = z
  .object({
    id: z.string().describe('Call id as sent to the client.'),
    name: z.string().describe('Tool name as sent to the client.'),
    args: z.unknown().describe('Arguments (parsed JSON, or raw text when they did not parse).'),
  })
  .describe('A tool call the reply made.');

export const RelayRecordSchema = z
  .object({
    schema_version: z.literal(1).describe('Record format version.'),
    seq: z.number().int().positive().describe('Order the relay received the request in (1-based).'),
    ts: z.string().describe('ISO time the request was received.'),
    api: z.enum([...RELAY_APIS, 'models', 'unknown']).describe('Which API the request used (`models`: GET /v1/models).'),
    method: z.string().describe('HTTP method.'),
    path: z.string().describe('Request path, query string dropped.'),
    model: z.string().nullable().describe('The model the client asked for, when the body named one.'),
    stream: z.boolean().describe('The client asked for server-sent events.'),
    source: z.enum(['upstream', 'scripted', 'cache', 'relay']).describe('Who answered: the provider, a scripted model, the cache, or the relay itself (a refusal).'),
    status: z.number().int().describe('HTTP status sent to the client.'),
    outcome: z.enum(RELAY_OUTCOMES).describe('What happened, refusals by kind.'),
    error: z.string().optional().describe('The error message the client got (key redacted).'),
    latency_ms: z.number().nonnegative().describe('From the request received to the response sent.'),
    input_tokens: z.number().int().nonnegative().nullable().describe('Prompt tokens, null when unknown.'),
    output_tokens: z.number().int().nonnegative().nullable().describe('Generated tokens, null when unknown.'),
    cost_usd: z.number().nonnegative().nullable().describe('What the exchange cost: 0 from cache or a scripted model without a price, null when unknown.'),
    request: BodyDigestSchema.describe('The client request body.'),
    response: BodyDigestSchema.describe('The response body sent to the client.'),
    text: z.string().optional().describe('Text of the reply.'),
    tool_calls: z.array(RelayToolCallSchema).describe('Tool calls of the reply (empty when none or refused).'),
    totals: z
      .object({
        requests: z.number().int().nonnegative().describe('Requests admitted so far.'),
        tokens: z.number().int().nonnegative().describe('Input + output tokens so far.'),
        cost_usd: z.number().nonnegative().describe('Known cost so far.'),
      })
      .describe('The budget ledger after this exchange.'),
  })
  .describe('One exchange with the model relay.');
export type RelayRecord = z.infer<typeof RelayRecordSchema>;

/** Where records go; called once per exchange, in order. */
export type RecordSink = (record: RelayRecord) => void | Promise<void>;

/** Appends each record as one JSON line to `path` (its directory is created). */
export function jsonlSink(path: string): RecordSink {
  let ready: Promise<unknown> | undefined;
  return async (record) => {
    ready ??= mkdir(dirname(path), { recursive: true });
    await ready;
    await appendFile(path, `${JSON.stringify(record)}\n`);
  };
}
