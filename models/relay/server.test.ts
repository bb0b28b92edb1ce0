import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import type { ModelMessage } from 'ai';
import { request as httpRequest } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replayModel } from '../../agent/index.ts';
import { ResponseCache, toSdkTools } from '../index.ts';
import { chatCompletion, errorBody, startFakeOpenAiServer, type FakeServer } from '../test-support.ts';
import { agentModelResponder, CLAUDE_CODE_BASH, scriptedBackend, upstreamBackend, type RelayCall } from './backends.ts';
import { jsonlSink } from './records.ts';
import { startRelay, type Relay, type RelayOptions } from './server.ts';
import type { RelayReply } from './wire.ts';

const MODEL = 'test-model';
// The SDK's warnings (an unknown model's output cap) would otherwise be printed by every test.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;
const BASH = { name: 'Bash', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } };
const tools = toSdkTools([BASH]);

const open: { close(): Promise<void> }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function relay(options: Partial<RelayOptions> & Pick<RelayOptions, 'backend'>): Promise<Relay> {
  const r = await startRelay({ models: [MODEL], ...options });
  open.push(r);
  return r;
}

/** Answers every call with a Bash call whose command names the API it came through. */
function bashScript(calls: RelayCall[] = []): (call: RelayCall) => RelayReply {
  return (call) => {
    calls.push(call);
    return {
      text: 'running it',
      toolCalls: [{ id: `toolu_${calls.length}`, name: 'Bash', args: { command: `echo ${call.api}` } }],
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5 },
    };
  };
}

const openai = (r: Relay, model = MODEL) => createOpenAI({ baseURL: `${r.url}/v1`, apiKey: 'client-key' }).chat(model);
const responses = (r: Relay, model = MODEL) => createOpenAI({ baseURL: `${r.url}/v1`, apiKey: 'client-key' }).responses(model);
const anthropic = (r: Relay, model = MODEL) => createAnthropic({ baseURL: `${r.url}/v1`, apiKey: 'client-key' }).messages(model);

async function post(r: Relay, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; json: unknown }> {
  const res = await fetch(`${r.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

const chatBody = (model = MODEL) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const messagesBody = (model = MODEL) => ({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });

describe('relay with a scripted backend, through the official clients', () => {
  it.each([
    ['OpenAI chat', openai, 'openai-chat'],
    ['Anthropic messages', anthropic, 'anthropic-messages'],
    ['OpenAI responses', responses, 'openai-responses'],
  ] as const)('%s: the client sees the tool call, non-streaming and streaming', async (_name, client, api) => {
    const calls: RelayCall[] = [];
    const r = await relay({ backend: scriptedBackend(bashScript(calls)) });
    const plain = await generateText({ model: client(r), prompt: 'list files', tools, maxRetries: 0 });
    expect(plain.toolCalls.map((c) => [c.toolName, c.input as unknown])).toEqual([['Bash', { command: `echo ${api}` }]]);
    expect(plain.text).toBe('running it');
    expect(plain.usage.inputTokens).toBe(10);

    const streamed = streamText({ model: client(r), prompt: 'list files', tools, maxRetries: 0 });
    expect((await streamed.toolCalls).map((c) => [c.toolName, c.input as unknown])).toEqual([['Bash', { command: `echo ${api}` }]]);
    expect(await streamed.text).toBe('running it');
    expect((await streamed.usage).outputTokens).toBe(5);

    expect(calls.map((c) => [c.api, c.decoded.stream, c.decoded.request.tools.map((t) => t.name)])).toEqual([
      [api, false, ['Bash']],
      [api, true, ['Bash']],
    ]);
    expect(r.events().map((e) => [e.api, e.stream, e.outcome, e.status, e.source, e.tool_calls[0]?.name])).toEqual([
      [api, false, 'ok', 200, 'scripted', 'Bash'],
      [api, true, 'ok', 200, 'scripted', 'Bash'],
    ]);
    expect(r.totals()).toEqual({ requests: 2, tokens: 30, costUsd: 0 });
  });

  it('drives an agent with an authbench scripted model: shell → the agent\'s Bash, results back as shell', async () => {
    const r = await relay({ backend: scriptedBackend(agentModelResponder(replayModel([{ command: 'ls -la', timeout_sec: 5 }]), [CLAUDE_CODE_BASH])) });
    const first = streamText({ model: anthropic(r), prompt: 'do the task', tools, maxRetries: 0 });
    const [call] = await first.toolCalls;
    expect(call?.toolName).toBe('Bash');
    expect(call?.input).toEqual({ command: 'ls -la', timeout: 5000 });
    // The agent ran it and sends the result back: the replay model sees its own shell call answered and finishes.
    const messages: ModelMessage[] = [
      { role: 'user', content: 'do the task' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: call?.toolCallId ?? '', toolName: 'Bash', input: call?.input }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: call?.toolCallId ?? '', toolName: 'Bash', output: { type: 'text', value: 'total 0' } }] },
    ];
    const second = await generateText({ model: anthropic(r), messages, tools, maxRetries: 0 });
    expect(second.toolCalls).toEqual([]);
    expect(second.text).toBe('Done: replayed 1 command(s).');
  });

  it('fails the exchange when the model calls a tool the agent did not declare', async () => {
    const r = await relay({ backend: scriptedBackend(agentModelResponder(replayModel(['ls']), [CLAUDE_CODE_BASH])) });
    const res = await post(r, '/v1/messages', { ...messagesBody(), tools: [{ name: 'Read', input_schema: { type: 'object' } }] });
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('"Bash", which the agent did not declare') } });
    expect(r.events()[0]?.outcome).toBe('backend_error');
  });
});

describe('relay policy', () => {
  it('refuses another model with a 404 in each API\'s own format, and records it', async () => {
    const r = await relay({ backend: scriptedBackend(bashScript()) });
    await expect(generateText({ model: openai(r, 'gpt-5'), prompt: 'x', maxRetries: 0 })).rejects.toMatchObject({ statusCode: 404 });
    const o = await post(r, '/v1/chat/completions', chatBody('gpt-5'));
    expect(o.status).toBe(404);
    expect(o.json).toMatchObject({ error: { type: 'invalid_request_error', code: 'model_not_found', message: expect.stringContaining('gpt-5') } });
    const a = await post(r, '/v1/messages', messagesBody('claude-opus'));
    expect(a.status).toBe(404);
    expect(a.json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(r.events().map((e) => [e.outcome, e.model])).toEqual([
      ['unknown_model', 'gpt-5'],
      ['unknown_model', 'gpt-5'],
      ['unknown_model', 'claude-opus'],
    ]);
    expect(r.totals().requests).toBe(0);
  });

  it('refuses malformed JSON with a 400 in the API\'s format', async () => {
    const r = await relay({ backend: scriptedBackend(bashScript()) });
    const o = await post(r, '/v1/chat/completions', '{"model": ');
    expect(o.status).toBe(400);
    expect(o.json).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('not JSON') } });
    const a = await post(r, '/v1/messages', '{not json');
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const missing = await post(r, '/v1/messages', { model: MODEL, messages: [] });
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: { message: expect.stringContaining('max_tokens') } });
    expect(r.events().map((e) => e.outcome)).toEqual(['invalid_request', 'invalid_request', 'invalid_request']);
  });

  it('refuses a body over the size limit with a 413', async () => {
    const r = await relay({ backend: scriptedBackend(bashScript()), maxRequestBytes: 1000 });
    const big = await post(r, '/v1/messages', { ...messagesBody(), messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect((await post(r, '/v1/messages', messagesBody())).status).toBe(200);
  });

  it('stops at the request budget with an error the agent sees, also under concurrency', async () => {
    const calls: RelayCall[] = [];
    const r = await relay({ backend: scriptedBackend(bashScript(calls)), budget: { maxRequests: 3 } });
    const results = await Promise.all(Array.from({ length: 6 }, () => post(r, '/v1/chat/completions', chatBody())));
    expect(results.map((x) => x.status).sort()).toEqual([200, 200, 200, 403, 403, 403]);
    expect(calls).toHaveLength(3);
    const refused = results.find((x) => x.status === 403);
    expect(refused?.json).toMatchObject({ error: { type: 'insufficient_quota', code: 'budget_exhausted', message: expect.stringContaining('request budget exhausted: 3 of 3') } });
    await expect(generateText({ model: anthropic(r), prompt: 'x', maxRetries: 0 })).rejects.toMatchObject({ statusCode: 403 });
    expect(r.events().filter((e) => e.outcome === 'over_budget')).toHaveLength(4);
  });

  it('stops at the token and the cost budgets (cost from the pricing table)', async () => {
    const tokens = await relay({ backend: scriptedBackend(bashScript()), budget: { maxTotalTokens: 20 } });
    expect((await post(tokens, '/v1/messages', messagesBody())).status).toBe(200);
    expect((await post(tokens, '/v1/messages', messagesBody())).status).toBe(200);
    const third = await post(tokens, '/v1/messages', messagesBody());
    expect(third.status).toBe(403);
    expect(third.json).toMatchObject({ error: { type: 'permission_error', message: expect.stringContaining('token budget exhausted: 30 of 20') } });

    // 10 input + 5 output tokens at $1M/Mtok each: $15 a call.
    const pricing = { [`scripted/${MODEL}`]: { input_usd_per_mtok: 1_000_000, output_usd_per_mtok: 1_000_000 } };
    const cost = await relay({ backend: scriptedBackend(bashScript()), budget: { maxCostUsd: 20 }, pricing });
    expect((await post(cost, '/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await post(cost, '/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await post(cost, '/v1/chat/completions', chatBody())).status).toBe(403);
    expect(cost.events().map((e) => e.cost_usd)).toEqual([15, 15, null]);
    expect(cost.totals().costUsd).toBe(30);
  });
});

describe('relay with the upstream backend', () => {
  const MARKER = 'sk-MARKER-relay-test-0123456789';
  let fake: FakeServer;
  afterEach(async () => fake.close());

  it('injects the host key upstream, drops the client\'s, and re-streams the reply', async () => {
    fake = await startFakeOpenAiServer(() => ({
      body: chatCompletion({ content: 'ok', toolCalls: [{ id: 'call_1', name: 'Bash', arguments: '{"command":"pwd"}' }], usage: { prompt_tokens: 7, completion_tokens: 3 } }),
    }));
    const r = await relay({ backend: upstreamBackend({ provider: 'openai', env: { OPENAI_API_KEY: MARKER, OPENAI_BASE_URL: fake.baseUrl } }) });
    const streamed = streamText({ model: openai(r), prompt: 'where am I', tools, maxRetries: 0 });
    expect((await streamed.toolCalls).map((c) => [c.toolName, c.input as unknown])).toEqual([['Bash', { command: 'pwd' }]]);
    const [upstream] = fake.requests;
    expect(upstream?.path).toBe('/v1/chat/completions');
    expect(upstream?.headers.authorization).toBe(`Bearer ${MARKER}`);
    expect(JSON.stringify(upstream?.headers)).not.toContain('client-key');
    expect(upstream?.body).toMatchObject({ model: MODEL, tools: [{ function: { name: 'Bash' } }] });
    expect((upstream?.body as Record<string, unknown>)['stream']).toBeUndefined();
    expect(r.events()[0]).toMatchObject({ source: 'upstream', outcome: 'ok', input_tokens: 7, output_tokens: 3, stream: true });
  });

  it('sends the Anthropic key as x-api-key with the client\'s API version, never its own key', async () => {
    fake = await startFakeOpenAiServer(() => ({
      body: { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'id' } }], stop_reason: 'tool_use', usage: { input_tokens: 4, output_tokens: 2 } },
    }));
    const r = await relay({ backend: upstreamBackend({ provider: 'anthropic', env: { ANTHROPIC_API_KEY: MARKER, ANTHROPIC_BASE_URL: fake.baseUrl } }) });
    const res = await generateText({ model: anthropic(r), prompt: 'who am I', tools, maxRetries: 0 });
    expect(res.toolCalls.map((c) => c.input as unknown)).toEqual([{ command: 'id' }]);
    const headers = fake.requests[0]?.headers;
    expect(headers?.['x-api-key']).toBe(MARKER);
    expect(headers?.['anthropic-version']).toBeDefined();
    expect(headers?.authorization).toBeUndefined();
    // An API the upstream does not speak is not found, in the client's format.
    expect((await post(r, '/v1/chat/completions', chatBody())).status).toBe(404);
  });

  it('never lets the key out: not in responses, records, the JSONL file or errors, even when the provider echoes it', async () => {
    fake = await startFakeOpenAiServer((_req, i) =>
      i === 0 ? { status: 401, body: errorBody(`Incorrect API key provided: ${MARKER}`, 'invalid_request_error') } : { body: chatCompletion({ content: `your key is ${MARKER}` }) },
    );
    const dir = await mkdtemp(join(tmpdir(), 'relay-'));
    dirs.push(dir);
    const file = join(dir, 'relay.jsonl');
    const r = await relay({
      backend: upstreamBackend({ provider: 'openai', env: { OPENAI_API_KEY: MARKER, OPENAI_BASE_URL: fake.baseUrl } }),
      sink: jsonlSink(file),
      recordBodies: true,
    });
    const outputs: string[] = [];
    const denied = await post(r, '/v1/chat/completions', chatBody(), { authorization: 'Bearer client-key' });
    expect(denied.status).toBe(401);
    expect(denied.text).toContain('[redacted]');
    outputs.push(denied.text);
    const ok = await post(r, '/v1/chat/completions', { ...chatBody(), stream: true });
    expect(ok.text).toContain('your key is [redacted]');
    outputs.push(ok.text);
    outputs.push((await fetch(`${r.url}/v1/models`)).statusText, await (await fetch(`${r.url}/v1/models`)).text());
    await r.close();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    outputs.push(...lines, JSON.stringify(r.events()));
    expect(fake.requests.every((q) => q.headers.authorization === `Bearer ${MARKER}`)).toBe(true);
    for (const out of outputs) expect(out).not.toContain(MARKER);
    expect(r.events()[0]).toMatchObject({ outcome: 'upstream_error', status: 401 });
  });
});

describe('relay cache and lifecycle', () => {
  it('serves a repeated call from the response cache, streaming or not, and replay-only refuses a miss', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-cache-'));
    dirs.push(dir);
    const calls: RelayCall[] = [];
    const cache = new ResponseCache(dir);
    const r = await relay({ backend: scriptedBackend(bashScript(calls)), cache: { cache, mode: 'read-write' } });
    const first = await generateText({ model: anthropic(r), prompt: 'same', tools, maxRetries: 0 });
    const again = streamText({ model: anthropic(r), prompt: 'same', tools, maxRetries: 0 });
    expect((await again.toolCalls).map((c) => c.input as unknown)).toEqual(first.toolCalls.map((c) => c.input as unknown));
    expect(calls).toHaveLength(1);
    expect(r.events().map((e) => [e.outcome, e.source, e.cost_usd])).toEqual([
      ['ok', 'scripted', 0],
      ['cached', 'cache', 0],
    ]);
    const replay = await relay({ backend: scriptedBackend(bashScript(calls)), cache: { cache, mode: 'replay-only' } });
    expect((await post(replay, '/v1/messages', messagesBody())).status).toBe(500);
    expect(replay.events()[0]?.outcome).toBe('cache_miss');
    expect(calls).toHaveLength(1);
  });

  it('lists its models in the client\'s format', async () => {
    const r = await startRelay({ models: [MODEL, 'small-model'], backend: scriptedBackend(bashScript()) });
    open.push(r);
    const o = (await (await fetch(`${r.url}/v1/models`)).json()) as { data: { id: string }[]; object?: string };
    expect(o.object).toBe('list');
    expect(o.data.map((m) => m.id)).toEqual([MODEL, 'small-model']);
    const a = (await (await fetch(`${r.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } })).json()) as Record<string, unknown>;
    expect(a).toMatchObject({ has_more: false, first_id: MODEL, data: [{ type: 'model', id: MODEL }, { type: 'model', id: 'small-model' }] });
  });

  it('listens on a unix socket path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-sock-'));
    dirs.push(dir);
    const socketPath = join(dir, 'relay.sock');
    const r = await relay({ backend: scriptedBackend(bashScript()), listen: { socketPath } });
    expect(r.port).toBeNull();
    expect(r.socketPath).toBe(socketPath);
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ socketPath, path: '/v1/messages', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      req.on('error', reject);
      req.end(JSON.stringify(messagesBody()));
    });
    expect(JSON.parse(body)).toMatchObject({ type: 'message', stop_reason: 'tool_use', content: [{ type: 'text' }, { type: 'tool_use', name: 'Bash' }] });
  });

  it('names the address when it cannot listen, and close waits for an exchange in flight', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const r = await relay({
      backend: scriptedBackend(async (call) => {
        await gate;
        return bashScript()(call);
      }),
    });
    await expect(startRelay({ models: [MODEL], backend: scriptedBackend(bashScript()), listen: { port: r.port ?? 0 } })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringContaining(`127.0.0.1:${r.port}: EADDRINUSE`),
    });
    const pending = post(r, '/v1/messages', messagesBody());
    while (r.totals().requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = r.close();
    release();
    await closed;
    expect((await pending).status).toBe(200);
    expect(r.events()).toHaveLength(1);
  });
});
