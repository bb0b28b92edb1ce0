/**
 * Which networks a rollout's containers join, so that the policy's network
 * axis holds at host granularity. Landlock filters TCP by port only, so two
 * sidecars on one port cannot be told apart in the kernel; the network does
 * it instead: every sidecar service gets an internal network of its own, a
 * sidecar also joins the networks of the services it depends on (it must
 * reach them), and the task container joins only the networks of the
 * services it may reach. What the task container can then reach is every
 * member of those networks — the named service, plus any sidecar that
 * depends on it (it sits on that network to reach it) — and that set is what
 * is reported. Pure.
 */

export interface NetworkedService {
  service: string;
  dependsOn: readonly { service: string }[];
}

export interface SidecarNetworkPlan {
  /** Per sidecar, the services whose networks it joins: its own first, then its dependencies'. */
  joins: ReadonlyMap<string, readonly string[]>;
  /** The services whose networks the task container joins (sorted). */
  main: readonly string[];
  /** Every sidecar the task container can reach through those networks (sorted). */
  reachable: readonly string[];
}

/**
 * Plan the networks for `sidecars` when the task container may reach `access`
 * ('all', or service names; names that are no sidecar of the task reach nothing).
 */
export function planSidecarNetworks(sidecars: readonly NetworkedService[], access: 'all' | readonly string[]): SidecarNetworkPlan {
  const names = new Set(sidecars.map((s) => s.service));
  const joins = new Map<string, string[]>();
  for (const s of sidecars) joins.set(s.service, [s.service, ...new Set(s.dependsOn.map((d) => d.service).filter((d) => names.has(d) && d !== s.service))]);
  const main = (access === 'all' ? [...names] : [...new Set(access)].filter((a) => names.has(a))).sort();
  const attached = new Set(main);
  const reachable = [...joins].filter(([, nets]) => nets.some((n) => attached.has(n))).map(([service]) => service).sort();
  return { joins, main, reachable };
}
