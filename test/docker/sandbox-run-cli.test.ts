/**
 * `authbench sandbox run` on every starter task, through the real CLI: a
 * command inside the gold policy runs with full enforcement; under deny-all a
 * write into the workdir is refused and shows up as a denial.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverTasks, loadTask } from '../../task-format/index.ts';

const tasks = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const scratch = mkdtempSync(join(tmpdir(), 'authbench-sandbox-run-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface RunJson {
  exec: { exitCode: number | null; stdout: string };
  enforcement: { level: string; landlockAbi: number; seccomp: boolean };
  denials: { kind: string; path?: string }[];
  events: { count: number; file?: string };
}

function sandboxRun(taskId: string, policy: string, cmd: string[]): { status: number | null; json: RunJson; stderr: string } {
  const events = join(scratch, `${taskId}-${policy}.jsonl`);
  const r = spawnSync(process.execPath, ['bin/authbench.ts', 'sandbox', 'run', '--task', taskId, '--policy', policy, '--events', events, '--json', '--', ...cmd], {
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { status: r.status, json: JSON.parse(r.stdout) as RunJson, stderr: r.stderr };
}

describe.each(tasks.map((t) => [t.id, t.workdir] as const))('sandbox run on %s', (id, workdir) => {
  it('runs a command inside the gold policy under full enforcement and writes its events', () => {
    const r = sandboxRun(id, 'gold', ['bash', '-c', 'echo inside']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json.exec.stdout).toBe('inside\n');
    expect(r.json.enforcement.level).toBe('full');
    expect(r.json.enforcement.seccomp).toBe(true);
    expect(r.json.enforcement.landlockAbi).toBeGreaterThanOrEqual(1);
    expect(r.json.events.count).toBeGreaterThan(0);
    const lines = readFileSync(r.json.events.file ?? '', 'utf8').trim().split('\n');
    expect(lines.length).toBe(r.json.events.count);
    expect(lines.every((l) => (JSON.parse(l) as { schema_version: number }).schema_version === 1)).toBe(true);
  });

  it('under deny-all refuses a write into the workdir and reports it', () => {
    const target = `${workdir}/authbench-deny-probe`;
    const r = sandboxRun(id, 'deny-all', ['bash', '-c', `echo x > ${target}`]);
    expect(r.status).not.toBe(0);
    expect(r.json.denials.some((d) => d.kind === 'file' && d.path === target)).toBe(true);
  });
});

describe('a policy that names harness paths', () => {
  it('is accepted: exit 0, those entries dropped, named in a warning and in the fidelity report', () => {
    const file = join(scratch, 'harness-policy.json');
    writeFileSync(file, JSON.stringify({ read: ['/opt/authbench/**', '/tests/**', '/app/**'], write: ['/opt/authbench/bin/ab-launch'], execute: ['/usr/bin/cat'] }));
    const json = spawnSync(process.execPath, ['bin/authbench.ts', 'sandbox', 'run', '--task', 'log-triage', '--policy', file, '--json', '--', 'cat', '/app/logs/app.log'], { encoding: 'utf8', timeout: 180_000 });
    expect(json.status, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { warnings: string[]; fidelity: { entries: { kind: string; entry: string; granted: { path: string }[] }[] } };
    expect(parsed.warnings.join('\n')).toMatch(/\/opt\/authbench\/\*\*/);
    expect(parsed.warnings.join('\n')).toMatch(/\/tests\/\*\*/);
    expect(parsed.warnings.join('\n')).toMatch(/\/opt\/authbench\/bin\/ab-launch/);
    const granted = parsed.fidelity.entries.flatMap((e) => e.granted.map((g) => g.path));
    expect(granted.some((p) => p.startsWith('/opt/authbench') || p.startsWith('/tests'))).toBe(false);
    const text = spawnSync(process.execPath, ['bin/authbench.ts', 'sandbox', 'run', '--task', 'log-triage', '--policy', file, '--', 'cat', '/app/logs/app.log'], { encoding: 'utf8', timeout: 180_000 });
    expect(text.status, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/warning: write \/opt\/authbench\/bin\/ab-launch/);
  });
});

describe('output the operator is told about', () => {
  // An OSC title change, a byte that is not UTF-8, then more than the 1 MiB output cap; on stderr a
  // right-to-left override (U+202E, as UTF-8) that would reorder what the operator reads.
  const cmd = ['bash', '-c', String.raw`printf '\033]0;pwned\007ok\377\n'; head -c 1100000 /dev/zero | tr '\0' a; printf 'file\342\200\256txt.sh\n' >&2`];
  const run = (json: boolean): ReturnType<typeof spawnSync> =>
    spawnSync(process.execPath, ['bin/authbench.ts', 'sandbox', 'run', '--task', 'log-triage', '--policy', 'allow-all', '--no-trace', ...(json ? ['--json'] : []), '--', ...cmd], { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 });

  it('strips control sequences from human output and says the output was cut and not UTF-8', () => {
    const r = run(false);
    const stdout = r.stdout.toString();
    const stderr = r.stderr.toString();
    expect(r.status, stderr).toBe(0);
    expect(stdout.startsWith('ok\ufffd\naaa')).toBe(true);
    expect(stdout).not.toContain('\x1b');
    expect(stderr).toContain('stdout was cut: the first 1048576 of 1100014 bytes are kept');
    expect(stderr).toContain('stdout is not UTF-8');
    expect(stderr).toContain('stdout: 1 terminal control sequence(s) removed');
    expect(stderr).toContain('file\\u{202e}txt.sh\n');
    expect(stderr).not.toContain('\u202e');
    expect(stderr).toContain('stderr: 1 invisible or bidi format character(s) shown as \\u{…}');
  });

  it('--json keeps the exact bytes in base64', () => {
    const r = run(true);
    expect(r.status, r.stderr.toString()).toBe(0);
    const parsed = JSON.parse(r.stdout.toString()) as { output: { stdout: { bytes: number; kept: number; truncated: boolean; utf8: boolean; base64?: string }; stderr: { utf8: boolean; base64?: string } } };
    const out = parsed.output.stdout;
    expect(out).toMatchObject({ bytes: 1100014, kept: 1048576, truncated: true, utf8: false });
    expect(Buffer.from(out.base64 ?? '', 'base64').subarray(0, 14)).toEqual(Buffer.from('\x1b]0;pwned\x07ok\xff\n', 'latin1'));
    expect(parsed.output.stderr).toEqual({ bytes: 14, kept: 14, truncated: false, utf8: true });
    // The same text, escaped in the JSON so a terminal does not act on it either.
    expect(r.stdout.toString()).not.toContain('\u202e');
    expect(r.stdout.toString()).toContain('file\\u202etxt.sh');
  });
});
