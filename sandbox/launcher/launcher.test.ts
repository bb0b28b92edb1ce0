import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import {
  FS_ACCESS,
  FS_ACCESS_SINCE_ABI,
  GUARD_RULES,
  LAUNCHER_EXIT,
  LAUNCHER_PATH,
  encodeRulePath,
  parseChannel,
  launcherArgv,
  launcherFailure,
  parseLauncherReport,
  serializeRules,
  type LauncherRules,
} from './index.ts';

const empty: LauncherRules = { fs: [], connectTcp: [], bindTcp: [], socketDomains: [], scope: [] };

describe('encodeRulePath', () => {
  it.each([
    ['/usr/bin', '/usr/bin'],
    ['/a b', '/a%20b'],
    ['/x#y%z', '/x%23y%25z'],
    ['/tab\there', '/tab%09here'],
    ['/é', '/%C3%A9'],
    ['/a-b_c.d~e+f=g@h:i,j', '/a-b_c.d~e+f=g@h:i,j'],
  ])('%j → %j', (input, encoded) => {
    expect(encodeRulePath(input)).toBe(encoded);
  });
});

describe('serializeRules', () => {
  it('writes the header alone for empty rules', () => {
    expect(serializeRules(empty)).toBe('authbench-rules 1\n');
  });

  it('writes every directive in a fixed order', () => {
    const text = serializeRules({
      fs: [
        { path: '/usr', access: ['execute', 'read_file', 'read_dir'] },
        { path: '/work dir', access: ['write_file', 'write_file'] },
      ],
      connectTcp: [443],
      bindTcp: [8080],
      socketDomains: ['inet', 'inet6', 'inet'],
      scope: ['signal', 'abstract-unix'],
      setattr: true,
      requireAbi: 6,
    });
    expect(text.split('\n')).toEqual([
      'authbench-rules 1',
      'fs execute,read_file,read_dir /usr',
      'fs write_file /work%20dir',
      'net-connect 443',
      'net-bind 8080',
      'socket inet',
      'socket inet6',
      'scope signal',
      'scope abstract-unix',
      'setattr',
      'require-abi 6',
      '',
    ]);
  });

  it.each<[string, LauncherRules, string]>([
    ['relative path', { ...empty, fs: [{ path: 'usr', access: ['read_file'] }] }, 'fs.0'],
    ['NUL in path', { ...empty, fs: [{ path: '/a\0b', access: ['read_file'] }] }, 'fs.0'],
    ['empty access', { ...empty, fs: [{ path: '/a', access: [] }] }, 'fs.0'],
    ['port out of range', { ...empty, connectTcp: [70000] }, 'connectTcp.0'],
    ['fractional port', { ...empty, bindTcp: [1.5] }, 'bindTcp.0'],
    ['ABI 0', { ...empty, requireAbi: 0 }, 'requireAbi'],
  ])('rejects %s', (_name, rules, field) => {
    let error: unknown;
    try {
      serializeRules(rules);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).field).toBe(field);
  });
});

describe('launcherArgv', () => {
  it('builds the minimal argv', () => {
    expect(launcherArgv({ rulesPath: '/r', cmd: ['sh', '-c', 'echo hi'] })).toEqual([
      LAUNCHER_PATH,
      '--rules',
      '/r',
      '--',
      'sh',
      '-c',
      'echo hi',
    ]);
  });

  it('adds --best-effort and --report, and takes another binary', () => {
    expect(
      launcherArgv({ rulesPath: '/r', reportPath: '/rep.json', bestEffort: true, cmd: ['true'], launcher: '/x/ab' }),
    ).toEqual(['/x/ab', '--best-effort', '--report', '/rep.json', '--rules', '/r', '--', 'true']);
  });

  it('puts --fsize-max with the other flags, before --, and only when asked', () => {
    expect(launcherArgv({ rulesFd: 5, channelFd: 4, bestEffort: true, fileSizeMax: 1048576, cmd: ['--fsize-max', '1'] })).toEqual([
      LAUNCHER_PATH,
      '--best-effort',
      '--fsize-max',
      '1048576',
      '--channel',
      '4',
      '--rules-fd',
      '5',
      '--',
      '--fsize-max',
      '1',
    ]);
    expect(launcherArgv({ rulesFd: 5, cmd: ['true'] })).not.toContain('--fsize-max');
  });

  it('refuses a file-size limit the launcher would not take', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      expect(() => launcherArgv({ rulesFd: 5, fileSizeMax: bad, cmd: ['true'] }), String(bad)).toThrow(/fileSizeMax/);
    }
  });

  it('keeps a command that looks like a flag after --', () => {
    expect(launcherArgv({ rulesPath: '/r', cmd: ['--rules'] }).slice(-2)).toEqual(['--', '--rules']);
  });

  it('refuses an empty command', () => {
    expect(() => launcherArgv({ rulesPath: '/r', cmd: [] })).toThrow(RangeError);
  });

  it('takes the rules and the channel on descriptors the agent placed, and exactly one rules source', () => {
    expect(launcherArgv({ rulesFd: 5, channelFd: 4, cmd: ['true'] })).toEqual([LAUNCHER_PATH, '--channel', '4', '--rules-fd', '5', '--', 'true']);
    expect(() => launcherArgv({ cmd: ['true'] })).toThrow(/rulesPath or rulesFd/);
    expect(() => launcherArgv({ rulesPath: '/r', rulesFd: 5, cmd: ['true'] })).toThrow(/rulesPath or rulesFd/);
  });
});

describe('GUARD_RULES', () => {
  it('handle no filesystem right, scope signals and abstract sockets, and leave sockets, TCP and chmod alone', () => {
    expect(serializeRules(GUARD_RULES).split('\n')).toEqual([
      'authbench-rules 1',
      'socket any',
      'fs-any',
      'scope signal',
      'scope abstract-unix',
      'setattr',
      'tcp-any',
      '',
    ]);
  });

  it('refuses fs rules together with fs-any', () => {
    expect(() => serializeRules({ ...GUARD_RULES, fs: [{ path: '/x', access: ['read_file'] }] })).toThrow(/exclude each other/);
  });
});

describe('parseChannel', () => {
  const report = JSON.stringify({ landlock_abi: 7, enforcement: 'full', seccomp: true, handled_fs: ['read_file'], handled_net: [], scoped: ['signal'], rules_applied: 3, rules_skipped: [] });
  it('reads the report, a failure and an exec failure', () => {
    expect(parseChannel([Buffer.from(`R${report}`)]).report?.landlock_abi).toBe(7);
    expect(parseChannel([Buffer.from('F121 Landlock unavailable: Function not implemented')])).toEqual({
      failure: { exitCode: 121, message: 'Landlock unavailable: Function not implemented' },
    });
    const both = parseChannel([Buffer.from(`R${report}`), Buffer.from('X127 exec nope: No such file or directory')]);
    expect(both.execFailure).toEqual({ exitCode: 127, message: 'exec nope: No such file or directory' });
    expect(parseChannel([])).toEqual({});
  });

  it('refuses what the launcher never sends', () => {
    expect(() => parseChannel([Buffer.from('Zwhat')])).toThrow(/unreadable channel message/);
    expect(() => parseChannel([Buffer.from('R{not json')])).toThrow(/not JSON/);
  });
});

describe('parseLauncherReport', () => {
  const report = {
    landlock_abi: 7,
    enforcement: 'full',
    seccomp: true,
    handled_fs: ['execute', 'read_file'],
    handled_net: ['bind_tcp', 'connect_tcp'],
    scoped: [],
    rules_applied: 3,
    rules_skipped: [{ path: '/missing', reason: 'cannot open: No such file or directory' }],
  };

  it('parses what ab-launch writes', () => {
    expect(parseLauncherReport(`${JSON.stringify(report)}\n`)).toEqual(report);
  });

  it('defaults the fields older launchers did not write', () => {
    const { handled_net: _n, scoped: _s, ...old } = report;
    expect(parseLauncherReport(JSON.stringify(old))).toMatchObject({ handled_net: [], scoped: [] });
  });

  it('names the field that is wrong', () => {
    let error: unknown;
    try {
      parseLauncherReport(JSON.stringify({ ...report, enforcement: 'most' }), 'r.json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).details.join('\n')).toContain('r.json: enforcement');
  });

  it('rejects text that is not JSON', () => {
    expect(() => parseLauncherReport('{"landlock_abi":')).toThrow(/not JSON/);
  });

  it('reads the file-size limit when the launcher set one, and only a positive whole number of bytes', () => {
    expect(parseLauncherReport(JSON.stringify({ ...report, fsize_max: 1048576 })).fsize_max).toBe(1048576);
    expect(parseLauncherReport(JSON.stringify(report))).not.toHaveProperty('fsize_max');
    for (const bad of [0, -5, 1.5, '1048576']) {
      expect(() => parseLauncherReport(JSON.stringify({ ...report, fsize_max: bad })), String(bad)).toThrow(/launcher report format/);
    }
  });
});

describe('launcherFailure', () => {
  it('maps a launcher exit with its stderr line', () => {
    const f = launcherFailure(123, 'ab-launch: rule path missing: /x (No such file or directory)\n');
    expect(f).toMatchObject({ name: 'RULE_PATH', line: 'ab-launch: rule path missing: /x (No such file or directory)' });
  });

  it('does not blame the launcher for a command exiting 123', () => {
    expect(launcherFailure(123, 'some tool failed\n')).toBeUndefined();
  });

  it('has distinct codes', () => {
    const codes = Object.values(LAUNCHER_EXIT);
    expect(new Set(codes).size).toBe(codes.length);
  });
});

describe('FS_ACCESS_SINCE_ABI', () => {
  it('is the table ab-launch.c parses rules with: same names, bit order and ABIs', () => {
    const source = readFileSync(new URL('./ab-launch.c', import.meta.url), 'utf8');
    const table = /static const struct access_name FS_ACCESS\[\] = \{([^;]*)\};/.exec(source)?.[1] ?? '';
    const rows = [...table.matchAll(/\{"(\w+)",\s*\w+,\s*(\d+)\}/g)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(Object.entries(FS_ACCESS_SINCE_ABI));
    expect(FS_ACCESS).toEqual(Object.keys(FS_ACCESS_SINCE_ABI));
  });
});
