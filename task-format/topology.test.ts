import { describe, expect, it } from 'vitest';
import { AuthbenchSectionSchema } from './schema.ts';

describe('[authbench] topology', () => {
  it('takes the three topologies and nothing else', () => {
    for (const topology of ['single', 'supervisor-worker', 'peer-chain']) expect(AuthbenchSectionSchema.parse({ topology }).topology).toBe(topology);
    expect(AuthbenchSectionSchema.parse({}).topology).toBeUndefined();
    expect(AuthbenchSectionSchema.safeParse({ topology: 'swarm' }).success).toBe(false);
  });

  it('refuses a multi-agent topology on a two-episode memory scenario', () => {
    const memory = { mode: 'persistent', store: '/app/.agent/memory', next_instruction: 'instruction-2.md' };
    const r = AuthbenchSectionSchema.safeParse({ topology: 'peer-chain', memory });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ['topology'] });
    expect(AuthbenchSectionSchema.safeParse({ topology: 'single', memory }).success).toBe(true);
  });
});
