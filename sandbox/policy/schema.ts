/**
 * `authorization_policy.json` (product.md Appendix A): exactly `read`, `write`,
 * `execute` arrays of absolute path patterns, plus authbench's optional
 * `network` section. AuthBench files (three arrays only) parse unchanged.
 *
 * The network section is deliberately small: it says only what the launcher
 * can enforce — TCP connect/bind by port (Landlock ABI >= 4) and whether
 * IP sockets may be created at all (seccomp on the socket domain). Hosts are
 * recorded for intent and scoring; the kernel cannot filter on them, and the
 * task container has no network beyond loopback, so only loopback hosts are
 * accepted.
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

export const NetworkSectionSchema = z
  .strictObject({
    tcp_connect: z
      .array(
        z
          .strictObject({ host: LoopbackHostSchema, port: PortSchema })
          .describe('A TCP endpoint the task may connect to.'),
      )
      .default([])
      .describe('TCP endpoints the task may connect to. Enforced by port only (Landlock ABI >= 4).'),
    tcp_bind: z.array(PortSchema).default([]).describe('TCP ports the task may bind/listen on (Landlock ABI >= 4).'),
    allow_all: z
      .boolean()
      .default(false)
      .describe('Unrestricted network: any socket, any port (the allow-all baseline). Overrides the lists.'),
  })
  .describe('authbench extension: which loopback TCP endpoints the task may reach. Absent = no network.');

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
