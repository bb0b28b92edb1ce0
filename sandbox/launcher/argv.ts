/**
 * Everything the harness puts into a task container lives under here: the launcher (which is
 * also the session agent), strace and the libraries it runs on. It is a read-only volume
 * mount (see ensure.ts), so no command can change it whatever the policy says.
 */
export const HARNESS_ROOT = '/opt/authbench';

/** The launcher binary inside a container (static). */
export const LAUNCHER_PATH = `${HARNESS_ROOT}/bin/ab-launch`;

/**
 * How the harness starts its own strace: through its own loader and libraries, so neither a
 * command that replaced the image's strace nor one that replaced the image's libc changes what
 * traces it. (Task images need no strace at all.)
 */
export const HARNESS_STRACE: readonly string[] = [
  `${HARNESS_ROOT}/lib/ld-linux-x86-64.so.2`,
  '--library-path',
  `${HARNESS_ROOT}/lib`,
  `${HARNESS_ROOT}/bin/strace`,
];

export interface LauncherArgvOptions {
  /** Rules file inside the container (serializeRules output); or rulesFd. */
  rulesPath?: string;
  /** Descriptor the agent put the rules on (protocol AGENT_FDS.rules). */
  rulesFd?: number;
  /** Descriptor of the agent's channel (protocol AGENT_FDS.channel): report, failures, seccomp listener. */
  channelFd?: number;
  /** Where the launcher writes its JSON report before exec. */
  reportPath?: string;
  /** Apply what the kernel supports instead of failing closed. */
  bestEffort?: boolean;
  /**
   * RLIMIT_FSIZE (soft and hard) in bytes for the command and everything it starts: no file
   * it writes grows past it (EFBIG / SIGXFSZ), and without CAP_SYS_RESOURCE it cannot be raised.
   * A positive integer.
   */
  fileSizeMax?: number;
  cmd: readonly string[];
  /** Launcher binary inside the container (default LAUNCHER_PATH). */
  launcher?: string;
}

/** argv that runs `cmd` under the launcher. Pure; never a joined shell string. */
export function launcherArgv(options: LauncherArgvOptions): string[] {
  if (options.cmd.length === 0) throw new RangeError('launcherArgv: empty command');
  if ((options.rulesPath === undefined) === (options.rulesFd === undefined)) throw new RangeError('launcherArgv: give rulesPath or rulesFd');
  const fsize = options.fileSizeMax;
  if (fsize !== undefined && (!Number.isSafeInteger(fsize) || fsize < 1)) throw new RangeError(`launcherArgv: fileSizeMax must be a positive integer, got ${fsize}`);
  return [
    options.launcher ?? LAUNCHER_PATH,
    ...(options.bestEffort === true ? ['--best-effort'] : []),
    ...(fsize === undefined ? [] : ['--fsize-max', String(fsize)]),
    ...(options.reportPath === undefined ? [] : ['--report', options.reportPath]),
    ...(options.channelFd === undefined ? [] : ['--channel', String(options.channelFd)]),
    ...(options.rulesPath === undefined ? ['--rules-fd', String(options.rulesFd)] : ['--rules', options.rulesPath]),
    '--',
    ...options.cmd,
  ];
}

/**
 * argv that runs `cmd` (a launcher argv) under a keeper: a host-traced command's parent, what
 * strace is to a traced one (ab-keep.c). Pure.
 */
export function keeperArgv(cmd: readonly string[]): string[] {
  if (cmd.length === 0) throw new RangeError('keeperArgv: empty command');
  return [LAUNCHER_PATH, '--keep', '--', ...cmd];
}
