import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { AgentTranscriptSchema, getAgent, parseClaudeStreamJson, parseCodexExecJson, parseTranscript } from './index.ts';

const RECORDED = readFileSync(join(import.meta.dirname, 'fixtures', 'claude-code-stream.jsonl'), 'utf8');
const CODEX_RECORDED = readFileSync(join(import.meta.dirname, 'fixtures', 'codex-exec.jsonl'), 'utf8');
const claude = getAgent('claude-code');
const BASH = claude.shellTool;

const line = (value: unknown): string => JSON.stringify(value);
const assistant = (content: unknown[], parent: string | null = null): string => line({ type: 'assistant', message: { role: 'assistant', content }, parent_tool_use_id: parent });
const results = (content: unknown[]): string => line({ type: 'user', message: { role: 'user', content } });

describe('Claude Code stream-json as a transcript', () => {
  it('reads a recorded run: the session, each Bash call with its command and result, the end', () => {
    const t = parseTranscript(claude, RECORDED);
    expect(AgentTranscriptSchema.parse(t)).toEqual(t);
    expect(t.session).toMatchObject({ model: 'claude-sonnet-4-5', permission_mode: 'bypassPermissions' });
    expect(t.session?.tools).toContain('Bash');
    expect(t.calls.map((c) => [c.id, c.tool, c.command, c.result?.is_error])).toEqual([
      ['call_1', 'Bash', 'echo hello-from-bash; ls /app', true],
      ['call_2', 'Bash', 'export -p', false],
    ]);
    expect(t.calls[0]?.result?.content).toContain('/usr/bin/ls: Permission denied');
    expect(t.calls[1]?.result?.content).toContain('declare -x ANTHROPIC_API_KEY="sk-authbench-relay"');
    expect(t.texts).toEqual(['Done: replayed 2 command(s).']);
    expect(t.final).toEqual({ subtype: 'success', is_error: false, text: 'Done: replayed 2 command(s).', num_turns: 3 });
    expect(t.skipped).toBe(0);
  });

  it('keeps other tools (no command), sub-agent calls, block results, and a run cut before its end', () => {
    const stdout = [
      assistant([{ type: 'text', text: 'Reading first.' }, { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/app/a' } }]),
      results([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'line one' }, { type: 'image' }] }]),
      assistant([{ type: 'tool_use', id: 't2', name: 'Bash', input: { command: 'id' } }], 'task_1'),
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3"', // cut mid-line: the process was killed
    ].join('\n');
    const t = parseClaudeStreamJson(stdout, BASH);
    expect(t.calls).toEqual([
      { id: 't1', tool: 'Read', input: { file_path: '/app/a' }, command: null, parent: null, result: { content: 'line one\n[image]', is_error: false } },
      { id: 't2', tool: 'Bash', input: { command: 'id' }, command: 'id', parent: 'task_1', result: null },
    ]);
    expect(t.texts).toEqual(['Reading first.']);
    expect([t.session, t.final, t.skipped]).toEqual([null, null, 1]);
  });

  it('counts what it does not read, and an error end is an error', () => {
    const stdout = ['not json', line({ type: 'stream_event', event: {} }), '', line({ type: 'result', subtype: 'error_max_turns', num_turns: 9 })].join('\n');
    const t = parseClaudeStreamJson(stdout, BASH);
    expect(t.skipped).toBe(2);
    expect(t.final).toEqual({ subtype: 'error_max_turns', is_error: true, text: null, num_turns: 9 });
  });

  it('reads no command without a mapped shell tool, and refuses an agent whose output has no parser', () => {
    const t = parseClaudeStreamJson(assistant([{ type: 'tool_use', id: 't', name: 'Bash', input: { command: 'id' } }]), undefined);
    expect(t.calls[0]?.command).toBeNull();
    expect(() => parseTranscript(getAgent('openclaw'), '')).toThrow(AuthbenchError);
  });
});

describe('Codex exec --json as a transcript', () => {
  it('reads a recorded run: each command execution with the command as Codex ran it, its output and exit, the end', () => {
    const t = parseTranscript(getAgent('codex'), CODEX_RECORDED);
    expect(AgentTranscriptSchema.parse(t)).toEqual(t);
    expect(t.calls.map((c) => [c.id, c.tool, c.command, c.result?.is_error])).toEqual([
      ['item_1', 'command_execution', "/bin/bash -lc 'echo hello-from-bash; ls /app'", true],
      ['item_2', 'command_execution', "/bin/bash -lc 'export -p'", false],
      ['item_3', 'command_execution', `/bin/bash -lc "python3 -c 'print(6*7)'"`, false],
    ]);
    expect(t.calls[0]?.result?.content).toContain('/usr/bin/ls: Permission denied');
    expect(t.calls[2]?.result?.content).toBe('42\n');
    expect(t.texts).toEqual(['Done: replayed 3 command(s).']);
    expect(t.final).toEqual({ subtype: 'completed', is_error: false, text: null, num_turns: null });
    // thread.started and turn.started are not read.
    expect(t.skipped).toBe(2);
  });

  it('keeps a command still running when the run was cut, and a failed turn', () => {
    const stdout = [
      JSON.stringify({ type: 'item.started', item: { id: 'item_1', type: 'command_execution', command: 'sleep 99', aggregated_output: '', exit_code: null, status: 'in_progress' } }),
      JSON.stringify({ type: 'turn.failed', error: { message: 'stream disconnected' } }),
    ].join('\n');
    const t = parseCodexExecJson(stdout);
    expect(t.calls).toEqual([{ id: 'item_1', tool: 'command_execution', input: { command: 'sleep 99' }, command: 'sleep 99', parent: null, result: null }]);
    expect(t.final).toEqual({ subtype: 'failed', is_error: true, text: 'stream disconnected', num_turns: null });
  });
});
