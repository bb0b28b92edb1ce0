/**
 * A derivation plus task facts → the gold file; a gold file → the policy the
 * oracle is replayed under (sufficiency) and the `gold` baseline policy.
 */
import { AUTHBENCH_VERSION } from '../core/index.ts';
import type { NetworkSection, Policy } from '../sandbox/policy/index.ts';
import { isLoopbackHost, isServiceHost } from '../sandbox/policy/index.ts';
import { emptyAxes, mapAxes, type AxisLists } from './axes.ts';
import type { Derivation } from './derive.ts';
import {
  DERIVATION_RULES_VERSION,
  GOLD_SCHEMA_VERSION,
  canonicalGold,
  type GoldFile,
  type GoldNetwork,
  type Provenance,
} from './schema.ts';

export interface TraceProvenance {
  image_digest: string;
  solve_sh_sha256: string;
  strace_version?: string | undefined;
  /** Which tracer watched the oracle, its version, and why eBPF fell back to strace. */
  tracer?: Provenance['tracer'];
  bpftrace_version?: string | undefined;
  ebpf_backend?: Provenance['ebpf_backend'];
  ab_ebpf_version?: string | undefined;
  tracer_fallback?: string | undefined;
  /** How many oracle runs went into the derivation (1 for a single run; mergeRuns sums). */
  runs?: number | undefined;
}

export interface BuildGoldOptions {
  taskId: string;
  /** The task spec's sensitive_permissions, if any. */
  sensitive?: AxisLists | undefined;
  provenance: TraceProvenance;
}

export function buildGold(derivation: Derivation, options: BuildGoldOptions): GoldFile {
  const provenance: Provenance = {
    source: 'oracle-trace',
    image_digest: options.provenance.image_digest,
    solve_sh_sha256: options.provenance.solve_sh_sha256,
    authbench_version: AUTHBENCH_VERSION,
    runs: options.provenance.runs ?? 1,
    derivation_rules_version: DERIVATION_RULES_VERSION,
    ...(options.provenance.strace_version === undefined ? {} : { strace_version: options.provenance.strace_version }),
    ...(options.provenance.tracer === undefined ? {} : { tracer: options.provenance.tracer }),
    ...(options.provenance.bpftrace_version === undefined ? {} : { bpftrace_version: options.provenance.bpftrace_version }),
    ...(options.provenance.ebpf_backend === undefined ? {} : { ebpf_backend: options.provenance.ebpf_backend }),
    ...(options.provenance.ab_ebpf_version === undefined ? {} : { ab_ebpf_version: options.provenance.ab_ebpf_version }),
    ...(options.provenance.tracer_fallback === undefined ? {} : { tracer_fallback: options.provenance.tracer_fallback }),
  };
  return canonicalGold({
    schema_version: GOLD_SCHEMA_VERSION,
    task_id: options.taskId,
    required: derivation.required,
    support: derivation.support,
    directories: derivation.directories,
    implicit: derivation.implicit,
    scored_roots: derivation.scored_roots,
    sensitive: options.sensitive ?? emptyAxes(),
    network: derivation.network,
    ephemeral: derivation.ephemeral,
    flaky: emptyAxes(),
    provenance,
  });
}

/** The sets a gold policy grants, as one policy-shaped value (no network). */
export type GoldSets = Pick<GoldFile, 'required' | 'support' | 'directories' | 'ephemeral' | 'flaky' | 'implicit' | 'network'>;

/**
 * The enforced gold policy: required ∪ support ∪ directories ∪ ephemeral ∪
 * flaky ∪ implicit, deduplicated and sorted. Network: absent when the oracle
 * made no IP socket (= no network); otherwise the loopback and sidecar TCP
 * endpoints it connected to (a sidecar by service name: gold/sidecar-hosts.ts
 * renamed its address) and the non-zero ports it bound. Any other address is
 * left out: it names no host a policy can grant (no route outside).
 */
export function goldPolicy(gold: GoldSets): Policy {
  const sets: AxisLists = mapAxes((axis) => [
    ...gold.required[axis],
    ...gold.support[axis],
    ...gold.directories[axis],
    ...gold.ephemeral[axis],
    ...gold.flaky[axis],
    ...gold.implicit[axis],
  ]);
  const network = policyNetwork(gold.network);
  return network === undefined ? sets : { ...sets, network };
}

function policyNetwork(n: GoldNetwork): NetworkSection | undefined {
  if (!n.ip_sockets && n.connect.length === 0 && n.bind.length === 0 && n.send.length === 0) return undefined;
  const seen = new Set<string>();
  const tcp_connect: NetworkSection['tcp_connect'] = [];
  for (const e of n.connect) {
    const key = `${e.address} ${e.port}`;
    if (e.port < 1 || !(isLoopbackHost(e.address) || isServiceHost(e.address)) || seen.has(key)) continue;
    seen.add(key);
    tcp_connect.push({ host: e.address, port: e.port });
  }
  const tcp_bind = [...new Set(n.bind.filter((e) => e.port >= 1).map((e) => e.port))].sort((a, b) => a - b);
  return { tcp_connect, tcp_bind, allow_all: false };
}
