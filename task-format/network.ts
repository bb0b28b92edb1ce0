/**
 * What a Harbor task declares about its network (task.toml `[environment]`:
 * `allow_internet`, `network_mode`, `allowed_hosts`), resolved against its
 * compose sidecars. It is the ceiling of what the task container may reach;
 * a policy's network axis narrows it further (taskenv/sidecars.ts).
 *
 * authbench runs offline and gives no container a route outside, so
 * "public" (or `allow_internet = true`) reaches what an undeclared task
 * reaches: its own sidecars, never the internet. An allowlist may name only
 * sidecars: a host outside the task would need a filtering egress proxy,
 * which authbench does not have, so such a task is refused rather than run
 * as if it were public (the Inspect–Harbor bridge's choice). Pure.
 */
import type { Problem } from '../core/index.ts';
import { problem } from './problems.ts';
import type { TaskToml } from './schema.ts';

export type NetworkDeclaration =
  /** Nothing declared, or `allow_internet = false`: no route outside; the task's sidecars. */
  | { mode: 'offline' }
  /** `allow_internet = true` / `network_mode = "public"`: offline here, so the same as `offline`. */
  | { mode: 'public' }
  /** `network_mode = "none"`: no network at all, sidecars included. */
  | { mode: 'none' }
  /** `allowed_hosts`: exactly these sidecars. */
  | { mode: 'allowlist'; hosts: string[] };

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
  (hosts ?? []).forEach((host, i) => {
    if (sidecars.has(host)) kept.push(host);
    else if (dropped.has(host)) problems.push(problem(file, `environment.allowed_hosts[${String(i)}]`, `${host} is a compose service this copy cannot start (attack path incomplete)`, 'warning'));
    else
      err(
        `allowed_hosts[${String(i)}]`,
        `${host} is not a compose service of the task: authbench reaches only the task's own sidecars (no egress proxy, offline); add the service to environment/docker-compose.yaml or remove the host`,
      );
  });
  return { declaration: { mode: 'allowlist', hosts: [...new Set(kept)].sort() }, problems };
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
