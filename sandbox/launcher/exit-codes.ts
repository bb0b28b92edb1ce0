/**
 * ab-launch's exit codes (mirrored from the enum in ab-launch.c). A command run
 * under the launcher can itself exit with any of these numbers, so they identify
 * a launcher failure only together with the launcher's `ab-launch: ` stderr line.
 */
export const LAUNCHER_EXIT = {
  /** Bad command line or rules file. */
  USAGE: 120,
  /** Landlock unavailable, older than the rules need, or failed to apply. */
  LANDLOCK: 121,
  /** no_new_privs, the seccomp filter or dropping the tracer's CAP_SYS_PTRACE failed. */
  SECCOMP: 122,
  /** A rule names a path that cannot be opened (without --best-effort). */
  RULE_PATH: 123,
  /** The command exists but could not be executed (e.g. denied by the execute rules). */
  EXEC_FAILED: 126,
  /** The command was not found. */
  NOT_FOUND: 127,
} as const;

export type LauncherExitName = keyof typeof LAUNCHER_EXIT;

const MESSAGES: Record<LauncherExitName, string> = {
  USAGE: 'launcher usage or rules-file error',
  LANDLOCK: 'Landlock unavailable or too old for these rules',
  SECCOMP: 'seccomp filter, no_new_privs, the tracer capability drop or the file size limit failed',
  RULE_PATH: 'a rule names a path that does not exist',
  EXEC_FAILED: 'command could not be executed (permission denied?)',
  NOT_FOUND: 'command not found',
};

/** The launcher failure an exit code stands for, if the launcher itself wrote `ab-launch: ` on stderr. */
export function launcherFailure(exitCode: number | null, stderr: string): { name: LauncherExitName; message: string; line: string } | undefined {
  const line = stderr.split('\n').find((l) => l.startsWith('ab-launch: '));
  if (exitCode === null || line === undefined) return undefined;
  const name = (Object.keys(LAUNCHER_EXIT) as LauncherExitName[]).find((k) => LAUNCHER_EXIT[k] === exitCode);
  return name === undefined ? undefined : { name, message: MESSAGES[name], line };
}

export function launcherExitMessage(name: LauncherExitName): string {
  return MESSAGES[name];
}
