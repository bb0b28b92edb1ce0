/**
 * The external hosts a task container reaches, through the rollout's egress
 * proxy (docker/egress-proxy.ts): those task.toml's allowlist names, narrowed
 * to those the policy's `tcp_connect` names when the kernel enforces a policy
 * (the same access list that picks sidecars, taskenv/sidecars.ts). The task
 * container connects to the proxy, never to the host itself, so an enforced
 * policy that names an external host also needs the proxy's port: Landlock
 * filters by port only, and the proxy then tells the hosts apart (the session
 * adds it: sandbox/policy's withEgressGrant). Pure.
 */
import { compareStrings } from '../core/index.ts';
import type { EgressDecision, EgressRule } from '../docker/index.ts';
import { declaredExternalHosts, type Task } from '../task-format/index.ts';
import type { SidecarAccess } from './sidecars.ts';

/** What the proxy forwards to under `access` ('all': the whole allowlist); empty: no proxy at all. */
export function taskEgressRules(task: Pick<Task, 'network'>, access: SidecarAccess): EgressRule[] {
  const declared = declaredExternalHosts(task.network);
  if (access === 'all') return declared.map((h) => ({ ...h }));
  // Host names are case-insensitive; the allowlist is lower case already (task-format/network.ts).
  const named = new Set(access.map((h) => h.toLowerCase().replace(/\.$/, '')));
  return declared.filter((h) => named.has(h.host)).map((h) => ({ ...h }));
}

/** The rules as result.json records them: `host` (any port) or `host:port`, in rule order. Pure. */
export function egressRuleLabels(rules: readonly EgressRule[]): string[] {
  return rules.flatMap((r) => (r.ports === undefined ? [r.host] : r.ports.map((p) => `${r.host}:${String(p)}`)));
}

/** What the proxy did, per endpoint (`host:port`, sorted, each once): forwarded, and refused with 403. Pure. */
export function summarizeEgress(decisions: readonly EgressDecision[]): { forwarded: string[]; refused: string[] } {
  const endpoints = (verdict: EgressDecision['verdict']): string[] =>
    [...new Set(decisions.filter((d) => d.verdict === verdict && d.host !== undefined).map((d) => `${d.host ?? ''}:${String(d.port ?? '')}`))].sort(compareStrings);
  return { forwarded: endpoints('allowed'), refused: endpoints('refused') };
}
