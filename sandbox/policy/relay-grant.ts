/** The one network grant an installed agent needs: its model relay's loopback port (taskenv/relay-forward.ts). */
import type { Policy } from './schema.ts';

/** Where the relay forwarder listens inside a task container. */
export const RELAY_HOST = '127.0.0.1';

/**
 * The policy plus `tcp_connect 127.0.0.1:PORT`, so a sandboxed agent can reach its model relay and
 * nothing else the policy did not already allow. A policy without a network section gets one with
 * this entry alone (IPv4 stream sockets become possible, every other port stays denied); an
 * `allow_all` policy and one that already grants the port are returned unchanged.
 */
export function withRelayGrant(policy: Policy, port: number): Policy {
  const network = policy.network ?? { tcp_connect: [], tcp_bind: [], allow_all: false };
  if (network.allow_all || network.tcp_connect.some((c) => c.host === RELAY_HOST && c.port === port)) return policy;
  return { ...policy, network: { ...network, tcp_connect: [...network.tcp_connect, { host: RELAY_HOST, port }] } };
}
