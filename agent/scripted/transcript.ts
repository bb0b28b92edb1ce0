import { AuthbenchError, formatProblem, zodProblems } from '../../core/index.ts';
import { ModelRequestSchema, type ModelRequest, type ModelResponse, type ToolCall } from '../../models/index.ts';
import { SHELL_TOOL } from '../tools.ts';

/** A shell call the scripted model made earlier, with the observation it got back (if any yet). */
export interface PastCall {
  command: string;
  output: string | undefined;
}

export interface TranscriptView {
  instruction: string;
  calls: PastCall[];
  /** Tool calls of any kind so far (for fresh call ids). */
  callCount: number;
}

/**
 * What a scripted model knows is what is in the request, like any model: the
 * instruction and its own earlier calls with their results. A malformed
 * request is the loop's bug, so it throws a non-infrastructure error.
 */
export function readTranscript(request: ModelRequest, model: string): TranscriptView {
  const parsed = ModelRequestSchema.safeParse(request);
  if (!parsed.success) {
    throw new AuthbenchError('INVALID_ARGUMENT', `${model}: malformed model request`, { details: zodProblems(parsed.error, 'model request').map(formatProblem) });
  }
  const first = parsed.data.messages[0];
  const instruction = first?.role === 'user' ? first.content : '';
  const results = new Map<string, string>();
  for (const m of parsed.data.messages) if (m.role === 'tool') results.set(m.toolCallId, m.content);
  const calls: PastCall[] = [];
  let callCount = 0;
  for (const m of parsed.data.messages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.toolCalls ?? []) {
      callCount++;
      const command = (c.args as { command?: unknown } | null)?.command;
      if (c.name === SHELL_TOOL && typeof command === 'string') calls.push({ command, output: results.get(c.id) });
    }
  }
  return { instruction, calls, callCount };
}

/** A synchronous scripted policy as `complete`: a throw becomes a rejection, like a client's. */
export function asCompletion(respond: (request: ModelRequest) => ModelResponse): (request: ModelRequest) => Promise<ModelResponse> {
  return (request) => new Promise((resolve) => resolve(respond(request)));
}

/** A response as a provider would return it; scripted models cost nothing and use no tokens. */
export function scriptedResponse(text: string, toolCalls: ToolCall[] = []): ModelResponse {
  return {
    text,
    toolCalls,
    finishReason: toolCalls.length === 0 ? 'stop' : 'tool-calls',
    usage: { inputTokens: 0, outputTokens: 0 },
    costUsd: 0,
    latencyMs: 0,
    cached: false,
    warnings: [],
  };
}

export function shellCall(index: number, command: string, timeoutSec?: number): ToolCall {
  return { id: `call_${index}`, name: SHELL_TOOL, args: timeoutSec === undefined ? { command } : { command, timeout_sec: timeoutSec } };
}

/** Single-quote for bash. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
