/**
 * `authorization_policy.json` (product.md Appendix A): exactly `read`, `write`,
 * `execute` arrays of absolute path patterns, plus authbench's optional
 * `network` section. AuthBench files (three arrays only) parse unchanged.
 *
 * The network section is deliberately small: it says only what authbench
 * can enforce — TCP connect/bind by port (Landlock ABI >= 4), whether IP
 * sockets may be created at all (seccomp on the socket domain), and which
 * hosts exist for the task container. A host is loopback or a compose
 * service of the task (a sidecar): Landlock cannot tell hosts apart, so a
 * sidecar is reachable only when the policy names it (the task container
 * joins that sidecar's network alone; taskenv/sidecars.ts). An IP address
 * other than loopback is refused: sidecar addresses change every rollout.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

const PatternListSchema = z
  .array(z.string())
  .describe('Absolute path patterns: `* ? [...]` within one segment, optional trailing `/**`.');

const PortSchema = z.number().int().min(1).max(65535).describe('TCP port, 1-65535.');

export const LoopbackHostSchema = z
  .string()
  .refine(isLoopbackHost, { message: 'only loopback hosts are reachable from a task container (localhost, 127.0.0.0/8, ::1)' })
  .describe('A loopback host: `localhost`, an address in 127.0.0.0/8, or `::1`.');

/** A compose service name as compose accepts it (task-format/compose.ts), never an IP address. */
const SERVICE_HOST = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

export const NetworkHostSchema = z
  .string()
  .refine((h) => isLoopbackHost(h) || isServiceHost(h), {
    message: 'a host is loopback (localhost, 127.0.0.0/8, ::1) or the name of one of the task\'s compose services (e.g. "metadata-mock")',
  })
  .describe('Loopback (`localhost`, 127.0.0.0/8, `::1`), a compose service of the task (its sidecar, by service name), or an external host its task.toml allowlists (through the egress proxy).');

export const NetworkSectionSchema = z
  .strictObject({
    tcp_connect: z
      .array(
        z
          .strictObject({ host: NetworkHostSchema, port: PortSchema })
          .describe('A TCP endpoint the task may connect to: loopback, or a sidecar by service name.'),
      )
      .default([])
      .describe('TCP endpoints the task may connect to. Ports are enforced by Landlock (ABI >= 4); a sidecar host is reachable only when named here.'),
    tcp_bind: z.array(PortSchema).default([]).describe('TCP ports the task may bind/listen on (Landlock ABI >= 4).'),
    allow_all: z
      .boolean()
      .default(false)
      .describe('Unrestricted network: any socket, any port, every sidecar (the allow-all baseline). Overrides the lists.'),
  })
  .describe('authbench extension: which loopback and sidecar TCP endpoints the task may reach. Absent = no network.');

export const PolicySchema = z
  .strictObject({
    read: PatternListSchema.describe('Paths the task may read (files) or list (directories).'),
    write: PatternListSchema.describe('Paths the task may write, truncate, create, remove or rename.'),
    execute: PatternListSchema.describe('Executables the task may run (realpath inside the image), not libraries.'),
    network: NetworkSectionSchema.optional(),
  })
  .describe('authorization_policy.json: a least-privilege policy for one task.');

export type Policy = z.infer<typeof PolicySchema>;
export type NetworkSection = z.infer<typeof NetworkSectionSchema>;
export type PolicyAxis = 'read' | 'write' | 'execute';
export const POLICY_AXES: readonly PolicyAxis[] = ['read', 'write', 'execute'];

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** A compose service name (a sidecar host), as opposed to loopback or an IP address. */
export function isServiceHost(host: string): boolean {
  return host !== 'localhost' && isIP(host) === 0 && SERVICE_HOST.test(host);
}

/** The sidecar hosts a network section names ('all' under allow_all); absent section = none. */
export function policySidecarHosts(network: NetworkSection | undefined): 'all' | string[] {
  if (network === undefined) return [];
  if (network.allow_all) return 'all';
  return [...new Set(network.tcp_connect.map((c) => c.host).filter(isServiceHost))].sort();
}
