/** Everything the harness puts into a container lives under here (binary, per-command files); never an agent side effect. */
export const HARNESS_ROOT = '/opt/authbench';

/** Where installLauncher puts the binary inside a container. */
export const LAUNCHER_PATH = `${HARNESS_ROOT}/bin/ab-launch`;

export interface LauncherArgvOptions {
  /** Rules file inside the container (serializeRules output). */
  rulesPath: string;
  /** Where the launcher writes its JSON report before exec. */
  reportPath?: string;
  /** Apply what the kernel supports instead of failing closed. */
  bestEffort?: boolean;
  cmd: readonly string[];
  /** Launcher binary inside the container (default LAUNCHER_PATH). */
  launcher?: string;
}

/** argv that runs `cmd` under the launcher. Pure; never a joined shell string. */
export function launcherArgv(options: LauncherArgvOptions): string[] {
  if (options.cmd.length === 0) throw new RangeError('launcherArgv: empty command');
  return [
    options.launcher ?? LAUNCHER_PATH,
    ...(options.bestEffort === true ? ['--best-effort'] : []),
    ...(options.reportPath === undefined ? [] : ['--report', options.reportPath]),
    '--rules',
    options.rulesPath,
    '--',
    ...options.cmd,
  ];
}
