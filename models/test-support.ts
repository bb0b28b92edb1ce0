import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test-only: a scripted OpenAI-compatible endpoint on 127.0.0.1 (non-streaming
 * `/v1/chat/completions`), so the provider path runs end to end in tests
 * without any hosted model. Not exported from index.ts: tests (these and the
 * docker tests of eval and policy writing) import this file by path.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type FakeReply =
  | { status?: number; headers?: Record<string, string>; body: unknown }
  /** Accept the request and never answer (until the client gives up or the server closes). */
  | { hang: true };

export type FakeScript = (req: RecordedRequest, index: number) => FakeReply;

export interface FakeServer {
  /** Base URL including `/v1`, as OpenAI-style clients expect. */
  readonly baseUrl: string;
  readonly requests: readonly RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeOpenAiServer(script: FakeScript): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text; a test asserting on it will say so
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const reply = script(recorded, requests.length - 1);
      if ('hang' in reply) {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface FakeToolCall {
  id: string;
  name: string;
  /** Sent verbatim: may be malformed JSON on purpose. */
  arguments: string;
}

/** A Chat Completions response body. */
export function chatCompletion(reply: {
  content?: string | null;
  toolCalls?: readonly FakeToolCall[];
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  model?: string;
}): unknown {
  const toolCalls = reply.toolCalls ?? [];
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: reply.model ?? 'fake-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content ?? null,
          ...(toolCalls.length === 0
            ? {}
            : {
                tool_calls: toolCalls.map((t) => ({
                  id: t.id,
                  type: 'function',
                  function: { name: t.name, arguments: t.arguments },
                })),
              }),
        },
        finish_reason: reply.finishReason ?? (toolCalls.length === 0 ? 'stop' : 'tool_calls'),
      },
    ],
    ...(reply.usage === undefined
      ? {}
      : { usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } }),
  };
}

/** An OpenAI-style error body. */
export function errorBody(message: string, type = 'server_error'): unknown {
  return { error: { message, type, code: null, param: null } };
}
