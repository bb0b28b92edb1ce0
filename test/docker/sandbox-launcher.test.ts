import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, connectDocker, LABELS } from '../../docker/index.ts';
import type { Container, DockerEngine, ExecResult } from '../../docker/index.ts';
import {
  LAUNCHER_EXIT,
  ensureLauncher,
  installLauncher,
  launcherArgv,
  parseLauncherReport,
  serializeRules,
  type LauncherRules,
} from '../../sandbox/launcher/index.ts';

const RUN_LABELS = { [LABELS.run]: `sandbox-launcher-test-${process.pid}` };
const SYSTEM: LauncherRules['fs'] = [
  { path: '/usr', access: ['execute', 'read_file', 'read_dir'] },
  { path: '/etc', access: ['read_file', 'read_dir'] },
];
const rules = (fs: LauncherRules['fs'], extra: Partial<LauncherRules> = {}): LauncherRules => ({
  fs: [...SYSTEM, ...fs],
  connectTcp: [],
  bindTcp: [],
  socketDomains: [],
  scope: [],
  ...extra,
});

let engine: DockerEngine;
let container: Container;
let cache: string;
let binary: string;

beforeAll(async () => {
  engine = await connectDocker();
  cache = await mkdtemp(join(tmpdir(), 'authbench-launcher-cache-'));
  binary = await ensureLauncher(engine, { env: { AUTHBENCH_CACHE_DIR: cache } });
  container = await engine.startContainer({ image: BASE_IMAGE_REF, labels: RUN_LABELS });
  await installLauncher(container, binary);
  const setup = await container.exec({
    cmd: ['sh', '-c', 'mkdir -p /t/secret /t/open && echo TOPSECRET > /t/secret/f && echo hello > /t/open/f'],
  });
  expect(setup.exitCode).toBe(0);
});

afterAll(async () => {
  await container?.remove();
  if (cache !== undefined) await rm(cache, { recursive: true, force: true });
});

let n = 0;
async function launch(r: LauncherRules | string, cmd: string[], opts: { bestEffort?: boolean; report?: boolean } = {}): Promise<ExecResult & { report?: string }> {
  const name = `r${n++}.rules`;
  await container.putFiles('/t/rules', { [name]: typeof r === 'string' ? r : serializeRules(r) });
  const reportPath = opts.report === true ? `/t/rules/${name}.json` : undefined;
  const result = await container.exec({
    cmd: launcherArgv({
      rulesPath: `/t/rules/${name}`,
      cmd,
      ...(reportPath === undefined ? {} : { reportPath }),
      ...(opts.bestEffort === true ? { bestEffort: true } : {}),
    }),
  });
  if (reportPath === undefined) return result;
  const report = await container.readFile(reportPath);
  return report === undefined ? result : { ...result, report: report.toString('utf8') };
}

describe('ab-launch', () => {
  it('is built from source as a static ELF binary and cached by content hash', async () => {
    const bytes = await readFile(binary);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(binary.startsWith(join(cache, 'launcher'))).toBe(true);
    // A second call finds the cached binary without extracting it again.
    expect(await ensureLauncher(engine, { env: { AUTHBENCH_CACHE_DIR: cache } })).toBe(binary);
    // Static: no PT_INTERP program header, so it runs whatever libc the task image has.
    const phoff = Number(bytes.readBigUInt64LE(0x20));
    const phentsize = bytes.readUInt16LE(0x36);
    const types = Array.from({ length: bytes.readUInt16LE(0x38) }, (_, i) => bytes.readUInt32LE(phoff + i * phentsize));
    expect(types).toContain(1); // PT_LOAD: the parse found real headers
    expect(types).not.toContain(3); // PT_INTERP
  });

  it('denies a read with EACCES and a non-zero exit', async () => {
    const r = await launch(rules([]), ['cat', '/t/secret/f']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('Permission denied');
    expect(r.stdout).not.toContain('TOPSECRET');
  });

  it('allows a read the rules grant', async () => {
    const r = await launch(rules([{ path: '/t/open', access: ['read_file'] }]), ['cat', '/t/open/f']);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'hello\n' });
  });

  it('writes a report that parses, with the ABI and full enforcement', async () => {
    const r = await launch(rules([{ path: '/t/missing', access: ['read_file'] }]), ['true'], { report: true, bestEffort: true });
    expect(r.exitCode).toBe(0);
    const report = parseLauncherReport(r.report ?? '');
    expect(report.landlock_abi).toBeGreaterThanOrEqual(1);
    expect(report.seccomp).toBe(true);
    expect(report.enforcement).toBe('full');
    expect(report.handled_fs).toContain('read_file');
    expect(report.rules_applied).toBe(SYSTEM.length);
    expect(report.rules_skipped).toEqual([{ path: '/t/missing', reason: 'No such file or directory' }]);
    expect(report.rules_skipped_total).toBe(1);
  });

  it('leaves TCP unhandled under tcp-any and still reports full enforcement', async () => {
    const r = await launch(rules([], { socketDomains: ['inet'], tcpUnrestricted: true }), ['true'], { report: true });
    expect(r.exitCode).toBe(0);
    const report = parseLauncherReport(r.report ?? '');
    expect(report.handled_net).toEqual([]);
    expect(report.enforcement).toBe('full');
    const restricted = parseLauncherReport((await launch(rules([], { socketDomains: ['inet'] }), ['true'], { report: true })).report ?? '');
    expect(restricted.handled_net).toEqual(['bind_tcp', 'connect_tcp']);
  });

  it('skips a missing rule path, or one reached through a symlink, and says so (stricter, never weaker)', async () => {
    // A command may have replaced a directory the compiler saw with a link elsewhere: the rule must not follow it.
    const setup = await container.exec({ cmd: ['sh', '-c', 'rm -rf /t/link && ln -s /t/secret /t/link'] });
    expect(setup.exitCode).toBe(0);
    const r = await launch(rules([{ path: '/t/missing', access: ['read_file'] }, { path: '/t/link', access: ['read_file', 'read_dir'] }]), ['cat', '/t/link/f'], { report: true });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
    const report = parseLauncherReport(r.report ?? '');
    expect(report.enforcement).toBe('full');
    expect(report.rules_skipped).toEqual([
      { path: '/t/missing', reason: 'No such file or directory' },
      { path: '/t/link', reason: 'a symlink on the path (not followed)' },
    ]);
  });

  it('fails closed when the kernel cannot meet the ABI the rules require', async () => {
    const r = await launch(rules([], { requireAbi: 99 }), ['true']);
    expect(r.exitCode).toBe(LAUNCHER_EXIT.LANDLOCK);
    expect(r.stderr).toMatch(/^ab-launch: Landlock ABI \d+ is older than the 99 these rules need\n$/);
  });

  it('with --best-effort runs anyway and reports partial enforcement', async () => {
    const r = await launch(rules([], { requireAbi: 99 }), ['true'], { bestEffort: true, report: true });
    expect(r.exitCode).toBe(0);
    expect(parseLauncherReport(r.report ?? '').enforcement).toBe('partial');
  });

  it('rejects a malformed rules file', async () => {
    const r = await launch('authbench-rules 1\nfs read_everything /t\n', ['true']);
    expect(r.exitCode).toBe(LAUNCHER_EXIT.USAGE);
    expect(r.stderr).toContain("unknown fs access 'read_everything'");
  });

  it('decodes percent-encoded paths', async () => {
    await container.exec({ cmd: ['sh', '-c', 'mkdir -p "/t/a dir" && echo spaced > "/t/a dir/f"'] });
    const r = await launch(rules([{ path: '/t/a dir', access: ['read_file'] }]), ['cat', '/t/a dir/f']);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'spaced\n' });
  });

  it('exits 126 when the command may not be executed', async () => {
    const r = await launch(rules([{ path: '/t/open', access: ['read_file'] }]), ['/t/open/f']);
    expect(r.exitCode).toBe(LAUNCHER_EXIT.EXEC_FAILED);
  });
});
