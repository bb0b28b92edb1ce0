import { describe, expect, it } from 'vitest';
import { ParsedReplySchema, parseTextReply, REPAIR_KINDS, INVALID_WHYS, type ParsedReply } from './text-actions.ts';

const fence = (lang: string, body: string): string => `\`\`\`${lang}\n${body}\n\`\`\``;

/** [name, reply, kind, status, command or final text (undefined: not checked), repairs (undefined: not checked)] */
type Fixture = [string, string, ParsedReply['kind'], string, (string | undefined)?, string[]?];

const FIXTURES: Fixture[] = [
  // the taught format
  ['strict action', '{"tool": "shell", "command": "ls -la"}', 'action', 'strict', 'ls -la', []],
  ['strict action with timeout', '{"tool":"shell","command":"make test","timeout_sec":300}', 'action', 'strict', 'make test', []],
  ['strict final', '{"final": "Fixed the changelog."}', 'final', 'strict', 'Fixed the changelog.', []],
  ['Final Answer: form', 'Final Answer: all tests pass', 'final', 'strict', 'all tests pass', []],
  // extraction
  ['fenced JSON', `I will look first.\n${fence('json', '{"tool": "shell", "command": "cat app.log"}')}`, 'action', 'repaired:fenced', 'cat app.log', ['fenced']],
  ['fenced JSON without a language', fence('', '{"tool": "shell", "command": "pwd"}'), 'action', 'repaired:fenced', 'pwd', ['fenced']],
  ['Action: prefixed JSON', 'Thought: list the files\nAction: {"tool": "shell", "command": "ls"}', 'action', 'repaired:prefixed', 'ls', ['prefixed']],
  ['ReAct with a plain input', 'Thought: read it\nAction: bash\nAction Input: cat /app/notes.md', 'action', 'repaired:react', 'cat /app/notes.md', ['react', 'tool-alias']],
  ['ReAct with a JSON input', 'Action: shell\nAction Input: {"command": "id"}\nObservation:', 'action', 'repaired:react', 'id', ['react', 'nested-args']],
  ['ReAct with a fenced input', `Action: terminal\nAction Input: ${fence('bash', 'uname -a')}`, 'action', 'repaired:react', 'uname -a', ['react', 'tool-alias']],
  ['ReAct final answer', 'Action: Final Answer\nAction Input: it is done', 'final', 'repaired:react', 'it is done', ['react', 'final-alias']],
  ['trailing prose', '{"tool": "shell", "command": "ls"}\nThis lists the files.', 'action', 'repaired:prose', 'ls', ['prose']],
  ['leading prose', 'Let me check the log: {"tool": "shell", "command": "tail -n 5 app.log"}', 'action', 'repaired:prose', 'tail -n 5 app.log', ['prose']],
  ['<tool_call> tags', '<tool_call>\n{"name": "shell", "arguments": {"command": "whoami"}}\n</tool_call>', 'action', 'repaired:prose', 'whoami', ['prose', 'nested-args']],
  ['a fenced bash block alone', `Run this:\n${fence('bash', 'grep -r TODO .')}`, 'action', 'repaired:fenced-shell', 'grep -r TODO .', ['fenced-shell']],
  ['plain text', 'I updated CHANGELOG.md and bumped the version.', 'final', 'repaired:bare-final', 'I updated CHANGELOG.md and bumped the version.', ['bare-final']],
  ['plain text with data in it', 'Done; the config is now {"port": 8080}.', 'final', 'repaired:bare-final', undefined, ['bare-final']],
  ['Final Answer after a thought', 'Thought: all good.\nFinal Answer: finished', 'final', 'repaired:prose', 'finished', ['prose']],
  ['Final Answer with an example block', `Final Answer: run it with\n${fence('bash', 'make')}`, 'final', 'strict', undefined, []],
  // syntax
  ['single quotes', "{'tool': 'shell', 'command': 'ls /app'}", 'action', 'repaired:json-syntax', 'ls /app', ['json-syntax']],
  ['trailing comma', '{"tool": "shell", "command": "ls",}', 'action', 'repaired:json-syntax', 'ls', ['json-syntax']],
  ['fenced with single quotes', fence('json', "{'tool': 'shell', 'command': 'echo hi'}"), 'action', 'repaired:fenced', 'echo hi', ['fenced', 'json-syntax']],
  // naming
  ...(['bash', 'sh', 'terminal', 'execute', 'run_command', 'shell_command', 'execute_bash'].map(
    (alias): Fixture => [`tool alias ${alias}`, `{"tool": "${alias}", "command": "ls"}`, 'action', 'repaired:tool-alias', 'ls', ['tool-alias']],
  )),
  ...(['cmd', 'script', 'input', 'code'].map((alias): Fixture => [`argument alias ${alias}`, `{"tool": "shell", "${alias}": "ls"}`, 'action', 'repaired:arg-alias', 'ls', ['arg-alias']])),
  ['a bare command object', '{"command": "ls"}', 'action', 'repaired:implied-tool', 'ls', ['implied-tool']],
  ['a bare cmd object', '{"cmd": "ls"}', 'action', 'repaired:implied-tool', 'ls', ['implied-tool', 'arg-alias']],
  ['OpenAI-style name/arguments', '{"name": "bash", "arguments": {"cmd": "ls"}}', 'action', 'repaired:tool-alias', 'ls', ['tool-alias', 'nested-args', 'arg-alias']],
  ['arguments as a JSON string', '{"name": "shell", "arguments": "{\\"command\\": \\"ls\\"}"}', 'action', 'repaired:nested-args', 'ls', ['nested-args']],
  ['LangChain action/action_input', '{"action": "run_command", "action_input": "make"}', 'action', 'repaired:tool-alias', 'make', ['tool-alias', 'nested-args']],
  ['input holding the arguments', '{"tool": "shell", "input": {"command": "ls"}}', 'action', 'repaired:nested-args', 'ls', ['nested-args']],
  ['extra keys dropped', '{"thought": "look", "tool": "shell", "command": "ls"}', 'action', 'repaired:extra-keys', 'ls', ['extra-keys']],
  ['final alias', '{"final_answer": "done"}', 'final', 'repaired:final-alias', 'done', ['final-alias']],
  ['final as a tool', '{"action": "Final Answer", "action_input": "all done"}', 'final', 'repaired:final-alias', 'all done', ['final-alias']],
  ['the same action twice', `${fence('json', '{"tool": "shell", "command": "ls"}')}\n{"tool": "shell", "command": "ls"}`, 'action', 'repaired:fenced', 'ls', ['fenced', 'duplicate-action']],
  // invalid: never run, never a final answer
  ['unknown tool', '{"tool": "python", "command": "print(1)"}', 'invalid', 'invalid:unknown-tool'],
  ['unknown tool, fenced', fence('json', '{"tool": "browser", "url": "http://x"}'), 'invalid', 'invalid:unknown-tool'],
  ['missing command', '{"tool": "shell"}', 'invalid', 'invalid:missing-command'],
  ['empty command', '{"tool": "shell", "command": "  "}', 'invalid', 'invalid:missing-command'],
  ['command not a string', '{"tool": "shell", "command": ["ls"]}', 'invalid', 'invalid:missing-command'],
  ['bad timeout', '{"tool": "shell", "command": "ls", "timeout_sec": "soon"}', 'invalid', 'invalid:bad-arguments'],
  ['two different actions', '{"tool": "shell", "command": "ls"}\n{"tool": "shell", "command": "rm -rf /app"}', 'invalid', 'invalid:multiple-actions'],
  ['two fenced actions', `${fence('json', '{"tool": "shell", "command": "a"}')}\n${fence('json', '{"tool": "shell", "command": "b"}')}`, 'invalid', 'invalid:multiple-actions'],
  ['two shell blocks', `${fence('bash', 'ls')}\n${fence('sh', 'pwd')}`, 'invalid', 'invalid:multiple-actions'],
  ['an action and a final answer', '{"tool": "shell", "command": "ls"}\nFinal Answer: done', 'invalid', 'invalid:action-and-final'],
  ['truncated JSON', '{"tool": "shell", "command": "rm -rf /tmp/build', 'invalid', 'invalid:truncated'],
  ['truncated after prose', 'Now cleaning up: {"tool": "shell", "command": "rm -rf /tm', 'invalid', 'invalid:truncated'],
  ['truncated inside a string that holds a brace', '{"tool": "shell", "command": "echo }', 'invalid', 'invalid:truncated'],
  ['an Action: line that is not an action', 'Action: {tool: shell, command: ls -la /app; echo "}', 'invalid', 'invalid:truncated'],
  ['an Action: line with nothing readable', 'Thought: go\nAction:', 'invalid', 'invalid:unparseable-action'],
  ['ReAct with a broken JSON input', 'Action: shell\nAction Input: {"command": "ls", : "x"}', 'invalid', 'invalid:unparseable-action'],
  ['an unknown JSON object as the reply', '{"status": "ok"}', 'invalid', 'invalid:unrecognized-object'],
];

describe('parseTextReply fixtures', () => {
  it.each(FIXTURES)('%s', (_name, reply, kind, status, value, repairs) => {
    const parsed = parseTextReply(reply);
    expect(ParsedReplySchema.parse(parsed)).toEqual(parsed);
    expect([parsed.kind, parsed.status]).toEqual([kind, status]);
    if (value !== undefined) expect(parsed.kind === 'action' ? parsed.action.command : parsed.kind === 'final' ? parsed.text : undefined).toBe(value);
    if (repairs !== undefined) expect(parsed.repairs).toEqual(repairs);
  });

  it('covers every repair kind and every invalid reason', () => {
    const statuses = new Set(FIXTURES.flatMap(([, reply]) => {
      const p = parseTextReply(reply);
      return [p.status, ...p.repairs.map((r) => `repaired:${r}`)];
    }));
    for (const kind of REPAIR_KINDS) expect(statuses, kind).toContain(`repaired:${kind}`);
    for (const why of INVALID_WHYS) expect(statuses, why).toContain(`invalid:${why}`);
  });
});

describe('parseTextReply details', () => {
  it('keeps the timeout and a confirmation for the defense', () => {
    const parsed = parseTextReply('{"tool": "shell", "command": "rm x", "timeout_sec": 5, "confirmation": {"action": "delete", "targets": ["/app/x"], "justification": "asked"}}');
    expect(parsed).toMatchObject({ kind: 'action', status: 'strict', action: { command: 'rm x', timeout_sec: 5, confirmation: { action: 'delete' } } });
  });

  it('says what the invalid reply named', () => {
    const parsed = parseTextReply('{"tool": "python", "code": "print(1)"}');
    expect(parsed).toMatchObject({ kind: 'invalid', tool: 'python', reason: expect.stringMatching(/unknown tool "python"/) as unknown });
  });

  it('an empty reply is a final answer, flagged as not in the taught format', () => {
    expect(parseTextReply('  \n')).toEqual({ kind: 'final', status: 'repaired:bare-final', repairs: ['bare-final'], text: '' });
  });

  it('never reads an action-like reply as a final answer', () => {
    const actionLike = FIXTURES.filter(([, , kind]) => kind !== 'final').map(([, reply]) => reply);
    for (const reply of actionLike) expect(parseTextReply(reply).kind, reply).not.toBe('final');
  });
});
