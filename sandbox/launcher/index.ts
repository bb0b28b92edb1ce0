/**
 * The enforcement launcher: ab-launch (C, built from source in a builder image)
 * applies Landlock + seccomp and execs a command; this module serialises its
 * rules, builds its argv, parses its report and installs it into containers.
 */
export * from './rules.ts';
export * from './argv.ts';
export * from './exit-codes.ts';
export * from './report.ts';
export { ensureHarness, ensureLauncher, harnessMount, installLauncher, cacheDir, LAUNCHER_SOURCE_DIR } from './ensure.ts';
export type { EnsureLauncherOptions, Harness } from './ensure.ts';
export * from './protocol.ts';
export * from './forward.ts';
