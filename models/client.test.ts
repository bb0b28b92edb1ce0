import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAuthbenchError } from '../core/index.ts';
import {
  ModelInfraError,
  ModelRequestError,
  backoffDelayMs,
  createModelClient,
  parseModelRef,
  seededRandom,
  DEFAULT_RETRY_POLICY,
} from './index.ts';
import type { ModelClientOptions, ModelRequest, PricingTable } from './index.ts';
import { chatCompletion, errorBody, startFakeOpenAiServer, type FakeScript, type FakeServer } from './test-support.ts';

const PRICING: PricingTable = {
  'openai-compatible/priced': { input_usd_per_mtok: 2, output_usd_per_mtok: 10 },
  'openai/gpt-test': { input_usd_per_mtok: 1, output_usd_per_mtok: 1 },
};

const BASH_TOOL = {
  name: 'bash',
  description: 'Run a shell command',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};

const REQUEST: ModelRequest = {
  system: 'You are a test agent.',
  messages: [{ role: 'user', content: 'list the files' }],
  tools: [BASH_TOOL],
};

let server: FakeServer | undefined;
let cacheDir: string;
let sleeps: number[];

beforeEach(async () => {
  sleeps = [];
  cacheDir = await mkdtemp(join(tmpdir(), 'authbench-models-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(cacheDir, { recursive: true, force: true });
});

async function serve(script: FakeScript): Promise<FakeServer> {
  server = await startFakeOpenAiServer(script);
  return server;
}

const always = (body: unknown): FakeScript => () => ({ body });

function options(s: FakeServer, extra: ModelClientOptions = {}): ModelClientOptions {
  return {
    baseUrl: s.baseUrl,
    env: {},
    pricing: PRICING,
    timeoutMs: 10_000,
    retry: { maxRetries: 3 },
    deps: {
      sleep: (ms: number) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      random: seededRandom(7),
      now: () => 1_700_000_000_000,
    },
    ...extra,
  };
}

const compat = (name = 'priced') => parseModelRef(`openai-compatible/${name}`);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

describe('createModelClient against a local OpenAI-compatible server', () => {
  it('returns a plain text reply with usage and cost', async () => {
    const s = await serve(always(chatCompletion({ content: 'hello', usage: { prompt_tokens: 1000, completion_tokens: 500 } })));
    const client = await createModelClient(compat(), options(s));
    const r = await client.complete({ ...REQUEST, tools: [], temperature: 0, seed: 3, maxOutputTokens: 64 });
    expect(r.text).toBe('hello');
    expect(r.toolCalls).toEqual([]);
    expect(r.finishReason).toBe('stop');
    expect(r.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
    expect(r.costUsd).toBeCloseTo((1000 * 2 + 500 * 10) / 1e6, 12);
    expect(r.cached).toBe(false);
    expect(s.requests).toHaveLength(1);
    const sent = s.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toMatchObject({
      model: 'priced',
      temperature: 0,
      seed: 3,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'You are a test agent.' },
        { role: 'user', content: 'list the files' },
      ],
    });
  });

  it('returns tool calls with parsed arguments and offers the tools as functions', async () => {
    const s = await serve(
      always(chatCompletion({ toolCalls: [{ id: 'call_1', name: 'bash', arguments: '{"command":"ls -la"}' }] })),
    );
    const client = await createModelClient(compat(), options(s));
    const r = await client.complete(REQUEST);
    expect(r.finishReason).toBe('tool-calls');
    expect(r.toolCalls).toEqual([{ id: 'call_1', name: 'bash', args: { command: 'ls -la' } }]);
    expect(s.requests[0]!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'bash', description: 'Run a shell command', parameters: BASH_TOOL.parameters } }],
    });
  });

  it('keeps arguments the schema does not allow: validation is the caller\'s job', async () => {
    const s = await serve(always(chatCompletion({ toolCalls: [{ id: 'c', name: 'bash', arguments: '{"cmd":42}' }] })));
    const r = await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(r.toolCalls).toEqual([{ id: 'c', name: 'bash', args: { cmd: 42 } }]);
  });

  it('returns a tool call with malformed JSON arguments as a value with parseError', async () => {
    const s = await serve(always(chatCompletion({ toolCalls: [{ id: 'bad', name: 'bash', arguments: '{"command": "ls' }] })));
    const r = await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ id: 'bad', name: 'bash', args: '{"command": "ls' });
    expect(r.toolCalls[0]!.parseError).toMatch(/not valid JSON/);
  });

  it('flags a call to a tool that was not offered', async () => {
    const s = await serve(always(chatCompletion({ toolCalls: [{ id: 'x', name: 'rm_rf', arguments: '{}' }] })));
    const r = await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(r.toolCalls[0]!.parseError).toBe('unknown tool "rm_rf"');
  });

  it('sends an earlier tool call and its result back in provider format', async () => {
    const s = await serve(always(chatCompletion({ content: 'done' })));
    const client = await createModelClient(compat(), options(s));
    await client.complete({
      ...REQUEST,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'ls' } }] },
        { role: 'tool', toolCallId: 'c1', toolName: 'bash', content: 'a\nb' },
        { role: 'assistant', content: 'x', toolCalls: [{ id: 'c2', name: 'bash', args: '{oops', parseError: 'bad' }] },
        { role: 'tool', toolCallId: 'c2', toolName: 'bash', content: 'invalid arguments', isError: true },
      ],
    });
    const body = s.requests[0]!.body as { messages: Array<Record<string, unknown>> };
    expect(body.messages.slice(1)).toMatchObject([
      { role: 'user', content: 'go' },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'a\nb' },
      {
        role: 'assistant',
        content: 'x',
        tool_calls: [{ id: 'c2', function: { name: 'bash', arguments: JSON.stringify({ invalid_arguments: '{oops' }) } }],
      },
      { role: 'tool', tool_call_id: 'c2', content: 'invalid arguments' },
    ]);
  });

  it('waits as long as Retry-After says on a 429, then retries once', async () => {
    const s = await serve((_req, i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after': '1' }, body: errorBody('slow down', 'rate_limit_error') }
        : { body: chatCompletion({ content: 'ok' }) },
    );
    const r = await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(r.text).toBe('ok');
    expect(s.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('honours an HTTP-date Retry-After on a 503', async () => {
    const now = 1_700_000_000_000;
    const s = await serve((_req, i) =>
      i === 0
        ? { status: 503, headers: { 'retry-after': new Date(now + 5000).toUTCString() }, body: errorBody('busy') }
        : { body: chatCompletion({ content: 'ok' }) },
    );
    await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(sleeps).toEqual([5000]);
  });

  it('gives up on repeated 500s with a ModelInfraError after the retries, backing off with jitter', async () => {
    const s = await serve(() => ({ status: 500, body: errorBody('boom') }));
    const e = await rejection((await createModelClient(compat(), options(s))).complete(REQUEST));
    expect(e).toBeInstanceOf(ModelInfraError);
    const err = e as ModelInfraError;
    expect(err).toMatchObject({ kind: 'infra', reason: 'server', status: 500, attempts: 4, code: 'MODEL_UNAVAILABLE' });
    expect(err.isInfrastructure).toBe(true);
    expect(s.requests).toHaveLength(4);
    const rnd = seededRandom(7);
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetries: 3 };
    expect(sleeps).toEqual([0, 1, 2].map((n) => backoffDelayMs(n, policy, rnd)));
  });

  it('does not retry a 401 and says the key is bad, without echoing it', async () => {
    const key = 'sk-test-0123456789abcdef';
    const s = await serve(() => ({ status: 401, body: errorBody(`Incorrect API key provided: ${key}`, 'invalid_request_error') }));
    const client = await createModelClient(compat(), options(s, { env: { OPENAI_COMPATIBLE_API_KEY: key } }));
    const e = await rejection(client.complete(REQUEST));
    expect(e).toBeInstanceOf(ModelRequestError);
    const err = e as ModelRequestError;
    expect(err).toMatchObject({ kind: 'request', reason: 'auth', status: 401, attempts: 1 });
    expect(err.message).toContain('bad API key for openai-compatible');
    expect(err.message).not.toContain(key);
    expect(String(err.cause)).not.toContain(key);
    expect(err.isInfrastructure).toBe(false);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${key}`);
    expect(sleeps).toEqual([]);
  });

  it('does not retry a 400', async () => {
    const s = await serve(() => ({ status: 400, body: errorBody('context too long', 'invalid_request_error') }));
    const e = await rejection((await createModelClient(compat(), options(s))).complete(REQUEST));
    expect(e).toMatchObject({ kind: 'request', reason: 'bad_request', status: 400 });
    expect(s.requests).toHaveLength(1);
  });

  it('times out a server that never answers and reports it as infrastructure', async () => {
    const s = await serve(() => ({ hang: true }));
    const client = await createModelClient(compat(), options(s, { timeoutMs: 200, retry: { maxRetries: 1 } }));
    const e = await rejection(client.complete(REQUEST));
    expect(e).toBeInstanceOf(ModelInfraError);
    expect(e).toMatchObject({ kind: 'infra', reason: 'timeout', attempts: 2 });
    expect(s.requests).toHaveLength(2);
  });

  it('gives a hung endpoint one retry after a timeout whatever maxRetries allows, so a dead endpoint is bounded', async () => {
    const s = await serve(() => ({ hang: true }));
    const client = await createModelClient(compat(), options(s, { timeoutMs: 150, retry: { maxRetries: 4 } }));
    const e = await rejection(client.complete(REQUEST));
    expect(e).toMatchObject({ kind: 'infra', reason: 'timeout', attempts: 2 });
    expect(s.requests).toHaveLength(2);
  });

  it('stops at once when the caller cancels', async () => {
    const s = await serve(() => ({ hang: true }));
    const client = await createModelClient(compat(), options(s));
    const ac = new AbortController();
    const p = client.complete(REQUEST, { signal: ac.signal });
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    const e = await rejection(p);
    expect(e).toMatchObject({ kind: 'infra', reason: 'cancelled', attempts: 1 });
    expect(s.requests).toHaveLength(1);
  });

  it('reports an unreachable server as a network failure after retrying', async () => {
    const s = await serve(always({}));
    const url = s.baseUrl;
    await s.close();
    server = undefined;
    const client = await createModelClient(compat(), { ...options(s), baseUrl: url, retry: { maxRetries: 2 } });
    const e = await rejection(client.complete(REQUEST));
    expect(e).toMatchObject({ kind: 'infra', reason: 'network', attempts: 3 });
    expect(sleeps).toHaveLength(2);
  });

  it('prices unknown models as null, not 0', async () => {
    const s = await serve(always(chatCompletion({ content: 'hi', usage: { prompt_tokens: 10, completion_tokens: 1 } })));
    const r = await (await createModelClient(compat('unpriced'), options(s))).complete(REQUEST);
    expect(r.usage).toEqual({ inputTokens: 10, outputTokens: 1 });
    expect(r.costUsd).toBeNull();
  });

  it('reports missing usage as null tokens and null cost', async () => {
    const s = await serve(always(chatCompletion({ content: 'hi' })));
    const r = await (await createModelClient(compat(), options(s))).complete(REQUEST);
    expect(r.usage).toEqual({ inputTokens: null, outputTokens: null });
    expect(r.costUsd).toBeNull();
  });
});

describe('anthropic provider against the same local server', () => {
  it('sends the key as x-api-key to /v1/messages and reads text, tool use and usage', async () => {
    const s = await serve(() => ({
      body: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [
          { type: 'text', text: 'let me look' },
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 20 },
      },
    }));
    const pricing = { 'anthropic/claude-sonnet-4-5': { input_usd_per_mtok: 3, output_usd_per_mtok: 15 } };
    const client = await createModelClient(
      parseModelRef('anthropic/claude-sonnet-4-5'),
      options(s, { env: { ANTHROPIC_API_KEY: 'sk-ant-test-123456' }, pricing }),
    );
    const r = await client.complete({ ...REQUEST, seed: 1 });
    expect(s.requests[0]!.path).toBe('/v1/messages');
    expect(s.requests[0]!.headers['x-api-key']).toBe('sk-ant-test-123456');
    expect(s.requests[0]!.body).toMatchObject({ model: 'claude-sonnet-4-5', system: [{ type: 'text', text: 'You are a test agent.' }] });
    expect(r).toMatchObject({
      text: 'let me look',
      toolCalls: [{ id: 'toolu_1', name: 'bash', args: { command: 'ls' } }],
      finishReason: 'tool-calls',
      usage: { inputTokens: 100, outputTokens: 20 },
    });
    expect(r.costUsd).toBeCloseTo((100 * 3 + 20 * 15) / 1e6, 12);
    // The SDK's warning about the ignored seed lands in the response, not on stderr.
    expect(r.warnings.some((w) => w.includes('seed'))).toBe(true);
  });
});

describe('response cache', () => {
  it('serves a repeated call from the cache without a request, at no cost', async () => {
    const s = await serve(always(chatCompletion({ content: 'cached?', usage: { prompt_tokens: 1000, completion_tokens: 1000 } })));
    const key = 'sk-never-in-cache-0123456789';
    const client = await createModelClient(
      compat(),
      options(s, { cache: { mode: 'read-write', dir: cacheDir }, env: { OPENAI_COMPATIBLE_API_KEY: key } }),
    );
    const first = await client.complete(REQUEST);
    const second = await client.complete(REQUEST);
    expect(s.requests).toHaveLength(1);
    expect(first.cached).toBe(false);
    expect(first.costUsd).toBeCloseTo(0.012, 12);
    expect(second).toMatchObject({ text: 'cached?', cached: true, costUsd: 0, usage: first.usage });
    expect(second.original?.costUsd).toBeCloseTo(0.012, 12);

    await client.complete({ ...REQUEST, temperature: 0.5 });
    expect(s.requests).toHaveLength(2);

    const shards = await readdir(join(cacheDir, 'responses'));
    const files = (await Promise.all(shards.map(async (d) => (await readdir(join(cacheDir, 'responses', d))).map((f) => join(cacheDir, 'responses', d, f))))).flat();
    expect(files).toHaveLength(2);
    for (const f of files) expect(await readFile(f, 'utf8')).not.toContain(key);
  });

  it('replays a recorded run without a key; a replay-only miss is an error and makes no request', async () => {
    const s = await serve(always(chatCompletion({ content: 'recorded' })));
    const ref = parseModelRef('openai/gpt-test');
    const recorder = await createModelClient(ref, options(s, { apiKey: 'sk-recording-key-123', cache: { mode: 'read-write', dir: cacheDir } }));
    await recorder.complete(REQUEST);
    expect(s.requests[0]!.headers.authorization).toBe('Bearer sk-recording-key-123');

    const replay = await createModelClient(ref, options(s, { cache: { mode: 'replay-only', dir: cacheDir } }));
    expect(await replay.complete(REQUEST)).toMatchObject({ text: 'recorded', cached: true });
    const e = await rejection(replay.complete({ ...REQUEST, system: 'something else' }));
    expect(e).toBeInstanceOf(ModelRequestError);
    expect(e).toMatchObject({ reason: 'cache_miss', attempts: 0 });
    expect(s.requests).toHaveLength(1);
  });

  it('keys the cache on the endpoint too', async () => {
    const s = await serve(always(chatCompletion({ content: 'a' })));
    const a = await createModelClient(compat(), options(s, { cache: { mode: 'read-write', dir: cacheDir } }));
    await a.complete(REQUEST);
    const b = await createModelClient(compat(), options(s, { baseUrl: `${s.baseUrl}/`.replace('127.0.0.1', 'localhost'), cache: { mode: 'replay-only', dir: cacheDir } }));
    expect(await rejection(b.complete(REQUEST))).toMatchObject({ reason: 'cache_miss' });
  });
});

describe('configuration errors', () => {
  it('raises a missing key only when a call needs the provider, naming the variable', async () => {
    const client = await createModelClient(parseModelRef('gpt-5'), { env: {}, pricing: PRICING });
    expect(client.baseUrl).toBe('https://api.openai.com/v1');
    const e = await rejection(client.complete(REQUEST));
    expect(e).toMatchObject({ kind: 'request', reason: 'missing_key', attempts: 0 });
    expect((e as Error).message).toContain('OPENAI_API_KEY is not set');
  });

  it('builds an anthropic client and asks for ANTHROPIC_API_KEY', async () => {
    const client = await createModelClient(parseModelRef('anthropic/claude-sonnet-4-5'), { env: {}, pricing: PRICING });
    expect(client.baseUrl).toBe('https://api.anthropic.com/v1');
    const e = await rejection(client.complete(REQUEST));
    expect((e as Error).message).toContain('ANTHROPIC_API_KEY is not set');
  });

  it('takes the base URL from the environment', async () => {
    const client = await createModelClient(compat(), { env: { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1/' }, pricing: PRICING });
    expect(client.baseUrl).toBe('http://127.0.0.1:9/v1');
  });

  it('requires a base URL for openai-compatible, naming the flag and the variable', async () => {
    const e = await rejection(createModelClient(compat(), { env: {}, pricing: PRICING }));
    expect(isAuthbenchError(e) && e.code).toBe('INVALID_ARGUMENT');
    expect(isAuthbenchError(e) && e.hint).toMatch(/--base-url.*OPENAI_COMPATIBLE_BASE_URL/);
  });

  it('refuses scripted models', async () => {
    const e = await rejection(createModelClient(parseModelRef('scripted/oracle'), { env: {}, pricing: PRICING }));
    expect(isAuthbenchError(e) && e.code).toBe('INVALID_ARGUMENT');
  });

  it('rejects a malformed request before any network use', async () => {
    const client = await createModelClient(compat(), { env: {}, baseUrl: 'http://127.0.0.1:9/v1', pricing: PRICING });
    const bad = { ...REQUEST, tools: [BASH_TOOL, BASH_TOOL] };
    expect(await rejection(client.complete(bad))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const bad2 = { ...REQUEST, messages: [] };
    expect(await rejection(client.complete(bad2))).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
