/**
 * What the in-container benchmark runs: the workloads, the three ways of
 * running each (bare, under the launcher, under strace + the launcher, in the
 * order SandboxSession layers them: the harness's own strace through its own
 * loader, from the read-only harness mount), and the rules the launcher enforces.
 * Pure: argv arrays and file contents only.
 */
import { HARNESS_STRACE, launcherArgv, serializeRules, type LauncherRules } from '../../sandbox/launcher/index.ts';
import { straceArgv } from '../../sandbox/trace/index.ts';

/** Where the benchmark's own files live inside its containers (beside, not in, the read-only harness mount). */
export const BENCH_DIR = '/opt/authbench-bench';
/** The workloads' working directory; the only place the launcher lets them write. */
export const SCRATCH_DIR = '/tmp/bench';
export const RULES_PATH = `${BENCH_DIR}/rules`;
export const HELLO_C_PATH = `${BENCH_DIR}/hello.c`;

export interface Workload {
  id: string;
  label: string;
  cmd: readonly string[];
  /** Informational target for the traced ratio, e.g. 1.5; undefined when none was set. */
  tracedTarget?: number;
}

export const WORKLOADS: readonly Workload[] = [
  { id: 'true', label: 'true', cmd: ['true'] },
  {
    id: 'python-imports',
    label: 'python3 imports',
    cmd: ['python3', '-c', 'import json, csv, email, http.client, decimal'],
    tracedTarget: 1.5,
  },
  // Opens every directory under /usr: the worst case for a tracer (one traced openat per directory).
  { id: 'find-usr', label: "find /usr -name '*.py'", cmd: ['find', '/usr', '-name', '*.py'] },
  { id: 'gcc', label: 'gcc -O2 hello.c', cmd: ['gcc', '-O2', '-o', `${SCRATCH_DIR}/hello`, HELLO_C_PATH], tracedTarget: 1.5 },
];

export const VARIANTS = ['bare', 'launcher', 'launcher+strace'] as const;
export type Variant = (typeof VARIANTS)[number];

/**
 * Enough for every workload and nothing policy-shaped: the point is the
 * mechanism's cost (a Landlock ruleset and seccomp filter are in place), not
 * the size of a real task's ruleset.
 */
export const BENCH_RULES: LauncherRules = {
  fs: [
    { path: '/', access: ['read_file', 'read_dir', 'execute'] },
    {
      path: '/tmp',
      access: ['write_file', 'truncate', 'make_reg', 'make_dir', 'make_sym', 'remove_file', 'remove_dir', 'refer'],
    },
    { path: '/dev/null', access: ['write_file'] },
  ],
  connectTcp: [],
  bindTcp: [],
  socketDomains: [],
  scope: [],
};

export const HELLO_C = `#include <stdio.h>
#include <string.h>

static int count(const char *s, char c) {
  int n = 0;
  for (; *s != '\\0'; s++) n += *s == c;
  return n;
}

int main(int argc, char **argv) {
  for (int i = 0; i < argc; i++) printf("%s: %d\\n", argv[i], count(argv[i], 'a') + (int)strlen(argv[i]));
  return 0;
}
`;

/** A throwaway image with a C toolchain, FROM the base image, so gcc can be measured. */
export function gccDockerfile(baseImage: string): string {
  return [
    `FROM ${baseImage}`,
    'RUN apt-get update \\',
    ' && apt-get install -y --no-install-recommends gcc libc6-dev \\',
    ' && rm -rf /var/lib/apt/lists/*',
    '',
  ].join('\n');
}

export function benchRulesText(): string {
  return serializeRules(BENCH_RULES);
}

/** argv of `cmd` run the given way; the trace goes to `tracePath` inside the container (a file here, the agent's pipe in a session). */
export function variantArgv(variant: Variant, cmd: readonly string[], tracePath: string): string[] {
  switch (variant) {
    case 'bare':
      return [...cmd];
    case 'launcher':
      return launcherArgv({ rulesPath: RULES_PATH, cmd });
    case 'launcher+strace':
      return straceArgv({ outputPath: tracePath, strace: HARNESS_STRACE, cmd: launcherArgv({ rulesPath: RULES_PATH, cmd }) });
  }
}
