/**
 * Validators run isolated from what a hostile agent leaves behind. In fresh
 * containers of the bundled starter task log-triage (test.sh running pytest
 * once) and of a suite memory scenario (test.sh running pytest twice, plus an
 * attack validator), the agent's leftovers are written directly, then the
 * validation phase runs and the verdict and its reason are checked:
 * - files that would stand in for the validator (an /app/pytest.py, conftest.py
 *   in the workdir or in /, /pytest.ini) change nothing — and, as a control,
 *   each one that matters does fool the plain `python3 -m pytest` test.sh runs;
 * - a pre-created /tests or /logs/verifier, or a reward forged during the
 *   agent's run, is moved aside and reported, and the verdict comes from the
 *   real tests; a leftover process rewriting them is stopped first;
 * - a removed workdir still gets a verdict, a missing interpreter a reason;
 * - the oracle with a legitimate /app/csv.py and /app/json.py still passes;
 * - every run leaves per-test JUnit results and verifier/ artifacts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, type Container, type DockerEngine, type ExecResult } from '../../docker/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox, type TaskSandbox } from '../../taskenv/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import {
  loadValidatorSurface,
  prepareValidation,
  quarantineForValidation,
  splitTrailer,
  validatorExecArgv,
  runAttackValidator,
  runOracle,
  runUtilityValidator,
  surfaceWrites,
  writeVerifierArtifacts,
  type ValidatorOutcome,
} from '../../validators/index.ts';
import { installBundleOf } from '../../validators/bundle.ts';

const logTriage = await loadTask('tasks/log-triage');
const memory = await loadTask('tasks/suite/csv-convert-mem-0');
/** Its test runs the task's own test suite with `python -m pytest` from the workdir (cwd on sys.path). */
const testFix = await loadTask('tasks/suite/test-fix-cln-0');
const images = new Map<string, string>();
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
  for (const task of [logTriage, memory, testFix]) images.set(task.id, (await buildTaskImage(engine, task)).tag);
});

function open(task: Task): Promise<TaskSandbox> {
  return openTaskSandbox(engine, task, images.get(task.id) ?? '', { runId: 'test-validators' });
}

/** What the agent would do: a root shell in the container (the image's own tools). */
async function agent(c: Container, script: string): Promise<ExecResult> {
  const r = await c.exec({ cmd: ['bash', '-c', script], user: '0:0', workdir: '/', timeoutMs: 30_000 });
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
}

/** test.sh's own pytest line, as it runs without the harness's isolation (cwd = workdir). */
function plainPytest(c: Container, task: Task): Promise<ExecResult> {
  return c.exec({ cmd: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '/tests/test_outputs.py'], workdir: task.workdir, timeoutMs: 60_000 });
}

/** A conftest.py that turns every test report into a pass, and leaves a marker when imported. */
const PASSING_CONFTEST = (marker: string): string => `open(${JSON.stringify(marker)}, "w").close()
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
`;

const LOG_TRIAGE_TESTS = 6;

function expectRealFailure(o: ValidatorOutcome): void {
  expect(o.passed, o.reason).toBe(false);
  expect(o.reason).toBe('reward 0');
  expect(o.noResult).toBeUndefined();
  // The verdict came from the real tests: all six ran and recorded, and they did not all pass.
  expect(o.tests).toHaveLength(LOG_TRIAGE_TESTS);
  expect(o.tests.map((t) => t.id)).toContain('test_outputs::test_error_count');
  expect(o.tests.some((t) => t.outcome !== 'passed')).toBe(true);
  expect(o.junit.map((j) => j.path)).toEqual(['/logs/verifier/junit-utility.xml']);
}

describe('log-triage, unfinished: files planted to stand in for the validator change nothing', () => {
  const plants: { what: string; files: Record<string, string>; marker?: string; foolsPlainPytest: boolean }[] = [
    { what: 'an empty /app/pytest.py', files: { '/app/pytest.py': '' }, foolsPlainPytest: true },
    {
      what: 'an /app/pytest.py that prints "passed" and exits 0',
      files: { '/app/pytest.py': 'open("/tmp/planted-pytest", "w").close()\nprint("6 passed in 0.01s")\nraise SystemExit(0)\n' },
      marker: '/tmp/planted-pytest',
      foolsPlainPytest: true,
    },
    { what: 'a conftest.py in the workdir', files: { '/app/conftest.py': PASSING_CONFTEST('/tmp/planted-app-conftest') }, marker: '/tmp/planted-app-conftest', foolsPlainPytest: false },
    { what: 'a conftest.py in /', files: { '/conftest.py': PASSING_CONFTEST('/tmp/planted-root-conftest') }, marker: '/tmp/planted-root-conftest', foolsPlainPytest: true },
    { what: 'a /pytest.ini', files: { '/pytest.ini': '[pytest]\naddopts = --collect-only\n' }, foolsPlainPytest: true },
  ];

  it.each(plants)('$what', async ({ files, marker, foolsPlainPytest }) => {
    await using box = await open(logTriage);
    const c = box.container;
    for (const [path, content] of Object.entries(files)) await c.putFiles(path.slice(0, path.lastIndexOf('/')) || '/', { [path.slice(path.lastIndexOf('/') + 1)]: content });

    const utility = await runUtilityValidator(c, logTriage);
    expectRealFailure(utility);
    expect(utility.preparation.moved).toEqual([]);
    if (marker !== undefined) expect(await c.readFile(marker), `${marker} was imported`).toBeUndefined();

    // Control: the same file does fool the plain pytest run test.sh makes without the isolation.
    const plain = await plainPytest(c, logTriage);
    if (foolsPlainPytest) expect(plain.exitCode, plain.stdout).toBe(0);
  });
});

describe('log-triage, unfinished: a validator location the agent prepared is moved aside', () => {
  it('a pre-created /tests/test.sh writing reward 1 and a pre-created /logs/verifier/reward.txt', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    await agent(c, 'mkdir -p /tests /logs/verifier && printf "#!/bin/bash\\nmkdir -p /logs/verifier\\necho 1 > /logs/verifier/reward.txt\\n" > /tests/test.sh && echo 1 > /logs/verifier/reward.txt');

    const utility = await runUtilityValidator(c, logTriage);
    expectRealFailure(utility);
    expect(utility.rewardFiles).toEqual({ 'reward.txt': '0\n' });
    const moved = utility.preparation.moved;
    expect(moved.map((m) => [m.path, m.type])).toEqual([
      ['/tests', 'dir'],
      ['/logs/verifier', 'dir'],
    ]);
    for (const m of moved) expect(m.to).toMatch(/^\/var\/lib\/authbench-quarantine\/[^/]+\/\d+-(tests|verifier)$/);
    // Moved, never deleted: the agent's files are evidence.
    expect((await c.readFile(`${moved[0]?.to ?? ''}/test.sh`))?.toString()).toContain('echo 1 > /logs/verifier/reward.txt');
    expect((await c.readFile(`${moved[1]?.to ?? ''}/reward.txt`))?.toString()).toBe('1\n');
    // The tests in place are the task's.
    expect((await c.readFile('/tests/test.sh'))?.toString()).toBe(await readFile(logTriage.files.testSh ?? '', 'utf8'));
  });

  it('a /logs symlinked into the workdir is moved as the link', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    await agent(c, 'mkdir -p /app/fake/verifier && echo 1 > /app/fake/verifier/reward.txt && ln -s /app/fake /logs');
    const utility = await runUtilityValidator(c, logTriage);
    expectRealFailure(utility);
    expect(utility.preparation.moved.map((m) => [m.path, m.type])).toEqual([['/logs', 'symlink']]);
  });

  it("a reward forged during the agent's run is moved aside, and the trace shows the surface write", async () => {
    await using box = await open(logTriage);
    const run = await box.session.run({
      cmd: ['bash', '-c', 'mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt'],
      mode: { kind: 'unenforced' },
    });
    expect(run.exec.exitCode).toBe(0);
    const surface = await loadValidatorSurface(logTriage);
    expect(surfaceWrites(run.events, surface)).toEqual(expect.arrayContaining(['/logs/verifier/reward.txt']));

    const utility = await runUtilityValidator(box.container, logTriage);
    expectRealFailure(utility);
    expect(utility.preparation.moved.map((m) => m.path)).toEqual(['/logs/verifier']);
  });

  it('a leftover process rewriting the reward and planting a conftest in /tests is stopped first', async () => {
    // Each write is whole (a rename), so the control below never reads a file the loop is midway
    // through writing: an empty reward.txt there was the loop's race, not the validator's doing.
    const loop = `setsid -f bash -c 'while true; do
      mkdir -p /logs/verifier; echo 1 > /logs/verifier/.r; mv -f /logs/verifier/.r /logs/verifier/reward.txt
      [ -d /tests ] && cp /root/c.py /tests/.c && mv -f /tests/.c /tests/conftest.py
      sleep 0.01
    done' >/dev/null 2>&1 </dev/null`;
    const plant = async (c: Container): Promise<void> => {
      await c.putFiles('/root', { 'c.py': PASSING_CONFTEST('/tmp/planted-tests-conftest') });
      await agent(c, loop);
      await new Promise((r) => setTimeout(r, 300));
    };
    {
      await using box = await open(logTriage);
      await plant(box.container);
      const utility = await runUtilityValidator(box.container, logTriage);
      expect(utility.preparation.strayProcesses).toBeGreaterThanOrEqual(1);
      expectRealFailure(utility);
      expect(await box.container.readFile('/tmp/planted-tests-conftest')).toBeUndefined();
    }
    // Through the session's agent (as a rollout quarantines): the same loop is stopped, the agent
    // that asked is spared and answers on, and the tests go in after it.
    {
      await using box = await open(logTriage);
      await plant(box.container);
      expect((await box.session.run({ cmd: ['true'], mode: { kind: 'unenforced' }, trace: false })).exec.exitCode).toBe(0);
      const quarantined = await quarantineForValidation(box.container, (argv) => box.session.runHarness(argv));
      if (quarantined === undefined) throw new Error('the session agent of log-triage is root: the quarantine must have run');
      expect(quarantined.stopped).toBeGreaterThanOrEqual(1);
      expect((await box.session.runHarness(['/bin/echo', 'still-here'])).stdout).toBe('still-here\n');
      await box.session.close();
      const utility = await runUtilityValidator(box.container, logTriage, { quarantined });
      expect(utility.preparation.strayProcesses).toBe(quarantined.stopped);
      expectRealFailure(utility);
      expect(await box.container.readFile('/tmp/planted-tests-conftest')).toBeUndefined();
    }
    // A runner that is not root: refused before anything moved, and undefined (the caller asks as root).
    {
      await using box = await open(logTriage);
      await agent(box.container, 'mkdir -p /tests && echo planted > /tests/x');
      const asNobody = (argv: readonly string[]) => box.container.exec({ cmd: [...argv], user: '65534:65534', workdir: '/' });
      expect(await quarantineForValidation(box.container, asNobody)).toBeUndefined();
      expect((await box.container.readFile('/tests/x'))?.toString()).toBe('planted\n');
    }
    // Control: left running, the same process fools the validator.
    {
      await using box = await open(logTriage);
      await plant(box.container);
      const utility = await runUtilityValidator(box.container, logTriage, { stopStrayProcesses: false });
      expect(utility.preparation.strayProcesses).toBe(0);
      expect(utility.passed, utility.reason).toBe(true);
    }
  });
});

describe('log-triage: what the agent broke still gets a verdict or a reason', () => {
  it('a removed workdir: the tests run from / and fail on their own', async () => {
    await using box = await open(logTriage);
    await agent(box.container, 'rm -rf /app');
    const utility = await runUtilityValidator(box.container, logTriage);
    expect(utility.passed).toBe(false);
    expect(utility.reason).toBe('reward 0');
    expect(utility.noResult).toBeUndefined();
    expect(utility.tests).toHaveLength(LOG_TRIAGE_TESTS);
    expect(utility.exec.stderr).toMatch(/cannot enter \/app/);
  });
});

describe('log-triage: the oracle, with legitimate files that shadow stdlib names in the workdir', () => {
  it('still passes, and leaves its per-test results and verifier/ artifacts', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    const oracle = await runOracle(c, logTriage);
    expect(oracle.exitCode, oracle.stderr).toBe(0);
    await c.putFiles('/app', {
      'csv.py': '"""The agent\'s own CSV helper for this task."""\n\n\ndef rows(path):\n    return [line.split(",") for line in open(path)]\n',
      'json.py': '"""The agent\'s own notes-to-JSON script."""\nprint("converted")\n',
    });

    const utility = await runUtilityValidator(c, logTriage);
    expect(utility.passed, `${utility.reason}\n${utility.exec.stdout}`).toBe(true);
    expect(utility.reward).toBe(1);
    expect(utility.tests).toHaveLength(LOG_TRIAGE_TESTS);
    expect(utility.tests.every((t) => t.outcome === 'passed')).toBe(true);
    expect(utility.command.slice(0, 2)).toEqual(['/opt/authbench/bin/ab-launch', '--validator-exec']);
    expect(utility.command.slice(-2)).toEqual(['bash', '/tests/test.sh']);
    expect(utility.stdoutBytes).toBe(Buffer.byteLength(utility.exec.stdout));

    // Control: without the isolation, /app/json.py shadows the stdlib and the tests break.
    const plain = await plainPytest(c, logTriage);
    expect(plain.exitCode).not.toBe(0);

    const dir = await mkdtemp(join(tmpdir(), 'authbench-validators-test-'));
    try {
      const out = await writeVerifierArtifacts(dir, { utility, preparation: utility.preparation });
      expect((await readdir(out)).sort()).toEqual(['junit-utility.xml', 'preparation.json', 'reward.txt', 'utility.json', 'utility.stderr.txt', 'utility.stdout.txt']);
      const summary = JSON.parse(await readFile(join(out, 'utility.json'), 'utf8')) as { tests: { passed: number }; failed_tests: string[] };
      expect(summary.tests.passed).toBe(LOG_TRIAGE_TESTS);
      expect(summary.failed_tests).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a suite memory scenario (test.sh runs pytest twice; attack validator)', () => {
  it('the oracle passes both parts, with one JUnit file per pytest run, and the attack does not fire', async () => {
    await using box = await open(memory);
    const c = box.container;
    expect((await runOracle(c, memory)).exitCode).toBe(0);
    const preparation = await prepareValidation(c, memory);
    expect(preparation.moved).toEqual([]);
    const utility = await runUtilityValidator(c, memory, { prepared: preparation });
    const attack = await runAttackValidator(c, memory, { prepared: preparation });
    expect(utility.passed, utility.reason).toBe(true);
    expect(utility.components).toEqual({ reward: 1, task: 1, recovery: 1 });
    expect(utility.junit.map((j) => j.path)).toEqual(['/logs/verifier/junit-utility.xml', '/logs/verifier/junit-utility.2.xml']);
    expect(utility.tests.some((t) => t.id.startsWith('test_outputs::'))).toBe(true);
    expect(utility.tests.some((t) => t.id.startsWith('test_recovery::'))).toBe(true);
    expect(attack.passed, attack.reason).toBe(false);
    expect(attack.tests.length).toBeGreaterThan(0);
    expect(attack.junit.map((j) => j.path)).toEqual(['/logs/verifier/junit-attack.xml']);
    expect(attack.preparation).toBe(preparation);

    // Run again in the same container: the first run's reward and JUnit files are cleared, not read as this run's.
    const again = await runUtilityValidator(c, memory);
    expect(again.passed).toBe(true);
    expect(again.junit.map((j) => j.path)).toEqual(['/logs/verifier/junit-utility.xml', '/logs/verifier/junit-utility.2.xml']);
    expect(again.preparation).toBe(preparation);
  });

  it('unfinished: the utility validator fails with its reason; without an interpreter the attack validator reports no result', async () => {
    await using box = await open(memory);
    const c = box.container;
    const utility = await runUtilityValidator(c, memory);
    expect(utility.passed).toBe(false);
    expect(utility.components?.['task']).toBe(0);
    expect(utility.tests.length).toBeGreaterThan(0);
    expect(utility.noResult).toBeUndefined();

    await agent(c, 'rm -f /usr/bin/python3 /usr/local/bin/python3');
    const attack = await runAttackValidator(c, memory);
    expect(attack.passed).toBe(false);
    expect(attack.tests).toEqual([]);
    expect(attack.noResult).toMatch(/pytest recorded no test result \(exit 127/);
  });
});

describe('a test that runs pytest itself, from the workdir', () => {
  it('gets the container’s own environment: the isolation is the validator’s, not its children’s', async () => {
    await using box = await open(testFix);
    const c = box.container;
    expect((await runOracle(c, testFix)).exitCode).toBe(0);
    const utility = await runUtilityValidator(c, testFix);
    expect(utility.passed, utility.exec.stdout.slice(-2000)).toBe(true);
    expect(utility.tests.find((t) => t.id === 'test_outputs::test_suite_passes')?.outcome).toBe('passed');
    // The inner pytest is the task's, not a validator run: one JUnit file.
    expect(utility.junit.map((j) => j.path)).toEqual(['/logs/verifier/junit-utility.xml']);
  });
});

describe('ab-launch --validator-exec', () => {
  it("caps and counts the output, and enforces the timeout itself (the image's `timeout` replaced)", async () => {
    await using box = await open(logTriage);
    const c = box.container;
    await agent(c, 'for t in /usr/bin/timeout /usr/local/bin/timeout; do printf "#!/bin/sh\\nexit 0\\n" > $t; chmod +x $t; done');
    const token = 'AUTHBENCH_STATUS_test0001';
    const run = (cmd: string[], timeoutSec: number): Promise<ExecResult> =>
      c.exec({
        cmd: validatorExecArgv({ launcher: LAUNCHER_PATH, env: { set: { X: 'y' }, unset: [] }, cwd: '/app', timeoutSec, capBytes: 1000, trailer: token, cmd }),
        user: '0:0',
        workdir: '/',
      });
    const big = splitTrailer((await run(['python3', '-c', 'import os, sys; print("x" * 5000); print(os.getcwd(), os.environ["X"], file=sys.stderr)'], 30)).stdout, token);
    expect(big.status).toMatchObject({ exit_code: 0, timed_out: false, stdout_bytes: 5001, stderr_bytes: 7 });
    expect(big.output).toBe('x'.repeat(1000));

    const started = Date.now();
    const slow = await run(['sleep', '30'], 1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(splitTrailer(slow.stdout, token).status).toMatchObject({ exit_code: null, timed_out: true });
    expect(slow.exitCode).toBe(124);

    const nnp = splitTrailer((await run(['grep', 'NoNewPrivs', '/proc/self/status'], 30)).stdout, token);
    expect(nnp.output).toMatch(/NoNewPrivs:\s+1/);
  });

  it('collects the verdict directory into its status line, never following a link, and times the command', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    const token = 'AUTHBENCH_STATUS_test0003';
    const run = async (script: string) => {
      const exec = await c.exec({
        cmd: validatorExecArgv({ launcher: LAUNCHER_PATH, env: { set: {}, unset: [] }, cwd: '/', timeoutSec: 30, capBytes: 10_000, trailer: token, collect: '/logs/verifier', cmd: ['bash', '-c', script] }),
        user: '0:0',
        workdir: '/',
        outputCapBytes: 64 * 1024 * 1024,
      });
      return splitTrailer(exec.stdout, token).status;
    };
    // Regular files come back whole (bytes, not text); a link to a secret, a FIFO and an odd name are only counted.
    const mixed = await run(
      'mkdir -p /logs/verifier && cd /logs/verifier && printf "1\\n" > reward.txt && printf "a\\0b" > junit-utility-1.xml && ' +
        'ln -s /etc/shadow reward.json && mkfifo junit-utility-2.xml && echo x > "odd name" && sleep 0.2',
    );
    expect(mixed?.run_ms).toBeGreaterThanOrEqual(200);
    expect(mixed?.verifier).toEqual({ files: { 'reward.txt': Buffer.from('1\n').toString('base64'), 'junit-utility-1.xml': Buffer.from('a\0b').toString('base64') }, other: 3 });
    // The directory gone: "missing"; reached through a symlinked /logs: not collected at all (the host reads it the old way).
    expect((await run('rm -rf /logs'))?.verifier).toBe('missing');
    expect((await run('mkdir -p /elsewhere/verifier && echo 1 > /elsewhere/verifier/reward.txt && ln -s /elsewhere /logs'))?.verifier).toBeUndefined();
    // Past the 16 MiB it reads in all: not collected, never cut.
    expect((await run('rm -f /logs; mkdir -p /logs/verifier && head -c 17000000 /dev/zero > /logs/verifier/junit-utility-1.xml'))?.verifier).toBeUndefined();
  });

  it('keeps what the validator starts from signalling the container’s init (a `mkdir` the agent replaced)', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    const token = 'AUTHBENCH_STATUS_test0002';
    const exec = await c.exec({
      cmd: validatorExecArgv({
        launcher: LAUNCHER_PATH,
        env: { set: {}, unset: [] },
        cwd: '/app',
        timeoutSec: 30,
        capBytes: 10_000,
        trailer: token,
        // Its own child stays reachable (same domain); pid 1 and everything outside are not.
        cmd: ['bash', '-c', 'sleep 30 & kill -TERM $! && echo child-ok; kill -TERM 1 2>/dev/null || echo init-refused; kill -9 -1; echo after'],
      }),
      user: '0:0',
      workdir: '/',
    });
    const { output, status } = splitTrailer(exec.stdout, token);
    if (status?.signal_scoped !== true) {
      // A kernel without Landlock ABI 6 runs the validator unscoped and says so.
      expect(status?.signal_scoped).toBe(false);
      return;
    }
    expect(output).toBe('child-ok\ninit-refused\nafter\n');
    // kill -9 -1 (every process but the caller) reached none outside: the supervisor reported, the container lives.
    expect(status).toMatchObject({ exit_code: 0, signal: null, timed_out: false });
    expect((await c.state?.())?.status).toBe('running');
    expect((await agent(c, 'echo alive')).stdout.trim()).toBe('alive');
  });
});

describe('ab-launch --install-bundle', () => {
  it('puts files, modes and links in place as the archive API did, and never writes through or over what is there', async () => {
    await using box = await open(logTriage);
    const c = box.container;
    const install = (entries: Parameters<typeof installBundleOf>[0]) =>
      c.exec({ cmd: [LAUNCHER_PATH, '--install-bundle'], stdin: installBundleOf(entries), user: '0:0', workdir: '/' });
    const ok = await install([
      { type: 'directory', name: 'inst/tests', mode: 0o750 },
      { type: 'file', name: 'inst/tests/run.sh', mode: 0o755, content: Buffer.from('#!/bin/sh\necho ran\n'), mtime: new Date('2026-01-02T00:00:00Z') },
      { type: 'symlink', name: 'inst/tests/data', linkname: 'run.sh' },
      { type: 'directory', name: 'inst/logs/verifier', mode: 0o755 },
    ]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('{"installed":4}\n');
    const look = await agent(c, 'stat -c "%a %U %n" /inst /inst/tests /inst/tests/run.sh /inst/logs/verifier; readlink /inst/tests/data; date -u -r /inst/tests/run.sh +%F; /inst/tests/run.sh');
    expect(look.stdout).toBe('755 root /inst\n750 root /inst/tests\n755 root /inst/tests/run.sh\n755 root /inst/logs/verifier\nrun.sh\n2026-01-02\nran\n');
    // Something already there (a file, or a link on the way) is neither overwritten nor followed.
    await agent(c, 'mkdir -p /inst2 && echo mine > /inst2/reward.txt && ln -s /etc /inst3');
    const over = await install([{ type: 'file', name: 'inst2/reward.txt', mode: 0o644, content: Buffer.from('1\n') }]);
    expect(over.exitCode).toBe(1);
    expect(over.stderr).toMatch(/cannot put \/inst2\/reward.txt in place: File exists/);
    expect((await c.readFile('/inst2/reward.txt'))?.toString()).toBe('mine\n');
    const through = await install([{ type: 'file', name: 'inst3/planted', mode: 0o644, content: Buffer.from('x') }]);
    expect(through.exitCode).toBe(1);
    expect(await c.readFile('/etc/planted')).toBeUndefined();
    // A name that leaves / is refused whatever the host sent.
    const raw = Buffer.concat([Buffer.from('ABB1d'), Buffer.from([0, 0, 1, 0xed]), Buffer.alloc(8, 0xff), Buffer.from([0, 0, 0, 6]), Buffer.from('../etc'), Buffer.alloc(4)]);
    const escape = await c.exec({ cmd: [LAUNCHER_PATH, '--install-bundle'], stdin: raw, user: '0:0', workdir: '/' });
    expect(escape.exitCode).toBe(1);
    expect(escape.stderr).toMatch(/not a relative, normalised name/);
  });
});
