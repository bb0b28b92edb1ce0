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
 *   socket <inet|inet6>          (socket domains allowed beyond unix; default none)
 *   scope <signal|abstract-unix>
 */

/** Landlock filesystem access rights, named after LANDLOCK_ACCESS_FS_*. */
export const FS_ACCESS = [
  'execute',
  'write_file',
  'read_file',
  'read_dir',
  'remove_dir',
  'remove_file',
  'make_char',
  'make_dir',
  'make_reg',
  'make_sock',
  'make_fifo',
  'make_block',
  'make_sym',
  'refer', // ABI 2
  'truncate', // ABI 3
  'ioctl_dev', // ABI 5
] as const;

export type FsAccess = (typeof FS_ACCESS)[number];

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
}
