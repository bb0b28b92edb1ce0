import { z } from 'zod';
import { formatProblem, zodProblems } from '../../core/index.ts';
import { argsForReplay } from '../index.ts';
import type { Message, ModelRequest, ToolCall, ToolSpec } from '../index.ts';
import { contentText } from './openai.ts';
import { isPlainObject, sseFrame } from './wire.ts';
import type { ApiCodec, DecodedRequest, FinishReason, Refusal, RefusalKind, RelayReply, ReplyMeta } from './wire.ts';

/**
 * Anthropic Messages (`POST /v1/messages`), streaming and not, with
 * `tool_use` / `tool_result` blocks: what Claude Code speaks. Blocks the
 * relay has no use for (thinking, images, documents) are kept as placeholders
 * in the decoded request and forwarded upstream untouched.
 */

const BlockSchema = z.looseObject({ type: z.string().describe('Block type.') });

export const MessagesRequestSchema = z
  .looseObject({
    model: z.string().min(1).describe('Model name.'),
    max_tokens: z.number().int().positive().describe('Cap on generated tokens (required by the API).'),
    messages: z
      .array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(BlockSchema)]) }))
      .min(1)
      .describe('The conversation.'),
    system: z.union([z.string(), z.array(BlockSchema)]).optional().describe('System prompt, text or text blocks.'),
    tools: z
      .array(
        z.looseObject({
          name: z.string(),
          description: z.string().optional(),
          input_schema: z.record(z.string(), z.unknown()).optional(),
        }),
      )
      .optional()
      .describe('Tools offered (server tools have no input_schema).'),
    stream: z.boolean().optional().describe('Server-sent events wanted.'),
    temperature: z.number().optional(),
  })
  .describe('The part of a Messages request the relay reads.');

function invalid(message: string): Refusal {
  return { kind: 'invalid_request', message };
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function decodeMessagesRequest(body: unknown): DecodedRequest | Refusal {
  const parsed = MessagesRequestSchema.safeParse(body);
  if (!parsed.success) return invalid(zodProblems(parsed.error, 'request body').map(formatProblem).join('; '));
  const req = parsed.data;
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  for (const m of req.messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'assistant') {
      const calls: ToolCall[] = [];
      const text: string[] = [];
      for (const b of blocks) {
        if (b.type === 'tool_use') {
          calls.push({ id: str(b['id']), name: str(b['name']), args: b['input'] });
          toolNames.set(str(b['id']), str(b['name']));
        } else if (b.type === 'text') text.push(str(b['text']));
      }
      messages.push({ role: 'assistant', content: text.join('\n'), ...(calls.length === 0 ? {} : { toolCalls: calls }) });
      continue;
    }
    const text: string[] = [];
    for (const b of blocks) {
      if (b.type === 'tool_result') {
        const id = str(b['tool_use_id']);
        messages.push({
          role: 'tool',
          toolCallId: id,
          toolName: toolNames.get(id) ?? '',
          content: contentText(b['content']),
          ...(b['is_error'] === true ? { isError: true } : {}),
        });
      } else text.push(b.type === 'text' ? str(b['text']) : `[${b.type}]`);
    }
    if (text.length > 0) messages.push({ role: 'user', content: text.join('\n') });
  }
  const tools: ToolSpec[] = (req.tools ?? []).map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.input_schema ?? {} }));
  const system = typeof req.system === 'string' ? req.system : contentText(req.system);
  const request: ModelRequest = {
    system,
    messages,
    tools,
    maxOutputTokens: req.max_tokens,
    ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
  };
  return { model: req.model, stream: req.stream === true, streamUsage: true, request };
}

const STOP_TO_WIRE: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  'content-filter': 'refusal',
  'tool-calls': 'tool_use',
  error: 'end_turn',
  interrupted: 'end_turn',
  other: 'end_turn',
};

function stopFromWire(reason: unknown): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool-calls';
    case 'refusal':
      return 'content-filter';
    default:
      return 'other';
  }
}

function contentBlocks(reply: RelayReply): Record<string, unknown>[] {
  return [
    ...(reply.text === '' ? [] : [{ type: 'text', text: reply.text }]),
    // The API only carries object inputs; an unparsed call keeps its raw text inside one.
    ...reply.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: argsForReplay(c.args) })),
  ];
}

function usageWire(reply: RelayReply): { input_tokens: number; output_tokens: number } {
  return { input_tokens: reply.usage.inputTokens ?? 0, output_tokens: reply.usage.outputTokens ?? 0 };
}

export function encodeMessagesReply(reply: RelayReply, meta: ReplyMeta): unknown {
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: contentBlocks(reply),
    stop_reason: STOP_TO_WIRE[reply.finishReason],
    stop_sequence: null,
    usage: usageWire(reply),
  };
}

export function encodeMessagesStream(reply: RelayReply, meta: ReplyMeta): string[] {
  const usage = usageWire(reply);
  const frames = [
    sseFrame(
      {
        type: 'message_start',
        message: { id: meta.id, type: 'message', role: 'assistant', model: meta.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
      },
      'message_start',
    ),
  ];
  contentBlocks(reply).forEach((block, index) => {
    const start = block['type'] === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    const delta = block['type'] === 'text' ? { type: 'text_delta', text: block['text'] } : { type: 'input_json_delta', partial_json: JSON.stringify(block['input']) };
    frames.push(sseFrame({ type: 'content_block_start', index, content_block: start }, 'content_block_start'));
    frames.push(sseFrame({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
    frames.push(sseFrame({ type: 'content_block_stop', index }, 'content_block_stop'));
  });
  frames.push(
    sseFrame({ type: 'message_delta', delta: { stop_reason: STOP_TO_WIRE[reply.finishReason], stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta'),
  );
  frames.push(sseFrame({ type: 'message_stop' }, 'message_stop'));
  return frames;
}

const MessagesResponseSchema = z.looseObject({
  type: z.literal('message'),
  content: z.array(BlockSchema),
  stop_reason: z.string().nullish(),
  usage: z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).nullish(),
});

export function decodeMessagesResponse(body: unknown): RelayReply | Refusal {
  const parsed = MessagesResponseSchema.safeParse(body);
  if (!parsed.success) return { kind: 'upstream_unreachable', message: 'the upstream answered with something that is not a message' };
  const text: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const b of parsed.data.content) {
    if (b.type === 'text') text.push(str(b['text']));
    else if (b.type === 'tool_use') toolCalls.push({ id: str(b['id']), name: str(b['name']), args: isPlainObject(b['input']) ? b['input'] : {} });
  }
  return {
    text: text.join(''),
    toolCalls,
    finishReason: stopFromWire(parsed.data.stop_reason),
    usage: { inputTokens: parsed.data.usage?.input_tokens ?? null, outputTokens: parsed.data.usage?.output_tokens ?? null },
  };
}

const ERROR_TYPE: Record<RefusalKind, string> = {
  invalid_request: 'invalid_request_error',
  over_budget: 'permission_error',
  not_found: 'not_found_error',
  unknown_model: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  too_large: 'request_too_large',
  backend_error: 'api_error',
  upstream_unreachable: 'api_error',
};

export function anthropicErrorBody(refusal: Refusal): unknown {
  return { type: 'error', error: { type: ERROR_TYPE[refusal.kind], message: refusal.message } };
}

export const anthropicMessages: ApiCodec = {
  api: 'anthropic-messages',
  path: '/v1/messages',
  upstreamPath: '/messages',
  decodeRequest: decodeMessagesRequest,
  encodeReply: encodeMessagesReply,
  encodeStream: encodeMessagesStream,
  decodeUpstream: decodeMessagesResponse,
  errorBody: anthropicErrorBody,
  upstreamBody: ({ stream: _s, ...rest }) => rest,
  authHeaders: (key) => ({ 'x-api-key': key }),
  // The API version and beta features are the client's choice, and carry no credential.
  forwardHeaders: ['anthropic-version', 'anthropic-beta'],
};
