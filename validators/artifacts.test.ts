import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeVerifierArtifacts } from './artifacts.ts';
import type { ValidationPreparation, ValidatorOutcome } from './run.ts';

const preparation: ValidationPreparation = {
  moved: [{ path: '/logs/verifier', to: '/var/lib/authbench-quarantine/r/1-verifier', type: 'dir' }],
  strayProcesses: 1,
  launcher: '/opt/authbench/bin/ab-launch',
  harnessDir: '/.authbench-validation-00',
  pytestIni: '/dev/null',
};

function outcome(kind: 'utility' | 'attack', extra: Partial<ValidatorOutcome> = {}): ValidatorOutcome {
  return {
    kind,
    passed: false,
    reason: 'reward 0',
    reward: 0,
    source: 'reward.txt',
    exec: { exitCode: 0, timedOut: false, stdout: 'F.\n1 failed, 1 passed\n', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 12 },
    command: ['/opt/authbench/bin/ab-launch', '--validator-exec', '--', 'bash', '/tests/test.sh'],
    stdoutBytes: 22,
    stderrBytes: 0,
    rewardFiles: { 'reward.txt': '0\n' },
    junit: [
      { path: `/logs/verifier/junit-${kind}.xml`, xml: '<testsuite/>' },
      { path: `/logs/verifier/junit-${kind}.2.xml`, xml: '<testsuite/>' },
      // Only names the validators write are kept (never a path escaping the folder).
      { path: '/logs/verifier/../../etc/evil.xml', xml: 'x' },
    ],
    tests: [
      { id: 'test_outputs::test_a', outcome: 'failed', message: 'assert 1 == 2' },
      { id: 'test_outputs::test_b', outcome: 'passed' },
      { id: 'test_outputs::test_c', outcome: 'error', message: 'boom' },
    ],
    junitProblems: [],
    preparation,
    ...extra,
  };
}

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('writeVerifierArtifacts', () => {
  it("writes each validator's summary, output, JUnit files, the reward files and what was moved aside", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-verifier-test-'));
    dirs.push(dir);
    const out = await writeVerifierArtifacts(dir, {
      utility: outcome('utility'),
      attack: outcome('attack', { rewardFiles: {}, source: 'exit-code', noResult: 'pytest recorded no test result (exit 4)' }),
      preparation,
    });
    expect(out).toBe(join(dir, 'verifier'));
    expect((await readdir(out)).sort()).toEqual([
      'attack.json',
      'attack.stderr.txt',
      'attack.stdout.txt',
      'junit-attack.2.xml',
      'junit-attack.xml',
      'junit-utility.2.xml',
      'junit-utility.xml',
      'preparation.json',
      'reward.txt',
      'utility.json',
      'utility.stderr.txt',
      'utility.stdout.txt',
    ]);
    const utility = JSON.parse(await readFile(join(out, 'utility.json'), 'utf8')) as Record<string, unknown>;
    expect(utility).toMatchObject({
      validator: 'utility',
      command: ['/opt/authbench/bin/ab-launch', '--validator-exec', '--', 'bash', '/tests/test.sh'],
      exit_code: 0,
      timed_out: false,
      passed: false,
      reward: 0,
      stdout_bytes: 22,
      stdout_truncated: false,
      tests: { total: 3, passed: 1, failed: 1, error: 1, skipped: 0 },
      failed_tests: ['test_outputs::test_a', 'test_outputs::test_c'],
      junit_files: ['junit-utility.xml', 'junit-utility.2.xml', 'evil.xml'],
      no_result: null,
    });
    const attack = JSON.parse(await readFile(join(out, 'attack.json'), 'utf8')) as Record<string, unknown>;
    expect(attack['no_result']).toBe('pytest recorded no test result (exit 4)');
    expect(await readFile(join(out, 'reward.txt'), 'utf8')).toBe('0\n');
    expect(await readFile(join(out, 'utility.stdout.txt'), 'utf8')).toBe('F.\n1 failed, 1 passed\n');
    expect(JSON.parse(await readFile(join(out, 'preparation.json'), 'utf8'))).toEqual({
      moved: preparation.moved,
      stray_processes: 1,
      launcher: '/opt/authbench/bin/ab-launch',
      harness_dir: '/.authbench-validation-00',
      pytest_ini: '/dev/null',
    });
  });
});
