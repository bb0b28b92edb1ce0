import { z } from 'zod';
import { formatProblem, zodProblems } from '../../core/index.ts';
import type { Message, ModelRequest, ToolCall, ToolSpec } from '../index.ts';
import { contentText, openAiErrorBody } from './openai.ts';
import { parseToolArguments, sseFrame } from './wire.ts';
import type { ApiCodec, DecodedRequest, Refusal, RelayReply, ReplyMeta } from './wire.ts';

/**
 * OpenAI Responses (`POST /v1/responses`), streaming and not, with function
 * tools: what Codex CLI speaks. Only stateless use is served (the whole
 * conversation in `input`, as Codex sends it with `store: false`): the relay
 * keeps no responses for `previous_response_id` to point at. Tools other than
 * functions (Codex's `local_shell`, custom and hosted tools) are offered to
 * the model by name only; replies are text and function calls.
 */

const InputItemSchema = z.looseObject({
  type: z.string().optional().describe('message (also when absent), function_call, function_call_output, reasoning, …'),
  role: z.string().optional(),
  content: z.unknown().optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: z.unknown().optional(),
});

export const ResponsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).describe('Model name.'),
    instructions: z.string().nullish().describe('System prompt.'),
    input: z.union([z.string(), z.array(InputItemSchema)]).describe('The conversation.'),
    tools: z
      .array(
        z.looseObject({
          type: z.string(),
          name: z.string().optional(),
          description: z.string().nullish(),
          parameters: z.record(z.string(), z.unknown()).nullish(),
        }),
      )
      .nullish()
      .describe('Tools offered.'),
    stream: z.boolean().nullish().describe('Server-sent events wanted.'),
    previous_response_id: z.string().nullish().describe('Stateful continuation; not served by the relay.'),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().nullish(),
  })
  .describe('The part of a Responses request the relay reads.');

export function decodeResponsesRequest(body: unknown): DecodedRequest | Refusal {
  const parsed = ResponsesRequestSchema.safeParse(body);
  if (!parsed.success) return { kind: 'invalid_request', message: zodProblems(parsed.error, 'request body').map(formatProblem).join('; ') };
  const req = parsed.data;
  if (req.previous_response_id != null) {
    return { kind: 'invalid_request', message: 'previous_response_id is not supported by the authbench model relay; send the whole conversation (store: false)' };
  }
  const system = req.instructions == null ? [] : [req.instructions];
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  const items = typeof req.input === 'string' ? [{ type: 'message', role: 'user', content: req.input }] : req.input;
  for (const item of items) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      const text = contentText(item.content);
      if (item.role === 'system' || item.role === 'developer') system.push(text);
      else if (item.role === 'assistant') messages.push({ role: 'assistant', content: text });
      else messages.push({ role: 'user', content: text });
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const id = item.call_id ?? '';
      const name = item.name ?? '';
      toolNames.set(id, name);
      const call: ToolCall = type === 'function_call' ? parseToolArguments(id, name, item.arguments ?? '') : { id, name, args: item['input'] };
      // Consecutive calls belong to one assistant turn, as the other formats put them.
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
      else messages.push({ role: 'assistant', content: '', toolCalls: [call] });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const id = item.call_id ?? '';
      messages.push({ role: 'tool', toolCallId: id, toolName: toolNames.get(id) ?? '', content: typeof item.output === 'string' ? item.output : contentText(item.output) });
    }
    // reasoning and other items carry nothing a scripted model reads; they are forwarded upstream as sent.
  }
  if (messages.length === 0) return { kind: 'invalid_request', message: 'input has no message' };
  const tools: ToolSpec[] = (req.tools ?? []).flatMap((t) =>
    t.name === undefined ? [] : [{ name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} }],
  );
  const request: ModelRequest = {
    system: system.join('\n\n'),
    messages,
    tools,
    ...(req.max_output_tokens == null ? {} : { maxOutputTokens: req.max_output_tokens }),
    ...(req.temperature == null ? {} : { temperature: req.temperature }),
  };
  return { model: req.model, stream: req.stream === true, streamUsage: true, request };
}

function argumentsText(call: ToolCall): string {
  return typeof call.args === 'string' && call.parseError !== undefined ? call.args : JSON.stringify(call.args ?? {});
}

function outputItems(reply: RelayReply, meta: ReplyMeta): Record<string, unknown>[] {
  return [
    ...(reply.text === ''
      ? []
      : [{ type: 'message', id: `${meta.id}_msg`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: reply.text, annotations: [] }] }]),
    ...reply.toolCalls.map((c, i) => ({ type: 'function_call', id: `${meta.id}_fc${i}`, call_id: c.id, name: c.name, arguments: argumentsText(c), status: 'completed' })),
  ];
}

function responseObject(reply: RelayReply, meta: ReplyMeta, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const input = reply.usage.inputTokens ?? 0;
  const output = reply.usage.outputTokens ?? 0;
  const incomplete = reply.finishReason === 'length';
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.created,
    model: meta.model,
    status: status === 'completed' && incomplete ? 'incomplete' : status,
    error: null,
    incomplete_details: status === 'completed' && incomplete ? { reason: 'max_output_tokens' } : null,
    output: status === 'completed' ? outputItems(reply, meta) : [],
    usage:
      status === 'completed'
        ? { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output }
        : null,
  };
}

export function encodeResponsesReply(reply: RelayReply, meta: ReplyMeta): unknown {
  return responseObject(reply, meta, 'completed');
}

export function encodeResponsesStream(reply: RelayReply, meta: ReplyMeta): string[] {
  let sequence = 0;
  const frame = (type: string, fields: Record<string, unknown>): string => sseFrame({ type, sequence_number: sequence++, ...fields }, type);
  const frames = [frame('response.created', { response: responseObject(reply, meta, 'in_progress') }), frame('response.in_progress', { response: responseObject(reply, meta, 'in_progress') })];
  outputItems(reply, meta).forEach((item, output_index) => {
    const item_id = item['id'];
    if (item['type'] === 'message') {
      const text = reply.text;
      const part = { type: 'output_text', text: '', annotations: [] };
      frames.push(frame('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }));
      frames.push(frame('response.content_part.added', { item_id, output_index, content_index: 0, part }));
      frames.push(frame('response.output_text.delta', { item_id, output_index, content_index: 0, delta: text, logprobs: [] }));
      frames.push(frame('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] }));
      frames.push(frame('response.content_part.done', { item_id, output_index, content_index: 0, part: { ...part, text } }));
    } else {
      frames.push(frame('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } }));
      frames.push(frame('response.function_call_arguments.delta', { item_id, output_index, delta: item['arguments'] }));
      frames.push(frame('response.function_call_arguments.done', { item_id, output_index, arguments: item['arguments'] }));
    }
    frames.push(frame('response.output_item.done', { output_index, item }));
  });
  const done = responseObject(reply, meta, 'completed');
  frames.push(frame(done['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: done }));
  return frames;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

const ResponsesResponseSchema = z.looseObject({
  object: z.literal('response'),
  status: z.string().nullish(),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).nullish(),
});

export function decodeResponsesResponse(body: unknown): RelayReply | Refusal {
  const parsed = ResponsesResponseSchema.safeParse(body);
  if (!parsed.success) return { kind: 'upstream_unreachable', message: 'the upstream answered with something that is not a response' };
  const text: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of parsed.data.output) {
    if (item.type === 'message') text.push(contentText(item['content']));
    else if (item.type === 'function_call') {
      toolCalls.push(parseToolArguments(str(item['call_id']), str(item['name']), str(item['arguments'])));
    }
  }
  const truncated = parsed.data.status === 'incomplete';
  return {
    text: text.join(''),
    toolCalls,
    finishReason: truncated ? 'length' : toolCalls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: parsed.data.usage?.input_tokens ?? null, outputTokens: parsed.data.usage?.output_tokens ?? null },
  };
}

export const openAiResponses: ApiCodec = {
  api: 'openai-responses',
  path: '/v1/responses',
  upstreamPath: '/responses',
  decodeRequest: decodeResponsesRequest,
  encodeReply: encodeResponsesReply,
  encodeStream: encodeResponsesStream,
  decodeUpstream: decodeResponsesResponse,
  errorBody: openAiErrorBody,
  upstreamBody: ({ stream: _s, ...rest }) => rest,
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  forwardHeaders: ['openai-beta'],
};

