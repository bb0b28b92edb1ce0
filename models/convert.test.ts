import { describe, expect, it } from 'vitest';
import { argsForReplay, toSdkMessages, toSdkTools } from './convert.ts';

describe('argsForReplay', () => {
  it.each([
    [{ a: 1 }, { a: 1 }],
    ['{bad', { invalid_arguments: '{bad' }],
    [[1, 2], { invalid_arguments: '[1,2]' }],
    [42, { invalid_arguments: '42' }],
    [null, { invalid_arguments: 'null' }],
    [undefined, { invalid_arguments: '' }],
  ])('%j', (args, want) => {
    expect(argsForReplay(args)).toEqual(want);
  });
});

describe('toSdkMessages', () => {
  it('maps each transcript entry to one SDK message', () => {
    expect(
      toSdkMessages([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'just text' },
        { role: 'assistant', content: '', toolCalls: [{ id: '1', name: 't', args: { x: 1 } }] },
        { role: 'tool', toolCallId: '1', toolName: 't', content: 'out' },
        { role: 'tool', toolCallId: '2', toolName: 't', content: 'denied', isError: true },
      ]),
    ).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'just text' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: '1', toolName: 't', input: { x: 1 } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: '1', toolName: 't', output: { type: 'text', value: 'out' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: '2', toolName: 't', output: { type: 'error-text', value: 'denied' } }] },
    ]);
  });
});

describe('toSdkTools', () => {
  it('offers tools the SDK can neither execute nor validate', () => {
    const tools = toSdkTools([{ name: 'bash', description: 'd', parameters: { type: 'object' } }]);
    const bash = tools['bash']!;
    expect(bash.execute).toBeUndefined();
    expect(bash.description).toBe('d');
  });
});
