import { z } from 'zod';
import { formatProblem, zodProblems } from '../../core/index.ts';
import type { Message, ModelRequest, ToolCall, ToolSpec } from '../index.ts';
import { isPlainObject, parseToolArguments, sseFrame } from './wire.ts';
import type { ApiCodec, DecodedRequest, FinishReason, Refusal, RefusalKind, RelayReply, ReplyMeta } from './wire.ts';

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), streaming and not,
 * with function tools: what OpenAI-compatible clients and servers speak. The
 * request schemas are loose: only what the relay reads is checked, the rest
 * is forwarded upstream untouched.
 */

const ToolCallWireSchema = z.looseObject({
  id: z.string().describe('Call id.'),
  function: z.looseObject({
    name: z.string().describe('Tool name.'),
    arguments: z.string().optional().describe('Arguments as JSON text.'),
  }),
});

const ChatMessageSchema = z.looseObject({
  role: z.string().describe('system, developer, user, assistant or tool.'),
  content: z.unknown().optional().describe('A string or an array of content parts.'),
  tool_calls: z.array(ToolCallWireSchema).nullish().describe('Tool calls of an assistant message.'),
  tool_call_id: z.string().optional().describe('The call a tool message answers.'),
});

export const ChatRequestSchema = z
  .looseObject({
    model: z.string().min(1).describe('Model name.'),
    messages: z.array(ChatMessageSchema).min(1).describe('The conversation.'),
    tools: z
      .array(
        z.looseObject({
          type: z.string().optional(),
          function: z.looseObject({
            name: z.string(),
            description: z.string().optional(),
            parameters: z.record(z.string(), z.unknown()).optional(),
          }),
        }),
      )
      .nullish()
      .describe('Function tools offered.'),
    stream: z.boolean().nullish().describe('Server-sent events wanted.'),
    stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
    max_tokens: z.number().int().positive().nullish(),
    max_completion_tokens: z.number().int().positive().nullish(),
    temperature: z.number().nullish(),
    seed: z.number().int().nullish(),
  })
  .describe('The part of a Chat Completions request the relay reads.');

/** Text of a content field: a string, or the text parts of an array (other parts become a placeholder). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) => (isPlainObject(p) && typeof p['text'] === 'string' ? p['text'] : `[${isPlainObject(p) ? String(p['type']) : 'part'}]`))
    .join('\n');
}

function invalid(message: string): Refusal {
  return { kind: 'invalid_request', message };
}

export function decodeChatRequest(body: unknown): DecodedRequest | Refusal {
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) return invalid(zodProblems(parsed.error, 'request body').map(formatProblem).join('; '));
  const req = parsed.data;
  const system: string[] = [];
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  for (const m of req.messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(contentText(m.content));
        break;
      case 'user':
        messages.push({ role: 'user', content: contentText(m.content) });
        break;
      case 'assistant': {
        const calls: ToolCall[] = (m.tool_calls ?? []).map((c) => parseToolArguments(c.id, c.function.name, c.function.arguments ?? ''));
        for (const c of calls) toolNames.set(c.id, c.name);
        messages.push({ role: 'assistant', content: contentText(m.content), ...(calls.length === 0 ? {} : { toolCalls: calls }) });
        break;
      }
      case 'tool':
        if (m.tool_call_id === undefined) return invalid('a tool message needs tool_call_id');
        messages.push({ role: 'tool', toolCallId: m.tool_call_id, toolName: toolNames.get(m.tool_call_id) ?? '', content: contentText(m.content) });
        break;
      default:
        return invalid(`unknown message role ${JSON.stringify(m.role)}`);
    }
  }
  if (messages.length === 0) return invalid('messages has no user, assistant or tool message');
  const tools: ToolSpec[] = (req.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? '',
    parameters: t.function.parameters ?? {},
  }));
  const maxOutputTokens = req.max_completion_tokens ?? req.max_tokens;
  const request: ModelRequest = {
    system: system.join('\n\n'),
    messages,
    tools,
    ...(maxOutputTokens == null ? {} : { maxOutputTokens }),
    ...(req.temperature == null ? {} : { temperature: req.temperature }),
    ...(req.seed == null ? {} : { seed: req.seed }),
  };
  return { model: req.model, stream: req.stream === true, streamUsage: req.stream_options?.include_usage === true, request };
}

const FINISH_TO_WIRE: Record<FinishReason, string> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
  error: 'stop',
  interrupted: 'stop',
  other: 'stop',
};

function finishFromWire(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    default:
      return 'other';
  }
}

/** A call's arguments as JSON text; an unparsed call's raw text is sent back verbatim. */
function argumentsText(call: ToolCall): string {
  return typeof call.args === 'string' && call.parseError !== undefined ? call.args : JSON.stringify(call.args ?? {});
}

function usageWire(reply: RelayReply): Record<string, number> | undefined {
  const { inputTokens, outputTokens } = reply.usage;
  if (inputTokens === null || outputTokens === null) return undefined;
  return { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
}

export function encodeChatReply(reply: RelayReply, meta: ReplyMeta): unknown {
  const usage = usageWire(reply);
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text === '' && reply.toolCalls.length > 0 ? null : reply.text,
          ...(reply.toolCalls.length === 0
            ? {}
            : { tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsText(c) } })) }),
        },
        finish_reason: FINISH_TO_WIRE[reply.finishReason],
      },
    ],
    ...(usage === undefined ? {} : { usage }),
  };
}

export function encodeChatStream(reply: RelayReply, meta: ReplyMeta & { streamUsage: boolean }): string[] {
  const chunk = (delta: unknown, finish: string | null): string =>
    sseFrame({ id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const frames = [chunk({ role: 'assistant', content: '' }, null)];
  if (reply.text !== '') frames.push(chunk({ content: reply.text }, null));
  reply.toolCalls.forEach((c, index) => {
    // Name first, arguments in a second delta: clients must accumulate arguments, and this checks they do.
    frames.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, null));
    frames.push(chunk({ tool_calls: [{ index, function: { arguments: argumentsText(c) } }] }, null));
  });
  frames.push(chunk({}, FINISH_TO_WIRE[reply.finishReason]));
  const usage = usageWire(reply);
  if (meta.streamUsage && usage !== undefined) {
    frames.push(sseFrame({ id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage }));
  }
  frames.push(sseFrame('[DONE]'));
  return frames;
}

const ChatResponseSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.unknown().optional(), tool_calls: z.array(ToolCallWireSchema).nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.looseObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).nullish(),
});

export function decodeChatResponse(body: unknown): RelayReply | Refusal {
  const parsed = ChatResponseSchema.safeParse(body);
  if (!parsed.success) return { kind: 'upstream_unreachable', message: 'the upstream answered with something that is not a chat completion' };
  const [choice] = parsed.data.choices;
  const calls = (choice?.message.tool_calls ?? []).map((c) => parseToolArguments(c.id, c.function.name, c.function.arguments ?? ''));
  return {
    text: contentText(choice?.message.content),
    toolCalls: calls,
    finishReason: finishFromWire(choice?.finish_reason),
    usage: { inputTokens: parsed.data.usage?.prompt_tokens ?? null, outputTokens: parsed.data.usage?.completion_tokens ?? null },
  };
}

const ERROR_TYPE: Record<RefusalKind, { type: string; code: string | null }> = {
  invalid_request: { type: 'invalid_request_error', code: null },
  over_budget: { type: 'insufficient_quota', code: 'budget_exhausted' },
  not_found: { type: 'invalid_request_error', code: 'not_found' },
  unknown_model: { type: 'invalid_request_error', code: 'model_not_found' },
  method_not_allowed: { type: 'invalid_request_error', code: 'method_not_allowed' },
  too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  backend_error: { type: 'server_error', code: null },
  upstream_unreachable: { type: 'server_error', code: 'upstream_unreachable' },
};

export function openAiErrorBody(refusal: Refusal): unknown {
  return { error: { message: refusal.message, ...ERROR_TYPE[refusal.kind], param: null } };
}

export const openAiChat: ApiCodec = {
  api: 'openai-chat',
  path: '/v1/chat/completions',
  upstreamPath: '/chat/completions',
  decodeRequest: decodeChatRequest,
  encodeReply: encodeChatReply,
  encodeStream: encodeChatStream,
  decodeUpstream: decodeChatResponse,
  errorBody: openAiErrorBody,
  upstreamBody: ({ stream: _s, stream_options: _o, ...rest }) => rest,
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  forwardHeaders: ['openai-beta'],
};
