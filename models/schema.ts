import { z } from 'zod';

/**
 * authbench's own transcript and call formats. They are deliberately smaller
 * than any provider's: what the agent loop records and replays, nothing else,
 * so a cached or recorded call means the same thing whichever provider made it.
 */

export const ToolCallSchema = z
  .object({
    id: z.string().min(1).describe('Provider-assigned call id; tool results answer it.'),
    name: z.string().describe('Tool name as the model sent it (may name a tool that does not exist).'),
    args: z
      .unknown()
      .describe('Arguments as the model sent them: the parsed JSON value, or the raw string when it did not parse.'),
    parseError: z
      .string()
      .optional()
      .describe('Set when the call is invalid (arguments not JSON, unknown tool); such calls must never be executed.'),
  })
  .describe('One tool call the model proposed.');
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const ToolSpecSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or - (what every provider accepts)')
      .describe('Tool name.'),
    description: z.string().describe('What the tool does, for the model.'),
    parameters: z.record(z.string(), z.unknown()).describe('JSON Schema of the arguments object.'),
  })
  .describe('A tool offered to the model. Never executed by this module.');
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

export const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: z.string().describe('User (or harness) text.'),
});

export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.string().describe('Text the model wrote (may be empty when it only called tools).'),
  toolCalls: z.array(ToolCallSchema).optional().describe('Tool calls the model made in this turn.'),
});

export const ToolResultMessageSchema = z.object({
  role: z.literal('tool'),
  toolCallId: z.string().min(1).describe('The id of the call this answers.'),
  toolName: z.string().describe('The name of the call this answers.'),
  content: z.string().describe('The observation shown to the model.'),
  isError: z.boolean().optional().describe('The call failed or was refused (invalid, denied, timed out).'),
});

export const MessageSchema = z
  .discriminatedUnion('role', [UserMessageSchema, AssistantMessageSchema, ToolResultMessageSchema])
  .describe('One transcript entry.');
export type Message = z.infer<typeof MessageSchema>;

export const ModelRequestSchema = z
  .object({
    system: z.string().describe('System prompt.'),
    messages: z.array(MessageSchema).min(1).describe('The conversation so far.'),
    tools: z.array(ToolSpecSchema).describe('Tools offered; empty for plain chat.'),
    maxOutputTokens: z.number().int().positive().optional().describe('Cap on generated tokens.'),
    temperature: z.number().min(0).max(2).optional().describe('Sampling temperature (provider default when absent).'),
    seed: z.number().int().optional().describe('Sampling seed, for providers that honour one.'),
  })
  .describe('One chat-with-tools call.');
export type ModelRequest = z.infer<typeof ModelRequestSchema>;

/** The AI SDK's finish reasons, kept verbatim. */
export const FINISH_REASONS = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'interrupted', 'other'] as const;

export const UsageSchema = z
  .object({
    inputTokens: z.number().int().nonnegative().nullable().describe('Prompt tokens; null when the provider did not say.'),
    outputTokens: z.number().int().nonnegative().nullable().describe('Generated tokens; null when the provider did not say.'),
  })
  .describe('Token usage of one call.');
export type Usage = z.infer<typeof UsageSchema>;

export const ModelResponseSchema = z
  .object({
    text: z.string().describe('Text the model wrote.'),
    toolCalls: z.array(ToolCallSchema).describe('Tool calls, valid and invalid, in the order the model made them.'),
    finishReason: z.enum(FINISH_REASONS).describe('Why generation stopped.'),
    usage: UsageSchema,
    costUsd: z
      .number()
      .nonnegative()
      .nullable()
      .describe('What this call cost the run: null when the price or usage is unknown, 0 when served from cache.'),
    latencyMs: z.number().nonnegative().describe('Wall time of this call including retries (or of the cache read).'),
    cached: z.boolean().describe('Served from the response cache; no request was made.'),
    original: z
      .object({
        costUsd: z.number().nonnegative().nullable(),
        latencyMs: z.number().nonnegative(),
      })
      .optional()
      .describe('For a cached response: cost and latency of the call that produced it.'),
    warnings: z.array(z.string()).describe('Provider warnings, e.g. a setting (seed, temperature) the model ignored.'),
    raw: z.unknown().optional().describe('The provider response body, for debugging.'),
  })
  .describe('The result of one successful call.');
export type ModelResponse = z.infer<typeof ModelResponseSchema>;
