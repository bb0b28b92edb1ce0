import { describe, expect, it } from 'vitest';
import { agentTools, checkToolCall, CONFIRMING_SHELL_TOOL_SPEC, SHELL_TOOL_SPEC, shellArgv } from './tools.ts';

describe('checkToolCall', () => {
  it.each([
    [{ id: 'a', name: 'shell', args: { command: 'ls' } }, { valid: true, args: { command: 'ls' } }],
    [{ id: 'a', name: 'shell', args: { command: 'sleep 1', timeout_sec: 5 } }, { valid: true, args: { command: 'sleep 1', timeout_sec: 5 } }],
  ])('accepts %j', (call, expected) => {
    expect(checkToolCall(call)).toEqual(expected);
  });

  it.each([
    [{ id: 'a', name: 'bash', args: { command: 'ls' } }, /unknown tool "bash"/],
    [{ id: 'a', name: 'shell', args: '{"command": "ls"', parseError: 'Unexpected end of JSON input' }, /could not be parsed: Unexpected end/],
    [{ id: 'a', name: 'shell', args: {} }, /command/],
    [{ id: 'a', name: 'shell', args: { command: '   ' } }, /command: must not be empty/],
    [{ id: 'a', name: 'shell', args: { command: 'echo a\u0000b' } }, /command: must not contain a NUL byte/],
    [{ id: 'a', name: 'shell', args: { command: `echo ${'é'.repeat(70_000)}` } }, /command: must be under 128 KiB/],
    [{ id: 'a', name: 'shell', args: { command: 42 } }, /command/],
    [{ id: 'a', name: 'shell', args: { command: 'ls', timeout_sec: -1 } }, /timeout_sec/],
    [{ id: 'a', name: 'shell', args: { command: 'ls', cwd: '/tmp' } }, /cwd/],
    [{ id: 'a', name: 'shell', args: ['ls'] }, /invalid arguments/],
  ])('rejects %j', (call, reason) => {
    const checked = checkToolCall(call);
    expect(checked.valid).toBe(false);
    if (!checked.valid) expect(checked.reason).toMatch(reason);
  });
});

describe('the shell tool', () => {
  it('runs the command through bash -c as one argv element', () => {
    expect(shellArgv({ command: 'echo "a b" | wc -c' })).toEqual(['bash', '-c', 'echo "a b" | wc -c']);
  });

  it('offers a JSON schema with command required and no $schema keyword', () => {
    expect(SHELL_TOOL_SPEC.parameters).toMatchObject({ type: 'object', required: ['command'], additionalProperties: false });
    expect(SHELL_TOOL_SPEC.parameters).not.toHaveProperty('$schema');
  });
});

describe('structured confirmations', () => {
  const confirmation = { action: 'write', targets: ['/app/x'], justification: 'asked for' };

  it('validate only when the defense takes them', () => {
    const c = { id: 'a', name: 'shell', args: { command: 'touch /app/x', confirmation } };
    expect(checkToolCall(c, { confirmation: true })).toEqual({ valid: true, args: { command: 'touch /app/x', confirmation } });
    expect(checkToolCall(c)).toMatchObject({ valid: false, reason: expect.stringMatching(/confirmation/) as unknown });
  });

  it.each([
    [{ action: 'write', targets: [], justification: 'x' }, /targets/],
    [{ action: ' ', targets: ['/a'], justification: 'x' }, /action: must not be empty/],
    [{ action: 'write', targets: ['/a'] }, /justification/],
    [{ action: 'write', targets: ['/a'], justification: 'x', extra: 1 }, /extra/],
  ])('rejects the confirmation %j', (bad, reason) => {
    const checked = checkToolCall({ id: 'a', name: 'shell', args: { command: 'ls', confirmation: bad } }, { confirmation: true });
    expect(checked.valid).toBe(false);
    if (!checked.valid) expect(checked.reason).toMatch(reason);
  });

  it('are offered on the tool only when the defense takes them', () => {
    expect(agentTools()).toEqual([SHELL_TOOL_SPEC]);
    expect(agentTools({ confirmation: true })).toEqual([CONFIRMING_SHELL_TOOL_SPEC]);
    expect(CONFIRMING_SHELL_TOOL_SPEC.parameters).toMatchObject({ required: ['command'], properties: { confirmation: { required: ['action', 'targets', 'justification'] } } });
  });
});
