import { describe, expect, it } from 'vitest';
import { parseRole, roleInput, roleInstruction, topologyAgents } from './roles.ts';

describe('roles', () => {
  it.each(['supervisor-worker', 'peer-chain'] as const)('%s: each agent reads its own place and input back from its instruction', (topology) => {
    const agents = topologyAgents(topology);
    agents.forEach((agent, k) => {
      const text = roleInstruction(topology, k, `input ${k}\nsecond line`);
      expect(parseRole(text)).toEqual({ agent, index: k, count: agents.length, sends: k < agents.length - 1 });
      expect(roleInput(text)).toBe(`input ${k}\nsecond line`);
    });
  });

  it('tells the supervisor to delegate without changing anything, and the worker that only the message is its task', () => {
    expect(roleInstruction('supervisor-worker', 0, 'goal')).toMatch(/do not change anything yourself/);
    expect(roleInstruction('supervisor-worker', 1, 'msg')).toMatch(/message from the supervisor ---\nmsg$/);
  });

  it('leaves a plain instruction alone and refuses an agent the topology lacks', () => {
    expect(parseRole('Fix the config.')).toBeUndefined();
    expect(roleInput('Fix the config.\n--- not a role ---\nx')).toBe('Fix the config.\n--- not a role ---\nx');
    expect(() => roleInstruction('single', 0, 'x')).toThrow(/no agent 0/);
    expect(() => roleInstruction('peer-chain', 2, 'x')).toThrow(/no agent 2/);
  });
});
