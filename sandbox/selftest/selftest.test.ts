import { describe, expect, it } from 'vitest';
import { LAUNCHER_PATH, serializeRules } from '../launcher/index.ts';
import { allProbes, classify, probeArgv, summarize, type Probe, type SelftestRow } from './index.ts';

const probes = allProbes();

describe('the probe list', () => {
  it('has at least 40 probes with unique ids', () => {
    const ids = probes.map((p) => p.id);
    expect(ids.length).toBeGreaterThanOrEqual(40);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(probes.map((p) => [p.id, p] as const))('%s has rules the launcher accepts', (_id, probe) => {
    expect(serializeRules(probe.denyRules)).toMatch(/^authbench-rules 1\n/);
    if (probe.allowRules !== 'control') expect(serializeRules(probe.allowRules)).not.toBe(serializeRules(probe.denyRules));
  });

  it('covers the required escape families', () => {
    const ids = new Set(probes.map((p) => p.id));
    for (const id of ['symlink-existing', 'hardlink-create', 'rename-out', 'rename-in', 'proc-self-root', 'proc-pid-fd',
      'exec-ldso', 'exec-memfd', 'exec-shebang', 'read-perl', 'socket-raw', 'socket-netlink', 'ptrace-attach',
      'mount-tmpfs', 'unshare-user', 'chroot', 'tiocsti', 'io-uring-setup', 'mknod-char', 'truncate', 'chmod', 'chown',
      'inherited-fd', 'create-file', 'list-dir', 'exec-copied', 'tcp-connect-port', 'abstract-unix-scope', 'signal-scope']) {
      expect(ids, id).toContain(id);
    }
  });
});

describe('classify', () => {
  const base = { exitCode: 0, stdout: '', stderr: '', timedOut: false };

  it.each([
    ['AB_ALLOWED 3\n', 0, 'allowed'],
    ['AB_DENIED EACCES [Errno 13]\n', 3, 'denied'],
    ['AB_ERROR ENOENT\n', 3, 'error'],
    ['', 126, 'error'],
  ] as const)('marker %j exit %d → %s', (stdout, exitCode, observed) => {
    expect(classify({ kind: 'marker' }, { ...base, stdout, exitCode }).observed).toBe(observed);
  });

  it('reads exit-code probes by status and stderr', () => {
    const e = { kind: 'exit', deniedStderr: 'Permission denied' } as const;
    expect(classify(e, base).observed).toBe('allowed');
    expect(classify(e, { ...base, exitCode: 1, stderr: 'cat: x: Permission denied\n' }).observed).toBe('denied');
    expect(classify(e, { ...base, exitCode: 1, stderr: 'cat: x: No such file or directory\n' }).observed).toBe('error');
  });

  it('never calls a timeout a denial', () => {
    expect(classify({ kind: 'marker' }, { ...base, stdout: 'AB_DENIED EPERM', timedOut: true }).observed).toBe('error');
  });
});

describe('probeArgv', () => {
  const probe: Probe = {
    id: 'x',
    description: 'x',
    setup: [],
    argv: ['cat', '/f'],
    denyRules: { fs: [], connectTcp: [], bindTcp: [], socketDomains: [], scope: [] },
    allowRules: 'control',
    expectation: { kind: 'marker' },
  };

  it('runs deny under the launcher and a control bare', () => {
    expect(probeArgv(probe, 'deny')).toEqual([LAUNCHER_PATH, '--rules', '/abst/rules/x.deny.rules', '--', 'cat', '/f']);
    expect(probeArgv(probe, 'allow')).toEqual(['cat', '/f']);
  });

  it('opens the inherited descriptor outside the launcher', () => {
    const argv = probeArgv({ ...probe, inheritFd: { fd: 7, path: '/s' } }, 'deny');
    expect(argv.slice(0, 5)).toEqual(['sh', '-c', 'exec 7>>"$0"; exec "$@"', '/s', LAUNCHER_PATH]);
  });
});

describe('summarize', () => {
  const row = (id: string, mode: 'deny' | 'allow', observed: SelftestRow['observed']): SelftestRow => {
    const expected = mode === 'deny' ? 'denied' : 'allowed';
    return { id, mode, expected, observed, ok: observed === expected, detail: '', control: false };
  };

  it('counts denials, false denials and failures', () => {
    expect(
      summarize([row('a', 'deny', 'denied'), row('a', 'allow', 'allowed'), row('b', 'deny', 'allowed'), row('b', 'allow', 'error')]),
    ).toEqual({ probes: 2, deniedUnderDeny: 1, falseDenials: 1, failures: 2 });
  });
});
