import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { AgentAdapterSchema, AGENT_PREFIX, getAgent, listAgents, RELAY_KEY_PLACEHOLDER, withRuntimeGrant } from './index.ts';

describe('the agent registry', () => {
  it('has claude-code, codex and openclaw, sorted, each a valid adapter with an exact version', () => {
    const agents = listAgents();
    expect(agents.map((a) => a.name)).toEqual(['claude-code', 'codex', 'openclaw']);
    for (const a of agents) {
      expect(AgentAdapterSchema.parse(a)).toEqual(a);
      expect(a.install.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(a.headless[0]).toBe(a.install.bin);
      expect(a.headless).toContain('{instruction}');
      // The prompts it turns off are on its command line.
      for (const flag of a.promptsOff.flags) expect(a.headless).toContain(flag);
    }
  });

  it('never carries an API key: key variables hold the relay placeholder', () => {
    for (const a of listAgents()) {
      for (const [name, value] of Object.entries(a.env)) if (name.endsWith('_API_KEY')) expect(value).toBe(RELAY_KEY_PLACEHOLDER);
    }
  });

  it('refuses a version range and an unknown agent', () => {
    const claude = getAgent('claude-code');
    expect(AgentAdapterSchema.safeParse({ ...claude, install: { ...claude.install, version: '^2.1.0' } }).success).toBe(false);
    expect(() => getAgent('nope')).toThrow(AuthbenchError);
    try {
      getAgent('nope');
    } catch (e) {
      expect((e as AuthbenchError).exitCode).toBe(1);
      expect((e as AuthbenchError).hint).toContain('claude-code, codex, openclaw');
    }
  });

  it('adds the runtime grant to a policy without duplicates, keeping its network section', () => {
    const agent = getAgent('codex');
    const policy = { read: ['/app/**', `${AGENT_PREFIX}/**`], write: ['/app/out/**'], execute: ['/usr/bin/python3'], network: { tcp_connect: [{ host: '127.0.0.1', port: 4000 }], tcp_bind: [], allow_all: false } };
    const merged = withRuntimeGrant(policy, agent);
    expect(merged.read).toEqual(['/app/**', `${AGENT_PREFIX}/**`, '/etc/ssl/openssl.cnf']);
    expect(merged.write).toEqual(['/app/out/**', '/root/.codex/**']);
    expect(merged.execute).toEqual(['/usr/bin/python3', `${AGENT_PREFIX}/**`]);
    expect(merged.network).toEqual(policy.network);
  });
});
