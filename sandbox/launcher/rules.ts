/**
 * The rules the enforcement launcher (sandbox/launcher/ab-launch.c) applies,
 * and their text serialisation. The policy compiler (sandbox/policy) produces
 * LauncherRules; the launcher parses the text form. Pure: no I/O.
 *
 * Text format, one directive per line, `#` comments:
 *   authbench-rules 1
 *   fs <access,access,...> <percent-encoded absolute path>
 *   net-connect <tcp port>
 *   net-bind <tcp port>
 *   socket <inet|inet6|any>      (socket domains allowed beyond unix; default none; any: every domain)
 *   scope <signal|abstract-unix>
 *   tcp-any                      (TCP connect/bind not restricted by Landlock)
 *   fs-any                       (no filesystem right handled: the guard around unenforced commands; no fs lines)
 *   setattr                      (allow chmod/chown, set-id bits too; Landlock cannot limit them by path)
 *   require-abi <n>              (refuse to run below Landlock ABI n; default 5, 6 with scope)
 *
 * Paths are percent-encoded: every byte outside [A-Za-z0-9/._~+=@:,-] becomes %XX,
 * so a path never contains whitespace, `#` or a NUL.
 */

import { AuthbenchError } from '../../core/index.ts';

/**
 * Landlock filesystem access rights, named after LANDLOCK_ACCESS_FS_* and in
 * their bit order, each with the Landlock ABI that introduced it. The one list
 * on this side; ab-launch.c's FS_ACCESS table is its C twin (a test holds them equal).
 */
export const FS_ACCESS_SINCE_ABI = {
  execute: 1,
  write_file: 1,
  read_file: 1,
  read_dir: 1,
  remove_dir: 1,
  remove_file: 1,
  make_char: 1,
  make_dir: 1,
  make_reg: 1,
  make_sock: 1,
  make_fifo: 1,
  make_block: 1,
  make_sym: 1,
  refer: 2,
  truncate: 3,
  ioctl_dev: 5,
} as const satisfies Record<string, number>;

export type FsAccess = keyof typeof FS_ACCESS_SINCE_ABI;

/** The rights' names, in bit order. */
export const FS_ACCESS = Object.keys(FS_ACCESS_SINCE_ABI) as [FsAccess, ...FsAccess[]];

export interface FsRule {
  /** Absolute path of an existing file or directory (Landlock rules attach to inodes). */
  path: string;
  access: readonly FsAccess[];
}

export interface LauncherRules {
  fs: readonly FsRule[];
  /** TCP ports the sandboxed process may connect to (Landlock ABI >= 4). */
  connectTcp: readonly number[];
  /** TCP ports it may bind (Landlock ABI >= 4). */
  bindTcp: readonly number[];
  /** Socket domains allowed beyond AF_UNIX; all others are denied by seccomp. */
  socketDomains: readonly ('inet' | 'inet6')[];
  /** Landlock scoping (ABI >= 6): isolate signals / abstract unix sockets from outside. */
  scope: readonly ('signal' | 'abstract-unix')[];
  /**
   * Allow chmod/chown (set-id bits included: every sandboxed process runs with no_new_privs).
   * Landlock has no right for them, so they cannot be limited by path: without this the
   * launcher's seccomp filter denies them for every file. Grant it when the policy grants any write.
   */
  setattr?: boolean;
  /**
   * Leave TCP connect/bind unrestricted by Landlock (a policy whose network section allows all).
   * Socket domains are still filtered by seccomp: pair it with `socketDomains`.
   */
  tcpUnrestricted?: boolean;
  /** Landlock ABI the kernel must offer, beyond what the rules themselves need (>= 1). */
  requireAbi?: number;
  /**
   * Handle no filesystem right (no `fs` rules allowed with it): the harness guard an unenforced
   * command runs under — signal and abstract-socket scoping, the ptrace wall and the seccomp
   * protections of the harness, and no policy.
   */
  fsUnrestricted?: boolean;
  /** Allow every socket domain (unenforced commands). */
  socketAny?: boolean;
}

/**
 * What an unenforced command (defense `none`, gold derivation's oracle run) still runs under: no
 * policy at all, but a Landlock domain that scopes signals and abstract sockets — so it cannot
 * signal, ptrace or read the /proc of the agent, the tracer or pid 1 — and the seccomp filter's
 * protections of the harness (no untraced clones, no io_uring, no changing other processes' limits).
 */
export const GUARD_RULES: LauncherRules = {
  fs: [],
  connectTcp: [],
  bindTcp: [],
  socketDomains: [],
  scope: ['signal', 'abstract-unix'],
  setattr: true,
  tcpUnrestricted: true,
  fsUnrestricted: true,
  socketAny: true,
};

export const RULES_HEADER = 'authbench-rules 1';

const PATH_SAFE_BYTE = /^[A-Za-z0-9/._~+=@:,-]$/;

/** Percent-encode a path byte by byte (UTF-8), keeping the bytes that cannot confuse the parser. */
export function encodeRulePath(path: string): string {
  let out = '';
  for (const byte of Buffer.from(path, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && PATH_SAFE_BYTE.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function invalid(field: string, message: string): AuthbenchError {
  return new AuthbenchError('INVALID_ARGUMENT', `launcher rules: ${message}`, { field });
}

function checkPort(port: number, field: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalid(field, `not a TCP port: ${port}`);
  return port;
}

/**
 * The text form ab-launch reads. Throws INVALID_ARGUMENT on rules the launcher
 * would reject (relative path, NUL byte, empty or unknown access, bad port).
 */
export function serializeRules(rules: LauncherRules): string {
  const lines = [RULES_HEADER];
  rules.fs.forEach((rule, i) => {
    const field = `fs.${i}`;
    if (!rule.path.startsWith('/')) throw invalid(field, `path must be absolute: ${rule.path}`);
    if (rule.path.includes('\0')) throw invalid(field, 'path contains a NUL byte');
    if (rule.access.length === 0) throw invalid(field, `no access rights for ${rule.path}`);
    for (const a of rule.access) {
      if (!(FS_ACCESS as readonly string[]).includes(a)) throw invalid(field, `unknown access right ${a}`);
    }
    lines.push(`fs ${[...new Set(rule.access)].join(',')} ${encodeRulePath(rule.path)}`);
  });
  rules.connectTcp.forEach((p, i) => lines.push(`net-connect ${checkPort(p, `connectTcp.${i}`)}`));
  rules.bindTcp.forEach((p, i) => lines.push(`net-bind ${checkPort(p, `bindTcp.${i}`)}`));
  if (rules.fsUnrestricted === true && rules.fs.length > 0) throw invalid('fsUnrestricted', 'fs rules and fsUnrestricted exclude each other');
  for (const d of new Set(rules.socketDomains)) lines.push(`socket ${d}`);
  if (rules.socketAny === true) lines.push('socket any');
  if (rules.fsUnrestricted === true) lines.push('fs-any');
  for (const s of new Set(rules.scope)) lines.push(`scope ${s}`);
  if (rules.setattr === true) lines.push('setattr');
  if (rules.tcpUnrestricted === true) lines.push('tcp-any');
  if (rules.requireAbi !== undefined) {
    if (!Number.isInteger(rules.requireAbi) || rules.requireAbi < 1) {
      throw invalid('requireAbi', `not an ABI version: ${rules.requireAbi}`);
    }
    lines.push(`require-abi ${rules.requireAbi}`);
  }
  return `${lines.join('\n')}\n`;
}
