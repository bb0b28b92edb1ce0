import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../test/cli.ts';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/tasks', import.meta.url));
const fixture = (name: string): string => join(FIXTURES, name);

const run = runCli;

beforeEach(() => {
  process.exitCode = undefined;
});
afterEach(() => {
  process.exitCode = undefined;
});

describe('authbench tasks validate', () => {
  it('exits 1 and names file and field for a broken task', async () => {
    const { code, out } = await run('tasks', 'validate', fixture('bad-spec-roots'));
    expect(code).toBe(1);
    expect(out).toContain(
      `error: ${fixture('bad-spec-roots')}/tests/permission_eval_spec.json: required_permissions.write[2]: /tmp/scratch.txt is outside`,
    );
    expect(out).toContain('checked 1 task: 0 valid, 1 invalid; 2 errors, 0 warnings');
  });

  it.each(['good-standard', 'good-sensitive'])('exits 0 for %s', async (name) => {
    const { code, out } = await run('tasks', 'validate', fixture(name));
    expect(code).toBe(0);
    expect(out).toBe('checked 1 task: 1 valid, 0 invalid; 0 errors, 0 warnings\n');
  });

  it('exits 0 when there are only warnings, and prints them', async () => {
    const { code, out } = await run('tasks', 'validate', fixture('warn-sensitive-no-smoke'));
    expect(code).toBe(0);
    expect(out).toContain(`warning: ${fixture('warn-sensitive-no-smoke')}/task.toml: extras: unknown top-level table`);
  });

  it('continues past failing tasks and summarises the folder', async () => {
    const { code, out } = await run('tasks', 'validate', FIXTURES);
    expect(code).toBe(1);
    expect(out).toContain('bad-toml-syntax/task.toml: invalid TOML at line 4');
    expect(out).toContain('bad-spec-shape/tests/permission_eval_spec.json: notes: unknown key');
    expect(out.trimEnd().split('\n').at(-1)).toBe('checked 15 tasks: 3 valid, 12 invalid; 24 errors, 2 warnings');
  });

  it('prints JSON with --json', async () => {
    const { code, out } = await run('tasks', 'validate', FIXTURES, '--json');
    expect(code).toBe(1);
    const parsed = JSON.parse(out) as { summary: unknown; tasks: { id: string; valid: boolean; problems: { field?: string }[] }[] };
    expect(parsed.summary).toEqual({ tasks: 15, valid: 3, invalid: 12, errors: 24, warnings: 2 });
    const env = parsed.tasks.find((t) => t.id === 'bad-environment');
    expect(env?.valid).toBe(false);
    expect(env?.problems.map((p) => p.field)).toEqual(['environment.cpus', 'environment.memory']);
  });

  it('fails with TASK_NOT_FOUND for a folder without tasks', async () => {
    const { code, err } = await run('tasks', 'validate', fixture('good-standard/environment'));
    expect(code).toBe(1);
    expect(err).toContain('TASK_NOT_FOUND');
  });
});

describe('authbench tasks list', () => {
  it('lists valid tasks and marks the ones that fail to load', async () => {
    const { code, out } = await run('tasks', 'list', FIXTURES);
    expect(code).toBe(1);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^id\s+stage\s+family\s+dataset\s+oracle\s+gold\s+attack validator$/);
    expect(lines.find((l) => l.startsWith('good-sensitive '))).toMatch(/^good-sensitive\s+security\s+log-triage\s+sensitive\s+yes\s+no\s+yes$/);
    expect(lines.find((l) => l.startsWith('good-standard '))).toMatch(/^good-standard\s+clean\s+-\s+standard\s+yes\s+no\s+no$/);
    expect(lines.find((l) => l.startsWith('bad-no-solution '))).toMatch(/^bad-no-solution \(invalid\)\s+-\s+-\s+-\s+no\s+no\s+no$/);
    expect(out).toContain('12 of 15 tasks failed to load');
  });

  it('exits 0 for a single valid task and sees its gold set', async () => {
    const traces = await mkdtemp(join(tmpdir(), 'authbench-traces-'));
    try {
      await mkdir(join(traces, 'good-standard'));
      await writeFile(join(traces, 'good-standard', 'gold.json'), '{}\n');
      const { code, out } = await run('tasks', 'list', fixture('good-standard'), '--oracle-traces', traces, '--json');
      expect(code).toBe(0);
      expect(JSON.parse(out)).toEqual([
        {
          id: 'good-standard',
          dir: fixture('good-standard'),
          valid: true,
          stage: 'clean',
          family: null,
          dataset: 'standard',
          oracle: true,
          gold: true,
          attackValidator: false,
          errors: 0,
          warnings: 0,
        },
      ]);
    } finally {
      await rm(traces, { recursive: true, force: true });
    }
  });

  it('needs a subcommand', async () => {
    const { code, err } = await run('tasks');
    expect(code).toBe(1);
    expect(err).toContain('list, validate, generate or integrity');
  });
});

describe('--tasks DIR, as on every other command', () => {
  it('tasks list and validate take --tasks like the positional folder', async () => {
    for (const cmd of ['list', 'validate']) {
      const positional = await run('tasks', cmd, FIXTURES, '--json');
      const flag = await run('tasks', cmd, '--tasks', FIXTURES, '--json');
      expect(flag.code, cmd).toBe(1);
      expect(flag.out, cmd).toBe(positional.out);
      expect(flag.out, cmd).toContain('bad-spec-roots');
    }
  });

  it('tasks integrity takes --tasks', async () => {
    const r = await run('tasks', 'integrity', '--tasks', fixture('good-standard'), '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ tasks: 1, findings: [] });
  });

  it('refuses two different folders rather than picking one', async () => {
    const r = await run('tasks', 'list', fixture('good-standard'), '--tasks', FIXTURES);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`two task folders: --tasks ${FIXTURES} and ${fixture('good-standard')}`);
  });
});
