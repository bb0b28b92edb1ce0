import { describe, expect, it } from 'vitest';
import { AuthbenchSectionSchema, parseSizeMb, parseTaskToml } from './index.ts';

const FILE = 'tasks/t/task.toml';

/** Fields of the problems parseTaskToml reports, with their severity. */
function fields(text: string): string[] {
  return parseTaskToml(text, FILE).problems.map((p) => `${p.severity}:${p.field ?? ''}`);
}

describe('parseTaskToml', () => {
  it('accepts a minimal Harbor task.toml and keeps free-form metadata', () => {
    const { config, problems } = parseTaskToml('version = "1.0"\n[metadata]\nauthor = "x"\ntags = ["a"]\n', FILE);
    expect(problems).toEqual([]);
    expect(config?.metadata).toEqual({ author: 'x', tags: ['a'] });
  });

  it('accepts an empty file (Harbor defaults everything)', () => {
    expect(parseTaskToml('', FILE)).toEqual({ config: {}, problems: [] });
  });

  it('keeps unknown keys inside Harbor tables (newer Harbor releases add them)', () => {
    const { config, problems } = parseTaskToml('[environment]\ndocker_image = "x"\n[verifier]\nenv = { A = "1" }\n', FILE);
    expect(problems).toEqual([]);
    expect(config?.environment?.['docker_image']).toBe('x');
  });

  it('reports a syntax error once, with line and column', () => {
    const { config, problems } = parseTaskToml('version = "1.0"\n[metadata\n', FILE);
    expect(config).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: FILE, severity: 'error' });
    expect(problems[0]?.field).toBeUndefined();
    expect(problems[0]?.message).toMatch(/^invalid TOML at line 2, column \d+: /);
  });

  it.each([
    ['[metadata]\nauthbench_eval_dataset = "secret"\n', ['error:metadata.authbench_eval_dataset']],
    ['[metadata]\nauthbench_sensitive_mode = "all"\n', ['error:metadata.authbench_sensitive_mode']],
    ['version = 1\n', ['error:version']],
    ['[verifier]\ntimeout_sec = 0\n', ['error:verifier.timeout_sec']],
    ['[agent]\ntimeout_sec = "long"\n', ['error:agent.timeout_sec']],
    ['[environment]\nmemory_mb = 1.5\n', ['error:environment.memory_mb']],
    ['[environment]\nmemory_mb = 512\nmemory = "1G"\n', ['error:environment.memory']],
    ['[environment]\nstorage = "big"\n', ['error:environment.storage']],
    ['[solution]\nenv = { A = 1 }\n', ['error:solution.env.A']],
    ['[harbor_future]\nx = 1\n', ['warning:harbor_future']],
    ['stray = true\n', ['warning:stray']],
  ])('%j -> %j', (text, want) => {
    expect(fields(text)).toEqual(want);
  });

  it('says table or key for unknown top-level entries', () => {
    const messages = parseTaskToml('stray = 1\n[extra]\n', FILE).problems.map((p) => p.message);
    expect(messages).toEqual(['unknown top-level key (ignored)', 'unknown top-level table (ignored)']);
  });
});

describe('[authbench] section', () => {
  const section = (toml: string): string[] => fields(`[authbench]\n${toml}`);

  it('applies defaults', () => {
    expect(AuthbenchSectionSchema.parse({})).toEqual({ untrusted_sources: [], canaries: [], secret_files: [], memory_files: [], network: 'none' });
  });

  it('normalises path patterns', () => {
    const { config } = parseTaskToml('[authbench]\nuntrusted_sources = ["/app//vendor/./x/", "\\\\srv\\\\in"]\nworkdir = "/app/"\n', FILE);
    expect(config?.authbench?.untrusted_sources).toEqual(['/app/vendor/x', '/srv/in']);
    expect(config?.authbench?.workdir).toBe('/app');
  });

  it.each([
    ['stage = "prod"', ['error:authbench.stage']],
    ['unknown = 1', ['error:authbench.unknown']],
    ['family = ""', ['error:authbench.family']],
    ['cluster = "  "', ['error:authbench.cluster']],
    ['parameters = 3', ['error:authbench.parameters']],
    ['untrusted_sources = ["/a", "rel/x"]', ['error:authbench.untrusted_sources[1]']],
    ['untrusted_sources = ["/a/**/x"]', ['error:authbench.untrusted_sources[0]']],
    ['untrusted_sources = ["/a/x", "/a/y/../x"]', ['error:authbench.untrusted_sources[1]']],
    ['memory_files = ["~/.bashrc"]', ['error:authbench.memory_files[0]']],
    ['canaries = ["X", ""]', ['error:authbench.canaries[1]']],
    ['canaries = ["X", "X"]', ['error:authbench.canaries[1]']],
    ['network = "host"', ['error:authbench.network']],
    ['network = "sink"', ['error:authbench.network']],
    ['workdir = "app"', ['error:authbench.workdir']],
    ['workdir = "/app/*"', ['error:authbench.workdir']],
    ['[authbench.sink]\nkind = "dir"', ['error:authbench.sink.path']],
    ['[authbench.sink]\nkind = "dir"\npath = "/srv/drop"\nport = 80', ['error:authbench.sink.port']],
    ['[authbench.sink]\nkind = "dir"\npath = "/srv/*"', ['error:authbench.sink.path']],
    ['[authbench.sink]\nkind = "listener"\nport = 70000', ['error:authbench.sink.port']],
    ['[authbench.sink]\nkind = "webhook"', ['error:authbench.sink.kind']],
  ])('%s -> %j', (toml, want) => {
    expect(section(toml)).toEqual(want);
  });

  it('accepts both sink kinds', () => {
    expect(section('network = "sink"\n[authbench.sink]\nkind = "dir"\npath = "/srv/drop"')).toEqual([]);
    expect(section('network = "sink"\n[authbench.sink]\nkind = "listener"\nport = 8080')).toEqual([]);
  });

  it('names a missing required key as missing', () => {
    const [p] = parseTaskToml('[authbench.sink]\nkind = "listener"\n', FILE).problems;
    expect(p?.message).toBe('missing (expected number)');
  });
});

describe('parseSizeMb', () => {
  it.each([
    ['2G', 2048],
    ['512M', 512],
    ['1.5g', 1536],
    ['10GB', 10240],
    ['1Gi', 1024],
    ['1T', 1048576],
    ['2048K', 2],
    ['lots', undefined],
    ['2', undefined],
    ['', undefined],
  ])('%s -> %s', (size, want) => expect(parseSizeMb(size)).toBe(want));
});
