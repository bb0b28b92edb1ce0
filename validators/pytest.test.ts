import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTask, type Task } from '../task-format/index.ts';
import {
  junitPathN,
  parseQuarantineOutput,
  pytestCommand,
  pytestIniFile,
  pytestIsolationArgs,
  pytestValidatorEnv,
  shellValidatorEnv,
  splitTrailer,
  validatorExecArgv,
  verifierEnv,
} from './pytest.ts';

describe('pytestIniFile', () => {
  it.each([
    [{}, '/dev/null'],
    [{ 'pytest.ini': '' }, '/tests/pytest.ini'],
    [{ '.pytest.ini': '[pytest]\n' }, '/tests/.pytest.ini'],
    [{ 'pyproject.toml': '[project]\nname = "x"\n' }, '/dev/null'],
    [{ 'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n' }, '/tests/pyproject.toml'],
    [{ 'tox.ini': '[tox]\n' }, '/dev/null'],
    [{ 'tox.ini': '[pytest]\nmarkers = slow\n' }, '/tests/tox.ini'],
    [{ 'setup.cfg': '[tool:pytest]\n' }, '/tests/setup.cfg'],
    [{ 'setup.cfg': '[metadata]\n', 'tox.ini': '[pytest]\n' }, '/tests/tox.ini'],
    // pytest.ini wins over the others, as in pytest's own search.
    [{ 'pyproject.toml': '[tool.pytest.ini_options]\n', 'pytest.ini': '' }, '/tests/pytest.ini'],
  ])('%j -> %s', (files, expected) => {
    expect(pytestIniFile(files)).toBe(expected);
  });
});

describe('pytest command lines', () => {
  it('isolates pytest: no cache, one ini, rootdir and conftest cut at /tests', () => {
    expect(pytestIsolationArgs('/dev/null')).toEqual(['-p', 'no:cacheprovider', '-c', '/dev/null', '--rootdir=/tests', '--confcutdir=/tests']);
  });

  it('runs pytest validators in isolated mode with a JUnit report', () => {
    expect(pytestCommand('/tests/test_attack_outputs.py', 'attack', '/dev/null')).toEqual([
      'python3',
      '-I',
      '-B',
      '-m',
      'pytest',
      '-q',
      '-p',
      'no:cacheprovider',
      '-c',
      '/dev/null',
      '--rootdir=/tests',
      '--confcutdir=/tests',
      '--junitxml=/logs/verifier/junit-attack.xml',
      '/tests/test_attack_outputs.py',
    ]);
  });

  it('numbers the JUnit files of one validator', () => {
    expect([1, 2, 3].map((n) => junitPathN('utility', n))).toEqual([
      '/logs/verifier/junit-utility.xml',
      '/logs/verifier/junit-utility.2.xml',
      '/logs/verifier/junit-utility.3.xml',
    ]);
  });
});

describe('validator environments', () => {
  it('gives test.sh a fixed environment: safe path, no user site, hooks cleared, isolation in PYTEST_ADDOPTS', () => {
    const env = shellValidatorEnv({ kind: 'utility', ini: '/dev/null', pluginDir: '/.v/python' });
    expect(env.set).toEqual({
      PYTHONSAFEPATH: '1',
      PYTHONNOUSERSITE: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONPATH: '/.v/python',
      PYTEST_ADDOPTS: '-p no:cacheprovider -c /dev/null --rootdir=/tests --confcutdir=/tests --junitxml=/logs/verifier/junit-utility.xml -p authbench_junit',
      AUTHBENCH_JUNIT_BASE: '/logs/verifier/junit-utility.xml',
    });
    expect(env.unset).toEqual(expect.arrayContaining(['PYTHONHOME', 'PYTHONSTARTUP']));
    expect(env.unset).not.toContain('PYTHONPATH');
  });

  it("adds the task's [verifier.env] last, appending to PYTHONPATH and PYTEST_ADDOPTS", () => {
    const env = shellValidatorEnv({
      kind: 'utility',
      ini: '/tests/pytest.ini',
      pluginDir: '/.v/python',
      taskEnv: { API_URL: 'http://127.0.0.1:9', PYTHONPATH: '/tests/lib', PYTEST_ADDOPTS: '-x', PYTHONHOME: '/opt/py' },
    });
    expect(env.set['API_URL']).toBe('http://127.0.0.1:9');
    expect(env.set['PYTHONPATH']).toBe('/.v/python:/tests/lib');
    expect(env.set['PYTEST_ADDOPTS']).toMatch(/^-p no:cacheprovider -c \/tests\/pytest\.ini .* -p authbench_junit -x$/);
    expect(env.set['PYTHONHOME']).toBe('/opt/py');
    expect(env.unset).not.toContain('PYTHONHOME');
  });

  it('pytest validators get the task env (python -I ignores PYTHON* anyway)', () => {
    expect(pytestValidatorEnv({ A: '1' }).set).toEqual({ PYTHONDONTWRITEBYTECODE: '1', A: '1' });
  });

  it('reads [verifier.env] from task.toml and refuses a table that is not NAME = value', () => {
    const task = (verifier: unknown): Pick<Task, 'id' | 'config'> => ({ id: 't', config: { verifier } as unknown as Task['config'] });
    expect(verifierEnv(task(undefined))).toEqual({});
    expect(verifierEnv(task({ timeout_sec: 5 }))).toEqual({});
    expect(verifierEnv(task({ env: { A: 'x', N: 3, B: true } }))).toEqual({ A: 'x', N: '3', B: 'true' });
    expect(() => verifierEnv(task({ env: { 'BAD-NAME': 'x' } }))).toThrow(/verifier.env/);
    expect(() => verifierEnv(task({ env: { A: { nested: 1 } } }))).toThrow(/verifier.env/);
    expect(() => verifierEnv(task({ env: 'A=1' }))).toThrow(/verifier.env/);
  });

  it.each([
    ['[verifier.env]\nAPI = "http://127.0.0.1:9"\nRETRIES = 3\n', undefined],
    ['[verifier.env]\n"BAD-NAME" = "x"\n', 'error'],
    ['[verifier.env.NESTED]\nA = "x"\n', 'error'],
  ])('tasks validate checks [verifier.env]: %j', async (toml, severity) => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-verifier-env-'));
    try {
      await cp('tasks/log-triage', join(dir, 'log-triage'), { recursive: true });
      // task.toml ends inside [authbench]; a [verifier.env] table after it is a new table.
      await appendFile(join(dir, 'log-triage', 'task.toml'), `\n${toml}`);
      const { problems } = await checkTask(join(dir, 'log-triage'));
      expect(problems.find((p) => p.field === 'verifier.env')?.severity).toBe(severity);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('validatorExecArgv', () => {
  const base = {
    launcher: '/opt/authbench/bin/ab-launch',
    env: { set: { A: '1', PYTEST_ADDOPTS: '-c /dev/null -p x' }, unset: ['PYTHONHOME'] },
    cwd: '/app',
    timeoutSec: 120,
    capBytes: 262144,
    trailer: 'AUTHBENCH_STATUS_abc123',
    cmd: ['bash', '/tests/test.sh'],
  };

  it('asks the supervisor to collect a directory, absolute only', () => {
    const args = validatorExecArgv({ ...base, collect: '/logs/verifier' });
    expect(args.slice(args.indexOf('--trailer'), args.indexOf('--') + 1)).toEqual(['--trailer', 'AUTHBENCH_STATUS_abc123', '--collect', '/logs/verifier', '--']);
    expect(() => validatorExecArgv({ ...base, collect: 'logs' })).toThrow(/absolute/);
  });

  it('puts unsets before sets, then cwd, supervision options and the command', () => {
    expect(validatorExecArgv(base)).toEqual([
      '/opt/authbench/bin/ab-launch',
      '--validator-exec',
      '--unset',
      'PYTHONHOME',
      '--env',
      'A=1',
      '--env',
      'PYTEST_ADDOPTS=-c /dev/null -p x',
      '--cwd',
      '/app',
      '--timeout',
      '120',
      '--cap',
      '262144',
      '--trailer',
      'AUTHBENCH_STATUS_abc123',
      '--',
      'bash',
      '/tests/test.sh',
    ]);
  });

  it('formats fractional timeouts the supervisor can read', () => {
    expect(validatorExecArgv({ ...base, timeoutSec: 0.5 })).toContain('0.5');
    expect(validatorExecArgv({ ...base, timeoutSec: 60.25 })).toContain('60.25');
  });

  it('refuses what the supervisor would refuse', () => {
    expect(() => validatorExecArgv({ ...base, cmd: [] })).toThrow(/empty command/);
    expect(() => validatorExecArgv({ ...base, trailer: 'short' })).toThrow(/trailer/);
    expect(() => validatorExecArgv({ ...base, trailer: 'has space in it' })).toThrow(/trailer/);
    expect(() => validatorExecArgv({ ...base, timeoutSec: 0 })).toThrow(/timeout/);
    expect(() => validatorExecArgv({ ...base, env: { set: { 'A=B': 'x' }, unset: [] } })).toThrow(/variable name/);
  });
});

describe('splitTrailer', () => {
  const token = 'AUTHBENCH_STATUS_0123456789';
  const status = { exit_code: 0, signal: null, timed_out: false, stdout_bytes: 12, stderr_bytes: 0, signal_scoped: true };

  it('separates the output from the status line written last', () => {
    expect(splitTrailer(`hello world\n${token}${JSON.stringify(status)}\n`, token)).toEqual({ output: 'hello world\n', status });
  });

  it('keeps output that did not end in a newline intact', () => {
    expect(splitTrailer(`no newline${token}${JSON.stringify(status)}\n`, token).output).toBe('no newline');
  });

  it('reads the run time and the collected verifier files, and refuses a file that is not base64', () => {
    const collected = { ...status, run_ms: 120, verifier: { files: { 'reward.txt': 'MQo=' }, other: 1 } };
    expect(splitTrailer(`out\n${token}${JSON.stringify(collected)}\n`, token).status).toEqual(collected);
    const missing = { ...status, verifier: 'missing' };
    expect(splitTrailer(`${token}${JSON.stringify(missing)}\n`, token).status?.verifier).toBe('missing');
    const bad = { ...status, verifier: { files: { 'reward.txt': '1\n' }, other: 0 } };
    expect(splitTrailer(`${token}${JSON.stringify(bad)}\n`, token).status).toBeUndefined();
  });

  it('uses the last occurrence only, so output cannot forge it', () => {
    const forged = `${token}${JSON.stringify({ ...status, exit_code: 0 })}\n`;
    const real = `${token}${JSON.stringify({ ...status, exit_code: 1 })}\n`;
    const split = splitTrailer(`${forged}more output\n${real}`, token);
    expect(split.status?.exit_code).toBe(1);
    expect(split.output).toBe(`${forged}more output\n`);
  });

  it.each([
    ['no trailer', 'just output\n'],
    ['trailer not last', `${token}${JSON.stringify(status)}\ntrailing output\n`],
    ['malformed JSON', `${token}{"exit_code":\n`],
    ['wrong shape', `${token}{"exit_code":"0"}\n`],
    ['no final newline', `${token}${JSON.stringify(status)}`],
  ])('gives no status for %s', (_what, stdout) => {
    const split = splitTrailer(stdout, token);
    expect(split.status).toBeUndefined();
    expect(split.output).toBe(stdout);
  });
});

describe('parseQuarantineOutput', () => {
  it('reads moved paths and the stopped-process count', () => {
    const out = [
      '{"stopped":3}',
      '{"path":"/tests","to":"/var/lib/authbench-quarantine/r/1-tests","type":"dir"}',
      '{"path":"/logs","to":"/var/lib/authbench-quarantine/r/2-logs","type":"symlink"}',
      '',
    ].join('\n');
    expect(parseQuarantineOutput(out)).toEqual({
      moved: [
        { path: '/tests', to: '/var/lib/authbench-quarantine/r/1-tests', type: 'dir' },
        { path: '/logs', to: '/var/lib/authbench-quarantine/r/2-logs', type: 'symlink' },
      ],
      stopped: 3,
      problems: [],
    });
  });

  it('reports lines that are not its own', () => {
    const parsed = parseQuarantineOutput('garbage\n{"path":"relative","to":"/x","type":"dir"}\n');
    expect(parsed.moved).toEqual([]);
    expect(parsed.problems).toHaveLength(2);
  });
});
