/** The network grant a policy naming allowlisted external hosts needs: the egress proxy's port (taskenv/egress.ts). */
import type { Policy } from './schema.ts';

/** The rollout's egress proxy: where it listens, and the external hosts it forwards to (lower case). */
export interface EgressGrant {
  host: string;
  port: number;
  served: readonly string[];
}

/**
 * The policy plus `tcp_connect PROXY:PORT` when it names a host the proxy serves: the task
 * container connects to the proxy, never to that host, so Landlock (ports only) must let that
 * connection through; the proxy tells the hosts apart. Unchanged otherwise — no such host,
 * no network section, `allow_all`, or the grant already there.
 */
export function withEgressGrant(policy: Policy, egress: EgressGrant): Policy {
  const network = policy.network;
  if (network === undefined || network.allow_all) return policy;
  const served = new Set(egress.served);
  if (!network.tcp_connect.some((c) => served.has(c.host.toLowerCase().replace(/\.$/, '')))) return policy;
  if (network.tcp_connect.some((c) => c.host === egress.host && c.port === egress.port)) return policy;
  return { ...policy, network: { ...network, tcp_connect: [...network.tcp_connect, { host: egress.host, port: egress.port }] } };
}
