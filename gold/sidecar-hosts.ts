/**
 * A compose task's sidecars have a new address every rollout, so a traced
 * connect() to one is recorded by the sidecar's service name, the name a
 * policy grants it by (`{ "host": "metadata-mock", "port": 8081 }`). Without
 * this the gold would drift on every derivation and name a host no policy
 * can. The address → service map comes from the rollout's sidecars
 * (taskenv: `TaskSidecars.hosts()`). Pure.
 */
import { canonicalNetwork, type Endpoint, type GoldNetwork } from './schema.ts';

/** The network use with every endpoint at a sidecar's address renamed to its service. */
export function nameSidecarEndpoints(network: GoldNetwork, hosts: ReadonlyMap<string, string>): GoldNetwork {
  if (hosts.size === 0) return network;
  const rename = (e: Endpoint): Endpoint => {
    const service = hosts.get(e.address);
    return service === undefined ? e : { ...e, address: service };
  };
  return canonicalNetwork({ ...network, connect: network.connect.map(rename), send: network.send.map(rename) });
}
