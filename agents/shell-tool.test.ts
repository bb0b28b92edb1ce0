import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { agentShellMapping, getAgent, MODEL_SHELL_TOOL, shellToolMapping } from './index.ts';

describe('the agent’s shell tool as the model’s shell', () => {
  it('Claude Code: shell {command, timeout_sec} ⇄ Bash {command, timeout in ms}', () => {
    const m = agentShellMapping(getAgent('claude-code'));
    expect([m.modelTool, m.agentTool]).toEqual([MODEL_SHELL_TOOL, 'Bash']);
    expect(m.toAgent({ command: 'ls -la', timeout_sec: 2.5 })).toEqual({ command: 'ls -la', timeout: 2500 });
    expect(m.toAgent({ command: 'ls' })).toEqual({ command: 'ls' });
    expect(m.toModel({ command: 'ls', timeout: 1500, description: 'list' })).toEqual({ command: 'ls', timeout_sec: 1.5 });
    expect(m.toModel({ command: 'ls', description: 'list' })).toEqual({ command: 'ls' });
  });

  it('Codex: shell {command} ⇄ exec_command {cmd}, no timeout argument', () => {
    const m = agentShellMapping(getAgent('codex'));
    expect(m.agentTool).toBe('exec_command');
    expect(m.toAgent({ command: 'ls', timeout_sec: 5 })).toEqual({ cmd: 'ls' });
    expect(m.toModel({ cmd: 'ls', yield_time_ms: 1000 })).toEqual({ command: 'ls' });
  });

  it('follows the adapter’s data: another argument name, seconds, or no timeout at all', () => {
    const secs = shellToolMapping({ name: 'run', command: 'cmd', timeout: { arg: 'secs', unit: 's' } });
    expect(secs.toAgent({ command: 'id', timeout_sec: 3 })).toEqual({ cmd: 'id', secs: 3 });
    expect(secs.toModel({ cmd: 'id', secs: 3 })).toEqual({ command: 'id', timeout_sec: 3 });
    const none = shellToolMapping({ name: 'run', command: 'cmd' });
    expect(none.toAgent({ command: 'id', timeout_sec: 3 })).toEqual({ cmd: 'id' });
    expect(none.toAgent('not an object')).toEqual({ cmd: undefined });
  });

  it('refuses an adapter whose shell tool is not mapped', () => {
    expect(() => agentShellMapping(getAgent('openclaw'))).toThrow(AuthbenchError);
    expect(() => agentShellMapping(getAgent('openclaw'))).toThrow(/openclaw: its shell tool is not mapped/);
  });
});
