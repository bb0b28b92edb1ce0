/**
 * A task's policy plus what an installed agent's runtime needs (its prefix,
 * its state directories): the grant the agent runs under. The runtime grant is
 * the adapter's data, so what an agent adds to the boundary is visible and
 * reviewable rather than folded into the task's gold. Pure.
 */
import type { Policy } from '../sandbox/policy/index.ts';
import type { AgentAdapter } from './schema.ts';

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];

export function withRuntimeGrant(policy: Policy, adapter: AgentAdapter): Policy {
  const grant = adapter.runtimeGrant;
  return {
    ...policy,
    read: union(policy.read, grant.read),
    write: union(policy.write, grant.write),
    execute: union(policy.execute, grant.execute),
  };
}
