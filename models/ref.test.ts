import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { ModelRefSchema, formatModelRef, parseModelRef } from './ref.ts';

describe('parseModelRef', () => {
  it.each([
    ['gpt-5', { provider: 'openai', name: 'gpt-5' }],
    ['openai/gpt-5', { provider: 'openai', name: 'gpt-5' }],
    ['  anthropic/claude-sonnet-4-5 ', { provider: 'anthropic', name: 'claude-sonnet-4-5' }],
    ['openai-compatible/meta-llama/Llama-3.1-8B-Instruct', { provider: 'openai-compatible', name: 'meta-llama/Llama-3.1-8B-Instruct' }],
    ['openai-compatible/llama3.1:8b', { provider: 'openai-compatible', name: 'llama3.1:8b' }],
    ['scripted/oracle', { provider: 'scripted', name: 'oracle' }],
  ])('%s', (text, want) => {
    const ref = parseModelRef(text);
    expect(ref).toEqual(want);
    expect(ModelRefSchema.parse(ref)).toEqual(want);
  });

  it('round-trips through formatModelRef', () => {
    expect(formatModelRef(parseModelRef('gpt-5'))).toBe('openai/gpt-5');
    expect(parseModelRef(formatModelRef({ provider: 'openai-compatible', name: 'a/b' }))).toEqual({ provider: 'openai-compatible', name: 'a/b' });
  });

  it.each([
    ['', /empty/],
    ['mistral/large', /unknown provider "mistral" \(valid providers: openai, anthropic, openai-compatible, scripted\)/],
    ['openai/', /missing model name/],
    ['openai/gpt 5', /whitespace/],
    ['/gpt-5', /unknown provider ""/],
  ])('rejects %j', (text, why) => {
    let err: unknown;
    try {
      parseModelRef(text, '--policy-model');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AuthbenchError);
    const e = err as AuthbenchError;
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toMatch(/^--policy-model /);
    expect(e.message).toMatch(why);
    expect(e.hint).toBeDefined();
  });

  it('suggests openai-compatible for a bare name with a slash', () => {
    expect(() => parseModelRef('meta-llama/Llama-3')).toThrow(AuthbenchError);
    try {
      parseModelRef('meta-llama/Llama-3');
    } catch (e) {
      expect((e as AuthbenchError).hint).toContain('openai-compatible/meta-llama/Llama-3');
    }
  });
});
