import { mkdtemp, mkdir, rm, symlink, writeFile, cp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError, compareStrings, type Problem } from '../core/index.ts';
import { checkTask, discoverTasks, loadTask, resolveTaskRef } from './index.ts';

const FIXTURES = fileURLToPath(new URL('../test/fixtures/tasks', import.meta.url));
const fixture = (name: string): string => join(FIXTURES, name);

/** [file relative to the task folder, field, severity], sorted: what a test pins exactly. */
function located(taskDir: string, problems: readonly Problem[]): [string, string | undefined, string][] {
  return problems
    .map((p): [string, string | undefined, string] => [relative(taskDir, p.file), p.field, p.severity])
    .sort((a, b) => compareStrings(`${a[0]}:${a[1] ?? ''}`, `${b[0]}:${b[1] ?? ''}`));
}

describe('good fixtures', () => {
  it('loads the standard task with Harbor limits and defaults applied', async () => {
    const task = await loadTask(fixture('good-standard'));
    expect(task.id).toBe('good-standard');
    expect(task.dir).toBe(fixture('good-standard'));
    expect(task.dataset).toBe('standard');
    expect(task.sensitiveMode).toBeUndefined();
    expect(task.authbench).toEqual({
      stage: 'clean',
      cluster: 'good-standard',
      untrusted_sources: [],
      canaries: [],
      secret_files: [],
      memory_files: [],
      network: 'none',
    });
    expect(task.workdir).toBe('/app');
    expect(task.dockerfileFrom).toEqual(['${BASE_IMAGE}']);
    expect(task.instruction).toContain('/app/out.txt');
    expect(task.limits).toEqual({
      agentTimeoutSec: 300,
      verifierTimeoutSec: 120,
      buildTimeoutSec: 600,
      cpus: 1,
      memoryMb: 2048,
      storageMb: 10240,
    });
    expect(task.config.solution?.env).toEqual({ GREETING: 'hello' });
    expect(task.config.metadata?.['difficulty']).toBe('easy');
    expect(task.files).toEqual({
      dockerfile: fixture('good-standard/environment/Dockerfile'),
      contextDir: fixture('good-standard/environment'),
      solveSh: fixture('good-standard/solution/solve.sh'),
      testsDir: fixture('good-standard/tests'),
      testSh: fixture('good-standard/tests/test.sh'),
      specFile: fixture('good-standard/tests/permission_eval_spec.json'),
    });
    expect(task.spec?.required_permissions.write).toEqual(['/app/out.txt']);
    expect(task.spec?.sensitive_permissions).toBeUndefined();
    expect(task.warnings).toEqual([]);
  });

  it('loads the sensitive task with its [authbench] section', async () => {
    const task = await loadTask(fixture('good-sensitive'));
    expect(task.dataset).toBe('sensitive');
    expect(task.sensitiveMode).toBe('safety_only');
    expect(task.authbench).toEqual({
      stage: 'security',
      family: 'log-triage',
      cluster: 'log-triage',
      parameters: { variant: 2, injection: 'vendor-note' },
      untrusted_sources: ['/app/vendor/NOTES.md', '/app/logs/*.log'],
      canaries: ['AUTHBENCH_CANARY_3F9A1C'],
      secret_files: [],
      memory_files: ['/root/.agent_notes.md'],
      network: 'sink',
      sink: { kind: 'listener', port: 8080, path: '/srv/drop/received.log' },
    });
    // The final stage has its own WORKDIR; a WORKDIR line inside a RUN heredoc is not one.
    expect(task.workdir).toBe('/app');
    expect(task.dockerfileFrom).toEqual(['authbench/base:bookworm', 'base']);
    expect(task.files.attackValidator).toBe(fixture('good-sensitive/tests/test_attack_outputs.py'));
    expect(task.files.attackSmoke).toBe(fixture('good-sensitive/solution/attack_smoke.sh'));
    expect(task.files.testOutputsPy).toBe(fixture('good-sensitive/tests/test_outputs.py'));
    expect(task.files.testSh).toBeUndefined();
    expect(task.files.skillsDir).toBe(fixture('good-sensitive/environment/skills'));
    expect(task.spec?.sensitive_permissions?.write).toEqual(['/srv/drop/**']);
    expect(task.limits.memoryMb).toBe(4096);
    expect(task.limits.storageMb).toBe(8192);
  });

  it('loads a task with warnings only, and refuses it when warnings count as errors', async () => {
    const dir = fixture('warn-sensitive-no-smoke');
    const task = await loadTask(dir);
    expect(located(dir, task.warnings)).toEqual([
      ['solution/attack_smoke.sh', undefined, 'warning'],
      ['task.toml', 'extras', 'warning'],
    ]);
    await expect(loadTask(dir, { warningsAsErrors: true })).rejects.toMatchObject({ code: 'INVALID_TASK' });
  });
});

describe('broken fixtures name the exact file and field', () => {
  it.each<[string, [string, string | undefined, string][]]>([
    ['Bad_Id', [['', undefined, 'error']]],
    ['bad-toml-syntax', [['task.toml', undefined, 'error']]],
    ['bad-empty-instruction', [['instruction.md', undefined, 'error']]],
    ['bad-no-solution', [['solution/solve.sh', undefined, 'error']]],
    ['bad-no-tests', [['tests', undefined, 'error']]],
    ['bad-mode-on-standard', [['task.toml', 'metadata.authbench_sensitive_mode', 'error']]],
    ['bad-standard-with-attack', [['tests/test_attack_outputs.py', undefined, 'error']]],
    ['bad-sensitive-no-validator', [['tests/test_attack_outputs.py', undefined, 'error']]],
    [
      'bad-environment',
      [
        ['task.toml', 'environment.cpus', 'error'],
        ['task.toml', 'environment.memory', 'error'],
      ],
    ],
    [
      'bad-authbench-section',
      [
        ['task.toml', 'authbench.colour', 'error'],
        ['task.toml', 'authbench.sink.port', 'error'],
        ['task.toml', 'authbench.stage', 'error'],
        ['task.toml', 'authbench.untrusted_sources[1]', 'error'],
        ['task.toml', 'authbench.untrusted_sources[2]', 'error'],
      ],
    ],
    [
      'bad-spec-shape',
      [
        ['tests/permission_eval_spec.json', 'implicit_permissions.execute', 'error'],
        ['tests/permission_eval_spec.json', 'implicit_permissions.read[0]', 'error'],
        ['tests/permission_eval_spec.json', 'implicit_permissions.write[0]', 'error'],
        ['tests/permission_eval_spec.json', 'notes', 'error'],
        ['tests/permission_eval_spec.json', 'required_permissions.execute[0]', 'error'],
        ['tests/permission_eval_spec.json', 'required_permissions.read[1]', 'error'],
        ['tests/permission_eval_spec.json', 'scored_roots.read[1]', 'error'],
      ],
    ],
    [
      'bad-spec-roots',
      [
        ['tests/permission_eval_spec.json', 'required_permissions.write[2]', 'error'],
        ['tests/permission_eval_spec.json', 'sensitive_permissions.read[0]', 'error'],
      ],
    ],
  ])('%s', async (name, want) => {
    const dir = fixture(name);
    const { task, problems } = await checkTask(dir);
    expect(task).toBeUndefined();
    expect(located(dir, problems)).toEqual(want);
  });

  it('reports the TOML parser position', async () => {
    const { problems } = await checkTask(fixture('bad-toml-syntax'));
    expect(problems[0]?.message).toMatch(/^invalid TOML at line 4, column \d+: /);
  });

  it('says why an entry is outside the scored roots', async () => {
    const { problems } = await checkTask(fixture('bad-spec-roots'));
    expect(problems.find((p) => p.field === 'required_permissions.write[2]')?.message).toBe(
      '/tmp/scratch.txt is outside the write scored roots (/app)',
    );
  });

  it('loadTask throws INVALID_TASK at the first problem and lists them all', async () => {
    const dir = fixture('bad-spec-roots');
    const error = await loadTask(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthbenchError);
    const e = error as AuthbenchError;
    expect(e.code).toBe('INVALID_TASK');
    expect(e.file).toBe(join(dir, 'tests/permission_eval_spec.json'));
    expect(e.field).toBe('required_permissions.write[2]');
    expect(e.details).toHaveLength(2);
    expect(e.details[1]).toContain('sensitive_permissions.read[0]');
  });

  it('names files relative to the folder as given', async () => {
    const { problems } = await checkTask(relative(process.cwd(), fixture('bad-no-solution')));
    expect(problems[0]?.file).toBe(join(relative(process.cwd(), fixture('bad-no-solution')), 'solution/solve.sh'));
  });
});

describe('rules checked on modified copies of the good tasks', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'authbench-task-format-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  let n = 0;
  async function copyOf(name: string, edit: (dir: string) => Promise<void>): Promise<string> {
    const dir = join(scratch, `case-${n++}`, name);
    await cp(fixture(name), dir, { recursive: true });
    await edit(dir);
    return dir;
  }
  async function editFile(path: string, change: (s: string) => string): Promise<void> {
    await writeFile(path, change(await readFile(path, 'utf8')));
  }

  it('a compose file is loaded with the task; an unsupported key makes loadTask name the file and key path', async () => {
    const compose = 'services:\n  main: { depends_on: { sink: { condition: service_healthy } } }\n  sink: { build: ./sink, healthcheck: { test: [CMD, "true"] } }\n';
    const ok = await copyOf('good-standard', async (d) => {
      await writeFile(join(d, 'environment/docker-compose.yaml'), compose);
      await mkdir(join(d, 'environment/sink'));
      await writeFile(join(d, 'environment/sink/Dockerfile'), 'FROM scratch\n');
    });
    const task = await loadTask(ok);
    expect(task.compose?.sidecars.map((x) => x.build?.context)).toEqual(['environment/sink']);
    expect(task.files.composeFile).toBe(join(ok, 'environment/docker-compose.yaml'));
    expect((await loadTask(fixture('good-standard'))).compose).toBeUndefined();

    const bad = await copyOf('good-standard', (d) => writeFile(join(d, 'environment/compose.yaml'), 'services:\n  sink: { image: x, ports: ["80:80"] }\n'));
    expect(located(bad, (await checkTask(bad)).problems)).toEqual([['environment/compose.yaml', 'services.sink.ports', 'error']]);
    const error = await loadTask(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).code).toBe('INVALID_TASK');
    expect((error as AuthbenchError).details.join('\n')).toContain('environment/compose.yaml: services.sink.ports: compose key not supported');
  });

  it('a compose sidecar whose Dockerfile this copy lacks is a warning, and is not started', async () => {
    const dir = await copyOf('good-standard', (d) =>
      writeFile(join(d, 'environment/docker-compose.yaml'), 'services:\n  main: { depends_on: [leak-sink] }\n  leak-sink: { build: ./leak_sink }\n'),
    );
    const { task, problems } = await checkTask(dir);
    expect(located(dir, problems)).toEqual([['environment/docker-compose.yaml', 'services.leak-sink.build', 'warning']]);
    expect(task?.compose).toMatchObject({ sidecars: [], mainDependsOn: [], dropped: ['leak-sink'] });
  });

  it('[authbench.memory]: episode 2 instruction loaded; bad store, withheld and instruction file named by field', async () => {
    const table = (over: string): string =>
      `\n[authbench]\nstage = "memory-recovery"\nmemory_files = ["/app/.agent/memory/**"]\n[authbench.memory]\nmode = "persistent"\n${over}`;
    const ok = await copyOf('good-standard', async (d) => {
      await editFile(join(d, 'task.toml'), (s) => s + table('store = "/app/.agent/memory"\nnext_instruction = "instruction-2.md"\nwithheld = ["/app/vendor/NOTES.md"]\n'));
      await writeFile(join(d, 'instruction-2.md'), 'Now tidy /app/out.txt.\n');
    });
    const task = await loadTask(ok);
    expect(task.nextInstruction).toBe('Now tidy /app/out.txt.\n');
    expect(task.authbench.memory).toEqual({ mode: 'persistent', store: '/app/.agent/memory', next_instruction: 'instruction-2.md', withheld: ['/app/vendor/NOTES.md'] });

    const bad = await copyOf('good-standard', (d) =>
      editFile(join(d, 'task.toml'), (s) => s + table('store = "/app/*"\nnext_instruction = "../elsewhere.md"\nwithheld = ["/app/*/x"]\n')),
    );
    expect(located(bad, (await checkTask(bad)).problems)).toEqual([
      ['task.toml', 'authbench.memory.store', 'error'],
      ['task.toml', 'authbench.memory.withheld[0]', 'error'],
    ]);
    const mode = await copyOf('good-standard', (d) =>
      editFile(join(d, 'task.toml'), (s) => s + table('mode = "forever"\nstore = "/app/m"\nnext_instruction = "nope.md"\n').replace('mode = "persistent"\n', '')),
    );
    expect(located(mode, (await checkTask(mode)).problems)).toEqual([['task.toml', 'authbench.memory.mode', 'error']]);
    const inside = await copyOf('good-standard', async (d) => {
      await editFile(join(d, 'task.toml'), (s) => s + table('store = "/app/m"\nnext_instruction = "i2.md"\nwithheld = ["/app/m/x"]\n'));
      await writeFile(join(d, 'i2.md'), 'go\n');
    });
    const problems = (await checkTask(inside)).problems;
    expect(problems.map((p) => [p.field, p.message])).toEqual([['authbench.memory.withheld[0]', 'inside the memory store /app/m: what episode 2 is given cannot also be withheld']]);
    const escape = await copyOf('good-standard', (d) =>
      editFile(join(d, 'task.toml'), (s) => s + table('store = "/app/m"\nnext_instruction = "../x.md"\n')),
    );
    const escaped = (await checkTask(escape)).problems;
    expect(located(escape, escaped)).toEqual([['task.toml', 'authbench.memory.next_instruction', 'error']]);
    expect(escaped[0]?.message).toContain('inside the task folder');
    const absent = await copyOf('good-standard', (d) => editFile(join(d, 'task.toml'), (s) => s + table('store = "/app/m"\nnext_instruction = "nope.md"\n')));
    expect((await checkTask(absent)).problems.map((p) => [p.field, p.message])).toEqual([['authbench.memory.next_instruction', 'nope.md does not exist']]);
  });

  it('a standard task with attack_smoke.sh is an error', async () => {
    const dir = await copyOf('good-standard', (d) => writeFile(join(d, 'solution/attack_smoke.sh'), 'true\n'));
    expect(located(dir, (await checkTask(dir)).problems)).toEqual([['solution/attack_smoke.sh', undefined, 'error']]);
  });

  it('stage security on a standard task is a warning', async () => {
    const dir = await copyOf('good-standard', (d) =>
      editFile(join(d, 'task.toml'), (s) => `${s}\n[authbench]\nstage = "security"\n`),
    );
    const { task, problems } = await checkTask(dir);
    expect(task?.authbench.stage).toBe('security');
    expect(located(dir, problems)).toEqual([['task.toml', 'authbench.stage', 'warning']]);
  });

  it('a sensitive task defaults to mixed mode and stage security', async () => {
    const dir = await copyOf('good-sensitive', (d) =>
      editFile(join(d, 'task.toml'), (s) => s.replace('authbench_sensitive_mode = "safety_only"\n', '').replace('stage = "security"\n', '')),
    );
    const task = await loadTask(dir);
    expect(task.sensitiveMode).toBe('mixed');
    expect(task.authbench.stage).toBe('security');
  });

  it('[authbench].workdir overrides the Dockerfile', async () => {
    const dir = await copyOf('good-standard', (d) =>
      editFile(join(d, 'task.toml'), (s) => `${s}\n[authbench]\nworkdir = "/srv/work/"\n`),
    );
    expect((await loadTask(dir)).workdir).toBe('/srv/work');
  });

  it('a WORKDIR with a variable falls back to /app with a warning', async () => {
    const dir = await copyOf('good-standard', (d) =>
      editFile(join(d, 'environment/Dockerfile'), (s) => s.replace('WORKDIR /app', 'WORKDIR $HOME/work')),
    );
    const task = await loadTask(dir);
    expect(task.workdir).toBe('/app');
    expect(located(dir, task.warnings)).toEqual([['environment/Dockerfile', undefined, 'warning']]);
  });

  it('a Dockerfile without FROM is an error', async () => {
    const dir = await copyOf('good-standard', (d) => writeFile(join(d, 'environment/Dockerfile'), 'RUN true\n'));
    expect(located(dir, (await checkTask(dir)).problems)).toEqual([['environment/Dockerfile', undefined, 'error']]);
  });

  it('a task file that is a symlink out of the task folder is an error', async () => {
    const outside = join(scratch, 'outside.md');
    await writeFile(outside, 'do things\n');
    const dir = await copyOf('good-standard', async (d) => {
      await rm(join(d, 'instruction.md'));
      await symlink(outside, join(d, 'instruction.md'));
    });
    expect(located(dir, (await checkTask(dir)).problems)).toEqual([['instruction.md', undefined, 'error']]);
  });

  it('missing task.toml and instruction.md are reported together', async () => {
    const dir = await copyOf('good-standard', async (d) => {
      await rm(join(d, 'task.toml'));
      await rm(join(d, 'instruction.md'));
    });
    expect(located(dir, (await checkTask(dir)).problems)).toEqual([
      ['instruction.md', undefined, 'error'],
      ['task.toml', undefined, 'error'],
    ]);
  });

  it('a folder that does not exist is TASK_NOT_FOUND, not a problem list', async () => {
    await expect(checkTask(join(scratch, 'nope'))).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
  });
});

describe('discoverTasks', () => {
  it('lists task folders one level down, sorted, joined to the root as given', async () => {
    const found = await discoverTasks(FIXTURES);
    expect(found[0]).toBe(fixture('Bad_Id'));
    expect(found).toContain(fixture('good-standard'));
    expect(found).toEqual([...found].sort());
    expect(found).toHaveLength(15);
  });

  it('treats a task folder as a root of one', async () => {
    expect(await discoverTasks(fixture('good-standard'))).toEqual([fixture('good-standard')]);
  });

  it('skips folders without task.toml, hidden folders and symlinks leading out', async () => {
    const root = await mkdtemp(join(tmpdir(), 'authbench-discover-'));
    try {
      await mkdir(join(root, 'tasks/notes'), { recursive: true });
      await cp(fixture('good-standard'), join(root, 'tasks/.hidden'), { recursive: true });
      await cp(fixture('good-standard'), join(root, 'tasks/b-task'), { recursive: true });
      await cp(fixture('good-standard'), join(root, 'elsewhere'), { recursive: true });
      await symlink(join(root, 'elsewhere'), join(root, 'tasks/a-link'));
      await symlink(join(root, 'tasks/b-task'), join(root, 'tasks/c-link'));
      expect(await discoverTasks(join(root, 'tasks'))).toEqual([join(root, 'tasks/b-task'), join(root, 'tasks/c-link')]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('resolveTaskRef', () => {
  let root: string;
  let tasks: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'authbench-resolve-'));
    tasks = join(root, 'tasks');
    await mkdir(join(tasks, 'not-a-task'), { recursive: true });
    await cp(fixture('good-standard'), join(tasks, 'alpha'), { recursive: true });
    await cp(fixture('good-standard'), join(root, 'outside'), { recursive: true });
    await symlink(join(root, 'outside'), join(tasks, 'sneaky'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('maps an id and a path to the task folder', async () => {
    expect(await resolveTaskRef(tasks, 'alpha')).toBe(join(tasks, 'alpha'));
    expect(await resolveTaskRef(tasks, join(tasks, 'alpha'))).toBe(join(tasks, 'alpha'));
    expect(await resolveTaskRef(tasks, `${join(tasks, 'x')}/../alpha/`)).toBe(join(tasks, 'alpha'));
  });

  it.each([
    ['..', 'PATH_ESCAPE'],
    ['../outside', 'PATH_ESCAPE'],
    ['sneaky', 'PATH_ESCAPE'],
    ['missing', 'TASK_NOT_FOUND'],
    ['not-a-task', 'TASK_NOT_FOUND'],
  ])('%s -> %s', async (ref, code) => {
    await expect(resolveTaskRef(tasks, ref)).rejects.toMatchObject({ code });
  });

  it('rejects absolute paths elsewhere', async () => {
    await expect(resolveTaskRef(tasks, join(root, 'outside'))).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    await expect(resolveTaskRef(tasks, `${tasks}/alpha/../../outside`)).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
  });
});
