/**
 * An installed agent's own account of its run, read from its headless
 * stdout: the tool calls it made (call id, tool, command for its shell
 * tool), the result each got, its text, and how it ended. Claude Code's
 * `--output-format stream-json --verbose` is one JSON event per line:
 * `system/init` (model, tools, permission mode), `assistant` messages
 * (text and `tool_use` blocks), `user` messages carrying the `tool_result`s,
 * and a final `result`. Codex's `exec --json` is one event per line too:
 * `item.started` / `item.completed` per item (`command_execution` with its
 * command, output and exit code; `agent_message`), then `turn.completed` or
 * `turn.failed`. Pure: the syscall trace says what really ran; this says what
 * the agent meant to run.
 */
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import type { AgentAdapter, ShellTool } from './schema.ts';

export const TranscriptCallSchema = z
  .object({
    id: z.string().describe('The call id the model gave it (`toolu_…`).'),
    tool: z.string().describe('The tool, as the agent logs it: Claude Code the tool name (`Bash`), Codex the item type (`command_execution`).'),
    input: z.unknown().describe('Its arguments as the agent logged them.'),
    command: z.string().nullable().describe('The command line of a shell call (Codex: as it ran it, `/bin/bash -lc …`); null for other tools.'),
    parent: z.string().nullable().describe('The call of a sub-agent (Task) this call ran under; null at the top level.'),
    result: z
      .object({
        content: z.string().describe('What the tool returned to the model, as text.'),
        is_error: z.boolean().describe('The agent marked it as an error (a failed command, a refused call).'),
      })
      .nullable()
      .describe('The result the agent gave the model; null when none was logged (the run ended first).'),
  })
  .describe('One tool call the agent made, with its result.');
export type TranscriptCall = z.infer<typeof TranscriptCallSchema>;

export const AgentTranscriptSchema = z
  .object({
    format: z.string().describe('The stdout format read (the adapter’s `transcript`).'),
    session: z
      .object({
        model: z.string().nullable().describe('The model the agent says it uses.'),
        permission_mode: z.string().nullable().describe('Its own permission mode (`bypassPermissions`: its prompts are off).'),
        tools: z.array(z.string()).describe('The tools it offered the model.'),
      })
      .nullable()
      .describe('What the agent reported at start; null when it never did.'),
    calls: z.array(TranscriptCallSchema).describe('Tool calls in the order the agent logged them.'),
    texts: z.array(z.string()).describe('The text the model wrote, per assistant message that had any.'),
    final: z
      .object({
        subtype: z.string().describe('How the run ended by the agent’s account (`success`, `error_max_turns`, `error_during_execution`…).'),
        is_error: z.boolean().describe('The agent counts the run as failed.'),
        text: z.string().nullable().describe('Its final answer.'),
        num_turns: z.number().int().nonnegative().nullable().describe('Model turns it counted.'),
      })
      .nullable()
      .describe('The closing `result` event; null when the run stopped before it (killed, timed out).'),
    skipped: z.number().int().nonnegative().describe('Lines that were not events read here (not JSON, or of a type the parser does not use).'),
  })
  .describe('An installed agent’s transcript from its own stream output.');
export type AgentTranscript = z.infer<typeof AgentTranscriptSchema>;

const Block = z.looseObject({ type: z.string() });
const MessageEvent = z.looseObject({
  type: z.enum(['assistant', 'user']),
  message: z.looseObject({ content: z.union([z.string(), z.array(Block)]) }),
  parent_tool_use_id: z.string().nullable().optional(),
});
const InitEvent = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  model: z.string().optional(),
  permissionMode: z.string().optional(),
  tools: z.array(z.string()).optional(),
});
const ResultEvent = z.looseObject({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  num_turns: z.number().int().nonnegative().optional(),
});

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A tool result's content: a string, or text blocks (anything else shown by its type). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: unknown) => {
      const block = Block.safeParse(b);
      if (!block.success) return '';
      return block.data.type === 'text' ? (str(block.data['text']) ?? '') : `[${block.data.type}]`;
    })
    .join('\n');
}

function jsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Claude Code's stream-json; `shell` says which tool's argument is the command line. */
export function parseClaudeStreamJson(stdout: string, shell: ShellTool | undefined): AgentTranscript {
  const calls: TranscriptCall[] = [];
  const byId = new Map<string, TranscriptCall>();
  const texts: string[] = [];
  let session: AgentTranscript['session'] = null;
  let final: AgentTranscript['final'] = null;
  let skipped = 0;
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const value = jsonLine(line);
    const init = InitEvent.safeParse(value);
    if (init.success) {
      session = { model: init.data.model ?? null, permission_mode: init.data.permissionMode ?? null, tools: init.data.tools ?? [] };
      continue;
    }
    const result = ResultEvent.safeParse(value);
    if (result.success) {
      final = { subtype: result.data.subtype, is_error: result.data.is_error ?? result.data.subtype !== 'success', text: result.data.result ?? null, num_turns: result.data.num_turns ?? null };
      continue;
    }
    const message = MessageEvent.safeParse(value);
    if (!message.success) {
      skipped++;
      continue;
    }
    const { content } = message.data.message;
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    if (message.data.type === 'assistant') {
      const text = blocks.flatMap((b) => (b.type === 'text' ? [str(b['text']) ?? ''] : [])).join('\n');
      if (text !== '') texts.push(text);
      for (const b of blocks) {
        if (b.type !== 'tool_use') continue;
        const tool = str(b['name']) ?? '';
        const input = b['input'];
        const arg = shell !== undefined && tool === shell.name && input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[shell.command] : undefined;
        const call: TranscriptCall = { id: str(b['id']) ?? '', tool, input, command: str(arg), parent: message.data.parent_tool_use_id ?? null, result: null };
        calls.push(call);
        byId.set(call.id, call);
      }
    } else {
      // The user turns of a headless run are the tool results (and, first, the instruction as text).
      for (const b of blocks) {
        if (b.type !== 'tool_result') continue;
        const call = byId.get(str(b['tool_use_id']) ?? '');
        if (call !== undefined) call.result = { content: resultText(b['content']), is_error: b['is_error'] === true };
      }
    }
  }
  return { format: 'claude-code-stream-json', session, calls, texts, final, skipped };
}

const CodexItemEvent = z.looseObject({
  type: z.enum(['item.started', 'item.updated', 'item.completed']),
  item: z.looseObject({ id: z.string(), type: z.string() }),
});
const CodexTurnEnd = z.looseObject({ type: z.enum(['turn.completed', 'turn.failed']), error: z.looseObject({ message: z.string().optional() }).optional() });

/** Codex's `exec --json`: items by id (a started item is completed later), texts, the turn's end. */
export function parseCodexExecJson(stdout: string): AgentTranscript {
  const calls: TranscriptCall[] = [];
  const byId = new Map<string, TranscriptCall>();
  const texts: string[] = [];
  let final: AgentTranscript['final'] = null;
  let skipped = 0;
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const value = jsonLine(line);
    const end = CodexTurnEnd.safeParse(value);
    if (end.success) {
      const failed = end.data.type === 'turn.failed';
      final = { subtype: failed ? 'failed' : 'completed', is_error: failed, text: end.data.error?.message ?? null, num_turns: null };
      continue;
    }
    const event = CodexItemEvent.safeParse(value);
    if (!event.success) {
      skipped++;
      continue;
    }
    const { item } = event.data;
    if (item.type === 'agent_message') {
      if (event.data.type === 'item.completed') texts.push(str(item['text']) ?? '');
      continue;
    }
    // Codex's own notices (`error` items: a model without metadata, a reconnect) are not calls.
    if (item.type === 'error' || item.type === 'reasoning') continue;
    let call = byId.get(item.id);
    if (call === undefined) {
      const { id: _id, type: _type, aggregated_output: _out, exit_code: _exit, status: _status, ...input } = item;
      call = { id: item.id, tool: item.type, input, command: str(item['command']), parent: null, result: null };
      calls.push(call);
      byId.set(item.id, call);
    }
    if (event.data.type === 'item.completed') {
      const exit = item['exit_code'];
      call.result = { content: str(item['aggregated_output']) ?? '', is_error: item['status'] === 'failed' || (typeof exit === 'number' && exit !== 0) };
    }
  }
  return { format: 'codex-exec-json', session: null, calls, texts, final, skipped };
}

/** The agent's transcript from its headless stdout, in the format its adapter names. */
export function parseTranscript(adapter: AgentAdapter, stdout: string): AgentTranscript {
  switch (adapter.transcript) {
    case 'claude-code-stream-json':
      return parseClaudeStreamJson(stdout, adapter.shellTool);
    case 'codex-exec-json':
      return parseCodexExecJson(stdout);
    case undefined:
      throw new AuthbenchError('INVALID_ARGUMENT', `agent ${adapter.name}: no transcript parser for its output yet`);
  }
}
