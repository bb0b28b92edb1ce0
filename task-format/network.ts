/**
 * What a Harbor task declares about its network (task.toml `[environment]`:
 * `allow_internet`, `network_mode`, `allowed_hosts`), resolved against its
 * compose sidecars. It is the ceiling of what the task container may reach;
 * a policy's network axis narrows it further (taskenv/sidecars.ts).
 *
 * authbench gives no task container a route outside, so "public" (or
 * `allow_internet = true`) reaches what an undeclared task reaches: its own
 * sidecars, never the internet. An allowlist names sidecars (reached on their
 * networks) and external hosts, `name` or `name:port`, which only a filtering
 * egress proxy on the rollout's network reaches (taskenv/egress.ts): never
 * run as if the task were public (the Inspect–Harbor bridge's choice). Pure.
 */
import { compareStrings, type Problem } from '../core/index.ts';
import { problem } from './problems.ts';
import type { TaskToml } from './schema.ts';

export type NetworkDeclaration =
  /** Nothing declared, or `allow_internet = false`: no route outside; the task's sidecars. */
  | { mode: 'offline' }
  /** `allow_internet = true` / `network_mode = "public"`: offline here, so the same as `offline`. */
  | { mode: 'public' }
  /** `network_mode = "none"`: no network at all, sidecars included. */
  | { mode: 'none' }
  /** `allowed_hosts`: exactly these sidecars, and these external hosts through the egress proxy. */
  | { mode: 'allowlist'; hosts: string[]; external: ExternalHost[] };

/** An allowlisted host outside the task (lower case, no trailing dot); `ports` undefined = any port. */
export interface ExternalHost {
  host: string;
  ports?: number[];
}

/** A DNS name of at least two labels, or a dotted IPv4 address (what an allowlist can match exactly). */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * One `allowed_hosts` entry naming a host outside the task: `name` or `name:port`, matched
 * exactly and case-insensitively (no wildcards: each host is listed). A string says why not.
 */
export function parseExternalHost(entry: string): ExternalHost | string {
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(entry.trim());
  if (m === null) return 'is not a host name or host:port';
  const host = (m[1] ?? '').toLowerCase().replace(/\.$/, '');
  if (host.includes('*')) return 'wildcards are not supported: list each host';
  if (!HOST_NAME.test(host)) return 'is neither a compose service of the task nor a fully qualified host name';
  if (m[2] === undefined) return { host };
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `port ${m[2]} is not in 1-65535`;
  return { host, ports: [port] };
}

/** Entries for one host merged: any port wins over a port list. Sorted by host. Pure. */
function mergeExternal(hosts: readonly ExternalHost[]): ExternalHost[] {
  const byHost = new Map<string, ExternalHost>();
  for (const h of hosts) {
    const seen = byHost.get(h.host);
    if (seen === undefined) byHost.set(h.host, h);
    else if (seen.ports === undefined || h.ports === undefined) byHost.set(h.host, { host: h.host });
    else byHost.set(h.host, { host: h.host, ports: [...new Set([...seen.ports, ...h.ports])].sort((a, b) => a - b) });
  }
  return [...byHost.values()].sort((a, b) => compareStrings(a.host, b.host));
}

export interface NetworkFacts {
  /** Sidecars that run next to the task container. */
  sidecars: readonly string[];
  /** Sidecars the compose file declares but this copy cannot start (their files are missing). */
  dropped: readonly string[];
}

/** The task's network declaration, with a problem for every contradiction and every host it cannot reach. */
export function resolveNetworkDeclaration(environment: TaskToml['environment'], facts: NetworkFacts, file: string): { declaration: NetworkDeclaration; problems: Problem[] } {
  const problems: Problem[] = [];
  const err = (field: string, message: string): void => void problems.push(problem(file, `environment.${field}`, message, 'error'));
  const mode = environment?.network_mode ?? (environment?.allowed_hosts !== undefined ? 'allowlist' : undefined);
  const hosts = environment?.allowed_hosts;
  if (mode !== 'allowlist' && hosts !== undefined) err('allowed_hosts', `only applies to network_mode = "allowlist" (this task says "${String(mode)}")`);
  if (mode === 'none' && environment?.allow_internet === true) err('allow_internet', 'contradicts network_mode = "none"');
  if (mode === 'allowlist' && environment?.allow_internet === true) err('allow_internet', 'contradicts an allowlist (network_mode = "allowlist"): say one');
  if (mode === 'none') return { declaration: { mode: 'none' }, problems };
  if (mode === 'public' || (mode === undefined && environment?.allow_internet === true)) {
    problems.push(
      problem(
        file,
        environment?.network_mode === undefined ? 'environment.allow_internet' : 'environment.network_mode',
        'the task may reach the internet; authbench runs offline, so it reaches its compose sidecars only (no route outside)',
        'warning',
      ),
    );
    return { declaration: { mode: 'public' }, problems };
  }
  if (mode !== 'allowlist') return { declaration: { mode: 'offline' }, problems };
  if (hosts === undefined) err('network_mode', '"allowlist" needs allowed_hosts');
  const sidecars = new Set(facts.sidecars);
  const dropped = new Set(facts.dropped);
  const kept: string[] = [];
  const external: ExternalHost[] = [];
  (hosts ?? []).forEach((host, i) => {
    if (sidecars.has(host)) kept.push(host);
    else if (dropped.has(host)) problems.push(problem(file, `environment.allowed_hosts[${String(i)}]`, `${host} is a compose service this copy cannot start (attack path incomplete)`, 'warning'));
    else {
      const parsed = parseExternalHost(host);
      if (typeof parsed === 'string') err(`allowed_hosts[${String(i)}]`, `${host} ${parsed}`);
      else external.push(parsed);
    }
  });
  return { declaration: { mode: 'allowlist', hosts: [...new Set(kept)].sort(), external: mergeExternal(external) }, problems };
}

/** The external hosts a declaration lets the egress proxy forward to (none unless an allowlist names some). */
export function declaredExternalHosts(declaration: NetworkDeclaration): readonly ExternalHost[] {
  return declaration.mode === 'allowlist' ? declaration.external : [];
}

/** The sidecars a declaration lets the task container reach at most ('all' = every sidecar). */
export function declaredSidecarCeiling(declaration: NetworkDeclaration): 'all' | readonly string[] {
  switch (declaration.mode) {
    case 'none':
      return [];
    case 'allowlist':
      return declaration.hosts;
    case 'offline':
    case 'public':
      return 'all';
  }
}
