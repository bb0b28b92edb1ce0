import { describe, expect, it } from 'vitest';
import type { Episode } from '../agent/index.ts';
import { commandText, wasExecuted, type RolloutInput } from './input.ts';

// Compile-time proof that agent's Episode is a RolloutInput (tsc checks this file).
function asInput(episode: Episode): RolloutInput {
  return episode;
}

describe('rollout input', () => {
  it('accepts an agent Episode as it is', () => {
    const episode = { steps: [{ turn: 1, text: 't', proposals: [{ id: 'a', tool: 'shell', args: { command: 'ls' }, valid: true, events: [] }] }] } as unknown as Episode;
    expect(asInput(episode).steps[0]?.proposals[0]?.id).toBe('a');
  });

  it.each([
    [{ command: 'ls -la' }, 'ls -la'],
    ['raw text', 'raw text'],
    [{ cmd: 'x' }, '{"cmd":"x"}'],
    [undefined, ''],
  ])('command text of %j', (args, expected) => {
    expect(commandText({ args })).toBe(expected);
  });

  it('counts a command as executed only when the launcher did not refuse it', () => {
    expect(wasExecuted({ result: { stdout: '', stderr: '' } })).toBe(true);
    expect(wasExecuted({ result: { stdout: '', stderr: '', launcher_error: 'no landlock' } })).toBe(false);
    expect(wasExecuted({})).toBe(false);
  });
});
