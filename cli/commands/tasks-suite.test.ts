import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../test/cli.ts';

beforeEach(() => {
  process.exitCode = undefined;
});
afterEach(() => {
  process.exitCode = undefined;
});

describe('authbench tasks generate / integrity / list --summary', () => {
  it('generates a suite, checks it, finds a tampered canary, and counts stages and families', async () => {
    const root = await mkdtemp(join(tmpdir(), 'authbench-gen-'));
    const out = join(root, 'suite');
    try {
      const gen = await runCli('tasks', 'generate', '--families', 'log-triage', '--per-family', '4', '--seed', '9', '--out', out);
      expect(gen.code).toBe(0);
      // --per-family 4 of the stage cycle, plus the family's live two-episode memory variant.
      expect(gen.out).toContain('wrote 5 scenarios from 1 families');
      expect((await runCli('tasks', 'generate', '--families', 'log-triage', '--per-family', '4', '--seed', '9', '--out', out, '--check')).code).toBe(0);
      const other = await runCli('tasks', 'generate', '--families', 'log-triage', '--per-family', '4', '--seed', '10', '--out', out, '--check');
      expect(other.code).toBe(1);
      expect(other.out).toContain('content differs');

      const clean = await runCli('tasks', 'integrity', out);
      expect(clean.out).toContain('integrity: 5 tasks, no findings');
      expect(clean.code).toBe(0);

      const toml = join(out, 'log-triage-sec-0', 'task.toml');
      await writeFile(toml, (await readFile(toml, 'utf8')).replace(/AUTHBENCH_CANARY_[0-9a-f]{16}/, 'sk_live_abcdefghijklmnopqrstuvwx'));
      const bad = await runCli('tasks', 'integrity', out, '--json');
      expect(bad.code).toBe(1);
      const findings = (JSON.parse(bad.out) as { findings: { task: string; rule: string }[] }).findings;
      expect(findings.map((f) => `${f.task}:${f.rule}`)).toEqual(expect.arrayContaining(['log-triage-sec-0:canary-format', 'log-triage-sec-0:credential']));

      // A folder of tasks with the suite as a collection inside it: list sees both levels.
      await cp('tasks/log-triage', join(root, 'log-triage'), { recursive: true });
      const summary = await runCli('tasks', 'list', root, '--summary', '--json');
      expect(summary.code).toBe(0);
      expect(JSON.parse(summary.out)).toMatchObject({
        tasks: 6,
        by_stage: { security: 1, 'active-tainted': 1, clean: 2, 'memory-recovery': 2 },
        by_family: { 'log-triage': { security: 1, 'active-tainted': 1, clean: 2, 'memory-recovery': 2 } },
        families: 1,
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);

  it('the committed suite validates without errors or warnings and meets the issue\'s counts', async () => {
    const validate = await runCli('tasks', 'validate', 'tasks/suite');
    expect(validate.out).toMatch(/checked (\d+) tasks: \1 valid, 0 invalid; 0 errors, 0 warnings/);
    expect(validate.code).toBe(0);
    const { out } = await runCli('tasks', 'list', 'tasks/suite', '--summary', '--json');
    const summary = JSON.parse(out) as { tasks: number; families: number; by_stage: Record<string, number> };
    expect(summary.tasks).toBeGreaterThanOrEqual(120);
    expect(summary.families).toBeGreaterThanOrEqual(12);
    for (const stage of ['security', 'active-tainted', 'clean', 'memory-recovery']) expect(summary.by_stage[stage], stage).toBeGreaterThanOrEqual(20);
  }, 120_000);

  it('the bundled tasks pass the integrity check', async () => {
    const { code, out } = await runCli('tasks', 'integrity', 'tasks');
    expect(out).toMatch(/integrity: \d+ tasks, no findings/);
    expect(code).toBe(0);
  }, 120_000);
});
