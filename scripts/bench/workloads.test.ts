import { describe, expect, it } from 'vitest';
import { HARNESS_ROOT, HARNESS_STRACE, LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import { BENCH_DIR, BENCH_RULES, RULES_PATH, SCRATCH_DIR, WORKLOADS, benchRulesText, gccDockerfile, variantArgv } from './workloads.ts';

describe('variantArgv', () => {
  const cmd = ['python3', '-c', 'import json'];

  it('bare is the command itself', () => {
    expect(variantArgv('bare', cmd, '/t')).toEqual(cmd);
  });

  it('launcher wraps the command with the bench rules', () => {
    expect(variantArgv('launcher', cmd, '/t')).toEqual([LAUNCHER_PATH, '--rules', RULES_PATH, '--', ...cmd]);
  });

  it("strace is the harness's own, through its own loader, outside the launcher, as in SandboxSession", () => {
    const argv = variantArgv('launcher+strace', cmd, '/out/x.trace');
    expect(argv.slice(0, HARNESS_STRACE.length)).toEqual([...HARNESS_STRACE]);
    expect(argv[0]?.startsWith(`${HARNESS_ROOT}/`)).toBe(true);
    expect(argv.slice(HARNESS_STRACE.length, HARNESS_STRACE.length + 2)).toEqual(['-f', '--seccomp-bpf']);
    expect(argv).not.toContain('strace');
    const dashes = argv.indexOf('--');
    expect(argv.slice(dashes - 2, dashes)).toEqual(['-o', '/out/x.trace']);
    expect(argv.slice(dashes + 1)).toEqual([LAUNCHER_PATH, '--rules', RULES_PATH, '--', ...cmd]);
    expect(argv).not.toContain('taskset');
  });
});

describe('bench files', () => {
  it('rules grant read/execute everywhere and writes only under /tmp (and /dev/null)', () => {
    const text = benchRulesText();
    expect(text.split('\n')[0]).toBe('authbench-rules 1');
    expect(text).toContain('fs read_file,read_dir,execute /\n');
    const writable = BENCH_RULES.fs.filter((r) => r.access.some((a) => a.startsWith('write') || a.startsWith('make'))).map((r) => r.path);
    expect(writable).toEqual(['/tmp', '/dev/null']);
    expect(SCRATCH_DIR.startsWith('/tmp/')).toBe(true);
  });

  it('the bench files live outside the read-only harness mount', () => {
    expect(`${BENCH_DIR}/`.startsWith(`${HARNESS_ROOT}/`)).toBe(false);
  });

  it('the gcc image builds FROM the given base and installs gcc', () => {
    const dockerfile = gccDockerfile('authbench/base:bookworm');
    expect(dockerfile.split('\n')[0]).toBe('FROM authbench/base:bookworm');
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends gcc libc6-dev/);
  });

  it('workloads have unique ids; gcc writes its output into the scratch directory', () => {
    expect(new Set(WORKLOADS.map((w) => w.id)).size).toBe(WORKLOADS.length);
    const gcc = WORKLOADS.find((w) => w.id === 'gcc');
    expect(gcc?.cmd[gcc.cmd.indexOf('-o') + 1]?.startsWith(`${SCRATCH_DIR}/`)).toBe(true);
    expect(WORKLOADS.filter((w) => w.tracedTarget !== undefined).map((w) => w.id)).toEqual(['python-imports', 'gcc']);
  });
});
