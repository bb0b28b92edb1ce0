import { describe, expect, it } from 'vitest';
import { anthropicMessages, decodeMessagesRequest } from './anthropic.ts';
import { agentModelResponder, CLAUDE_CODE_BASH, requestForModel } from './backends.ts';
import { admit, budgetRefusal, charge, EMPTY_TOTALS } from './budget.ts';
import { decodeChatRequest, openAiChat } from './openai.ts';
import { decodeResponsesRequest, openAiResponses } from './responses.ts';
import { redact } from './server.ts';
import type { ApiCodec, DecodedRequest, RelayReply } from './wire.ts';
import { isRefusal } from './wire.ts';

function decoded(value: DecodedRequest | ReturnType<typeof decodeChatRequest>): DecodedRequest {
  if (isRefusal(value)) throw new Error(`refused: ${value.message}`);
  return value;
}

const REPLY: RelayReply = {
  text: 'checking',
  toolCalls: [
    { id: 'call_a', name: 'Bash', args: { command: 'ls -la', timeout: 5000 } },
    { id: 'call_b', name: 'Read', args: { file_path: '/etc/hosts' } },
  ],
  finishReason: 'tool-calls',
  usage: { inputTokens: 12, outputTokens: 7 },
};
const META = { id: 'x_1', model: 'm', created: 1_700_000_000 };

/** Data lines of SSE frames, parsed (the `[DONE]` sentinel kept as a string). */
function events(frames: readonly string[]): unknown[] {
  return frames.map((f) => {
    const data = /^data: (.*)$/m.exec(f)?.[1] ?? '';
    return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
  });
}

describe('decoding client requests', () => {
  it('Chat Completions: system and developer prompts, tool calls (bad JSON kept raw), results named by their call', () => {
    const d = decoded(
      decodeChatRequest({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 50,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'use tools' }] },
          { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: {} }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'out' },
        ],
        tools: [{ type: 'function', function: { name: 'shell', parameters: { type: 'object' } } }],
      }),
    );
    expect(d).toMatchObject({ model: 'm', stream: true, streamUsage: true });
    expect(d.request.system).toBe('be brief\n\nuse tools');
    expect(d.request.maxOutputTokens).toBe(50);
    expect(d.request.messages).toEqual([
      { role: 'user', content: 'hi\n[image_url]' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'shell', args: '{"command":', parseError: expect.stringContaining('not valid JSON') }] },
      { role: 'tool', toolCallId: 'c1', toolName: 'shell', content: 'out' },
    ]);
    expect(d.request.tools).toEqual([{ name: 'shell', description: '', parameters: { type: 'object' } }]);
  });

  it('Chat Completions: refuses what is not a chat request', () => {
    expect(decodeChatRequest({ model: 'm', messages: [{ role: 'system', content: 'x' }] })).toMatchObject({ kind: 'invalid_request', message: expect.stringContaining('no user') });
    expect(decodeChatRequest({ model: 'm', messages: [{ role: 'robot', content: 'x' }] })).toMatchObject({ kind: 'invalid_request', message: expect.stringContaining('"robot"') });
    expect(decodeChatRequest({ messages: [] })).toMatchObject({ kind: 'invalid_request', message: expect.stringContaining('model') });
  });

  it('Messages: system blocks, tool_use and tool_result blocks (errors kept), other blocks as placeholders', () => {
    const d = decoded(
      decodeMessagesRequest({
        model: 'claude',
        max_tokens: 1000,
        system: [{ type: 'text', text: 'You are Claude Code' }, { type: 'text', text: 'more' }],
        metadata: { user_id: 'session-1' },
        messages: [
          { role: 'user', content: 'fix it' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: '…' }, { type: 'text', text: 'looking' }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'denied' }], is_error: true }, { type: 'image', source: {} }] },
        ],
        tools: [{ name: 'Bash', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }],
      }),
    );
    expect(d.request.system).toBe('You are Claude Code\nmore');
    expect(d.request.messages).toEqual([
      { role: 'user', content: 'fix it' },
      { role: 'assistant', content: 'looking', toolCalls: [{ id: 't1', name: 'Bash', args: { command: 'ls' } }] },
      { role: 'tool', toolCallId: 't1', toolName: 'Bash', content: 'denied', isError: true },
      { role: 'user', content: '[image]' },
    ]);
    expect(d.request.tools.map((t) => [t.name, t.parameters])).toEqual([
      ['Bash', { type: 'object' }],
      ['web_search', {}],
    ]);
  });

  it('Responses: Codex-style input (instructions, developer message, calls and outputs, reasoning skipped); no previous_response_id', () => {
    const d = decoded(
      decodeResponsesRequest({
        model: 'gpt-5-codex',
        instructions: 'You are Codex',
        store: false,
        stream: true,
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'sandbox: none' }] },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run tests' }] },
          { type: 'reasoning', summary: [], encrypted_content: 'zzz' },
          { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command":["bash","-lc","pytest"]}' },
          { type: 'function_call', call_id: 'c2', name: 'shell', arguments: '{"command":["ls"]}' },
          { type: 'function_call_output', call_id: 'c1', output: '1 passed' },
        ],
        tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' } }, { type: 'local_shell' }],
      }),
    );
    expect(d.stream).toBe(true);
    expect(d.request.system).toBe('You are Codex\n\nsandbox: none');
    expect(d.request.messages).toEqual([
      { role: 'user', content: 'run tests' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'shell', args: { command: ['bash', '-lc', 'pytest'] } },
          { id: 'c2', name: 'shell', args: { command: ['ls'] } },
        ],
      },
      { role: 'tool', toolCallId: 'c1', toolName: 'shell', content: '1 passed' },
    ]);
    expect(d.request.tools.map((t) => t.name)).toEqual(['shell']);
    expect(decodeResponsesRequest({ model: 'm', input: 'hi', previous_response_id: 'resp_1' })).toMatchObject({ kind: 'invalid_request', message: expect.stringContaining('previous_response_id') });
  });
});

describe('encoding replies', () => {
  it.each([openAiChat, openAiResponses, anthropicMessages] as ApiCodec[])('%s: a reply read back by the same API is the same reply', (codec) => {
    expect(codec.decodeUpstream(JSON.parse(JSON.stringify(codec.encodeReply(REPLY, META))))).toEqual(REPLY);
    expect(codec.decodeUpstream({ nonsense: true })).toMatchObject({ kind: 'upstream_unreachable' });
  });

  it('a truncated reply stays truncated through each API', () => {
    const cut: RelayReply = { text: 'partial', toolCalls: [], finishReason: 'length', usage: { inputTokens: 1, outputTokens: 9 } };
    for (const codec of [openAiChat, openAiResponses, anthropicMessages]) {
      expect(codec.decodeUpstream(codec.encodeReply(cut, META)), codec.api).toEqual(cut);
    }
  });

  it('Chat Completions stream: argument deltas add up to the call, usage only when asked, then [DONE]', () => {
    const frames = openAiChat.encodeStream(REPLY, { ...META, streamUsage: true });
    const chunks = events(frames);
    expect(chunks.at(-1)).toBe('[DONE]');
    const deltas = chunks.flatMap((c) => (typeof c === 'string' ? [] : (c as { choices: { delta: { tool_calls?: { index: number; function: { arguments: string } }[] } }[] }).choices));
    const args = [0, 1].map((i) =>
      deltas.flatMap((d) => d.delta.tool_calls ?? []).filter((t) => t.index === i).map((t) => t.function.arguments).join(''),
    );
    expect(args.map((a) => JSON.parse(a) as unknown)).toEqual(REPLY.toolCalls.map((c) => c.args));
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 7 } });
    expect(events(openAiChat.encodeStream(REPLY, { ...META, streamUsage: false })).some((c) => typeof c !== 'string' && 'usage' in (c as object))).toBe(false);
  });

  it('Messages stream: events in the order the API sends them, each frame named', () => {
    const frames = anthropicMessages.encodeStream(REPLY, { ...META, streamUsage: true });
    expect(frames.map((f) => /^event: (\S+)/.exec(f)?.[1])).toEqual([
      'message_start',
      ...Array<string[]>(3).fill(['content_block_start', 'content_block_delta', 'content_block_stop']).flat(),
      'message_delta',
      'message_stop',
    ]);
    const delta = events(frames).find((e) => (e as { delta?: { type?: string } }).delta?.type === 'input_json_delta') as { delta: { partial_json: string } };
    expect(JSON.parse(delta.delta.partial_json)).toEqual({ command: 'ls -la', timeout: 5000 });
  });

  it('Responses stream: numbered events ending in response.completed with the whole output', () => {
    const all = events(openAiResponses.encodeStream(REPLY, { ...META, streamUsage: true })) as { type: string; sequence_number: number; response?: { output: unknown[] } }[];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_e, i) => i));
    expect(all[0]?.type).toBe('response.created');
    expect(all.at(-1)?.type).toBe('response.completed');
    expect(all.at(-1)?.response?.output).toHaveLength(3);
    expect(all.filter((e) => e.type === 'response.function_call_arguments.done')).toHaveLength(2);
  });

  it('error bodies are each API\'s own', () => {
    const refusal = { kind: 'unknown_model', message: 'no' } as const;
    expect(openAiChat.errorBody(refusal)).toEqual({ error: { message: 'no', type: 'invalid_request_error', code: 'model_not_found', param: null } });
    expect(anthropicMessages.errorBody(refusal)).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'no' } });
  });
});

describe('scripted models behind an agent\'s tools', () => {
  it('maps Claude Code\'s Bash to authbench\'s shell and back', () => {
    expect(CLAUDE_CODE_BASH.toAgent({ command: 'ls', timeout_sec: 2.5 })).toEqual({ command: 'ls', timeout: 2500 });
    expect(CLAUDE_CODE_BASH.toModel({ command: 'ls', timeout: 2500, description: 'list' })).toEqual({ command: 'ls', timeout_sec: 2.5 });
    const request = requestForModel(
      {
        system: '',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'Bash', args: { command: 'id' } }, { id: 'b', name: 'Read', args: {} }] },
          { role: 'tool', toolCallId: 'a', toolName: 'Bash', content: 'uid=0' },
        ],
        tools: [{ name: 'Bash', description: '', parameters: {} }, { name: 'Read', description: '', parameters: {} }],
      },
      [CLAUDE_CODE_BASH],
    );
    expect(request.tools.map((t) => t.name)).toEqual(['shell', 'Read']);
    expect(request.messages[1]).toMatchObject({ toolCalls: [{ name: 'shell', args: { command: 'id' } }, { name: 'Read' }] });
    expect(request.messages[2]).toMatchObject({ toolName: 'shell' });
  });

  it('passes the model\'s usage and finish reason through', async () => {
    const respond = agentModelResponder(
      {
        complete: () =>
          Promise.resolve({ text: '', toolCalls: [{ id: 'c', name: 'shell', args: { command: 'pwd' } }], finishReason: 'tool-calls', usage: { inputTokens: 3, outputTokens: 4 }, costUsd: 0, latencyMs: 0, cached: false, warnings: [] }),
      },
      [CLAUDE_CODE_BASH],
    );
    const d = decoded(decodeMessagesRequest({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'Bash', input_schema: {} }] }));
    const reply = await respond({ api: 'anthropic-messages', codec: anthropicMessages, decoded: d, body: {}, headers: {} });
    expect(reply).toEqual({ text: '', toolCalls: [{ id: 'c', name: 'Bash', args: { command: 'pwd' } }], finishReason: 'tool-calls', usage: { inputTokens: 3, outputTokens: 4 } });
  });
});

describe('budget and redaction', () => {
  it('refuses at each limit, counting requests at admission', () => {
    expect(budgetRefusal({}, { requests: 1e9, tokens: 1e9, costUsd: 1e9 })).toBeUndefined();
    const one = admit(EMPTY_TOTALS);
    expect(budgetRefusal({ maxRequests: 2 }, one)).toBeUndefined();
    expect(budgetRefusal({ maxRequests: 1 }, one)).toMatch(/request budget exhausted: 1 of 1/);
    const spent = charge(one, 100, null);
    expect(spent).toEqual({ requests: 1, tokens: 100, costUsd: 0 });
    expect(budgetRefusal({ maxTotalTokens: 100 }, spent)).toMatch(/token budget/);
    expect(budgetRefusal({ maxTotalTokens: 101 }, spent)).toBeUndefined();
    expect(budgetRefusal({ maxCostUsd: 0.5 }, charge(spent, 0, 0.5))).toMatch(/cost budget exhausted: \$0\.5000 of \$0\.5/);
  });

  it('redacts every occurrence of a key, and leaves short strings alone', () => {
    expect(redact('a sk-12345678 b sk-12345678', ['sk-12345678'])).toBe('a [redacted] b [redacted]');
    expect(redact('abc', ['a'])).toBe('abc');
  });
});
