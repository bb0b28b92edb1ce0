import { describe, expect, it } from 'vitest';
import { AGENT_PREFIX, getAgent, headlessCommand, versionCommand } from './index.ts';

const input = { instruction: 'Summarise /app/logs', model: 'claude-sonnet-4-6', relayUrl: 'http://127.0.0.1:4000/' };

describe('headless commands', () => {
  it('Claude Code: the bin in the prefix, the instruction one element after `--`, the relay as base URL', () => {
    const { argv, env } = headlessCommand(getAgent('claude-code'), input);
    expect(argv).toEqual([
      `${AGENT_PREFIX}/bin/claude`, '-p', '--model', 'claude-sonnet-4-6', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--', 'Summarise /app/logs',
    ]);
    expect(env['ANTHROPIC_BASE_URL']).toBe('http://127.0.0.1:4000');
    expect(env['ANTHROPIC_API_KEY']).toBe('sk-authbench-relay');
    // Its background model is the run's model: the only one the relay serves.
    expect(env['ANTHROPIC_DEFAULT_HAIKU_MODEL']).toBe('claude-sonnet-4-6');
    expect(env['PATH']?.startsWith(`${AGENT_PREFIX}/bin:`)).toBe(true);
  });

  it('Codex: the OpenAI base URL gets /v1, and a provider of its own on the command line points at the relay', () => {
    const { argv, env } = headlessCommand(getAgent('codex'), { ...input, model: 'gpt-5' });
    expect(argv.slice(0, 4)).toEqual([`${AGENT_PREFIX}/bin/node`, `${AGENT_PREFIX}/bin/codex`, 'exec', '--json']);
    expect(argv.at(-1)).toBe('Summarise /app/logs');
    expect(env['OPENAI_BASE_URL']).toBe('http://127.0.0.1:4000/v1');
    expect(argv).toContain('model_providers.authbench.base_url="http://127.0.0.1:4000/v1"');
    expect(argv).toContain('model_provider="authbench"');
  });

  it('passes an instruction as written: placeholders and shell syntax in it are not expanded', () => {
    const instruction = "-rf {model} {relay} $(id) 'quoted' {instruction}";
    const { argv } = headlessCommand(getAgent('openclaw'), { ...input, instruction });
    expect(argv.at(-1)).toBe(instruction);
    expect(argv.at(-2)).toBe('--');
    expect(argv.filter((a) => a === 'claude-sonnet-4-6')).toHaveLength(1);
  });

  it('refuses a relay URL that is not http(s)://host', () => {
    expect(() => headlessCommand(getAgent('codex'), { ...input, relayUrl: 'file:///etc/passwd' })).toThrow(/relay URL/);
  });

  it('probes the version with the prefix bin, a Node script through the layer’s node', () => {
    expect(versionCommand(getAgent('codex')).argv).toEqual([`${AGENT_PREFIX}/bin/node`, `${AGENT_PREFIX}/bin/codex`, '--version']);
    expect(versionCommand(getAgent('claude-code')).argv).toEqual([`${AGENT_PREFIX}/bin/claude`, '--version']);
  });
});
