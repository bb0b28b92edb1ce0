import { InvalidToolInputError, NoSuchToolError, jsonSchema } from 'ai';
import type { JSONSchema7, ModelMessage, ToolSet, TypedToolCall } from 'ai';
import type { Message, ToolCall, ToolSpec } from './schema.ts';

/**
 * Translation between authbench's transcript format and the AI SDK's, kept
 * pure so the mapping is tested without a server.
 */

/**
 * Tools without `execute` (the SDK never runs anything) and with a schema that
 * has no validator: arguments that are valid JSON come back as sent, so the
 * caller, not the SDK, decides whether they fit.
 */
export function toSdkTools(tools: readonly ToolSpec[]): ToolSet {
  const out: ToolSet = {};
  for (const t of tools) {
    out[t.name] = { description: t.description, inputSchema: jsonSchema(t.parameters as JSONSchema7) };
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Providers want an object as a tool call's input (Anthropic rejects anything
 * else), but an invalid call's args are the raw text the model wrote. Wrap it
 * so the model still sees what it sent.
 */
export function argsForReplay(args: unknown): Record<string, unknown> {
  if (isPlainObject(args)) return args;
  return { invalid_arguments: typeof args === 'string' ? args : JSON.stringify(args) ?? '' };
}

export function toSdkMessages(messages: readonly Message[]): ModelMessage[] {
  return messages.map((m): ModelMessage => {
    switch (m.role) {
      case 'user':
        return { role: 'user', content: m.content };
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: m.content };
        return {
          role: 'assistant',
          content: [
            ...(m.content === '' ? [] : [{ type: 'text' as const, text: m.content }]),
            ...calls.map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.name,
              input: argsForReplay(c.args),
            })),
          ],
        };
      }
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: m.toolCallId,
              toolName: m.toolName,
              output: m.isError === true ? { type: 'error-text', value: m.content } : { type: 'text', value: m.content },
            },
          ],
        };
    }
  });
}

/** Why the SDK marked a call invalid, in words for the transcript. */
export function describeInvalidToolCall(error: unknown): string {
  if (NoSuchToolError.isInstance(error)) return `unknown tool ${JSON.stringify(error.toolName)}`;
  if (InvalidToolInputError.isInstance(error)) {
    const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
    return `arguments are not valid JSON: ${cause}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function fromSdkToolCall(call: TypedToolCall<ToolSet>): ToolCall {
  const args: unknown = call.input;
  const base = { id: call.toolCallId, name: call.toolName, args };
  return call.invalid === true ? { ...base, parseError: describeInvalidToolCall(call.error) } : base;
}
