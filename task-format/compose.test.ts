/**
 * The compose subset authbench starts (task-format/compose.ts): what it reads
 * and the error each unsupported key gets.
 */
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../core/index.ts';
import { parseCompose, parseDurationMs, withoutSidecars } from './compose.ts';

const FILE = 'environment/docker-compose.yaml';
const errors = (text: string): string[] => parseCompose(text, FILE).problems.map(formatProblem);

describe('parseCompose', () => {
  it('reads the AuthBench ssrf task: main waits for a healthy sidecar built from a folder', () => {
    const text = [
      'services:',
      '  main:',
      '    pull_policy: never',
      '    depends_on:',
      '      metadata-mock:',
      '        condition: service_healthy',
      '  metadata-mock:',
      '    build:',
      '      context: ./metadata_mock',
      '      dockerfile: Dockerfile',
      '    healthcheck:',
      '      test: ["CMD", "python3", "-c", "print(1)"]',
      '      interval: 5s',
      '      timeout: 1m30s',
      '      retries: 10',
    ].join('\n');
    const { compose, problems } = parseCompose(text, FILE);
    expect(problems).toEqual([]);
    expect(compose).toEqual({
      file: FILE,
      mainDependsOn: [{ service: 'metadata-mock', condition: 'service_healthy' }],
      mainEnvironment: {},
      dropped: [],
      sidecars: [
        {
          name: 'metadata-mock',
          build: { context: 'environment/metadata_mock', dockerfile: 'Dockerfile', args: {} },
          healthcheck: { test: ['CMD', 'python3', '-c', 'print(1)'], intervalMs: 5000, timeoutMs: 90_000, retries: 10 },
          dependsOn: [],
          environment: {},
        },
      ],
    });
  });

  it('orders sidecars so dependencies start first, and reads the short forms', () => {
    const text = [
      'services:',
      '  web: { image: local/web, depends_on: [db], environment: [MODE=test, "N=1"], command: serve --port 80 }',
      '  db: { build: ./db, environment: { A: 1, B: true, C: null }, healthcheck: { test: "pg_isready" } }',
      '  init: { build: { context: init, args: [X=1] }, entrypoint: ["/bin/init"] }',
      '  main: { depends_on: { web: {}, init: { condition: service_completed_successfully } }, environment: { TZ: UTC } }',
    ].join('\n');
    const { compose, problems } = parseCompose(text, FILE);
    expect(problems).toEqual([]);
    expect(compose?.sidecars.map((s) => s.name)).toEqual(['db', 'init', 'web']);
    const byName = new Map(compose?.sidecars.map((s) => [s.name, s]));
    expect(byName.get('web')).toMatchObject({ image: 'local/web', dependsOn: [{ service: 'db', condition: 'service_started' }], environment: { MODE: 'test', N: '1' }, command: ['serve', '--port', '80'] });
    expect(byName.get('db')).toMatchObject({ build: { context: 'environment/db' }, environment: { A: '1', B: 'true' }, healthcheck: { test: ['CMD-SHELL', 'pg_isready'] } });
    expect(byName.get('init')).toMatchObject({ build: { context: 'environment/init', args: { X: '1' } }, entrypoint: ['/bin/init'] });
    expect(compose?.mainDependsOn).toEqual([
      { service: 'web', condition: 'service_started' },
      { service: 'init', condition: 'service_completed_successfully' },
    ]);
    expect(compose?.mainEnvironment).toEqual({ TZ: 'UTC' });
  });

  it('names the file and the key path of every unsupported key', () => {
    expect(errors('services:\n  x:\n    image: a\n    ports: ["80:80"]\n    volumes: [./d:/d]\n')).toEqual([
      `error: ${FILE}: services.x.ports: compose key not supported by authbench (supported: build, image, healthcheck, depends_on, environment, command, entrypoint, expose, pull_policy)`,
      `error: ${FILE}: services.x.volumes: compose key not supported by authbench (supported: build, image, healthcheck, depends_on, environment, command, entrypoint, expose, pull_policy)`,
    ]);
    expect(errors('services:\n  main:\n    command: sleep\n')).toEqual([
      `error: ${FILE}: services.main.command: compose key not supported on the task container (main) (supported: depends_on, environment, expose, pull_policy)`,
    ]);
    expect(errors('services:\n  x:\n    build: { context: ., target: dev }\n')).toEqual([`error: ${FILE}: services.x.build.target: compose key not supported by authbench`]);
    expect(errors('services:\n  x:\n    image: a\n    healthcheck: { test: [CMD, "true"], start_interval: 1s }\n')).toEqual([
      `error: ${FILE}: services.x.healthcheck.start_interval: compose key not supported by authbench`,
    ]);
    expect(errors('services: {}\nnetworks: { n: {} }\n')).toEqual([`error: ${FILE}: networks: compose key not supported by authbench (supported: services, version, name)`]);
  });

  it('refuses what it cannot start offline or safely', () => {
    expect(errors('services:\n  x:\n    image: a\n    pull_policy: always\n')[0]).toMatch(/services\.x\.pull_policy: /);
    expect(errors('services:\n  x:\n    image: a\n    environment: { KEY: "${OPENAI_API_KEY}" }\n')).toEqual([
      `error: ${FILE}: services.x.environment.KEY: variable interpolation ($VAR) is not supported`,
    ]);
    expect(errors('services:\n  x:\n    image: a\n    depends_on: { x: { condition: service_ready } }\n')[0]).toMatch(/services\.x\.depends_on/);
    expect(errors('services:\n  x:\n    image: a\n    healthcheck: { test: [CMD, "true"], interval: soon }\n')[0]).toMatch(/services\.x\.healthcheck\.interval: .*compose duration/);
  });

  it('checks the graph: known services, no self or main dependency, no cycle, something to run', () => {
    expect(errors('services:\n  main: { depends_on: [nope] }\n')).toEqual([`error: ${FILE}: services.main.depends_on.nope: no such service`]);
    expect(errors('services:\n  x: { image: a, depends_on: [x] }\n')).toEqual([`error: ${FILE}: services.x.depends_on.x: a service cannot depend on itself`]);
    expect(errors('services:\n  x: { image: a, depends_on: [main] }\n  main: {}\n')).toEqual([`error: ${FILE}: services.x.depends_on.main: a service cannot wait for the task container`]);
    expect(errors('services:\n  a: { image: a, depends_on: [b] }\n  b: { image: b, depends_on: [a] }\n')).toEqual([`error: ${FILE}: services: depends_on forms a cycle`]);
    expect(errors('services:\n  x: { expose: [80] }\n')).toEqual([`error: ${FILE}: services.x: needs \`build\` or \`image\``]);
    expect(errors('services:\n  x: { build: ../../elsewhere }\n')).toEqual([`error: ${FILE}: services.x.build.context: leads outside the task folder`]);
    expect(errors('services:\n  "bad name": { image: a }\n')[0]).toMatch(/services\.bad name: service name must match/);
  });

  it('reports YAML syntax errors with their position', () => {
    expect(errors('services:\n  x: [unclosed\n')[0]).toMatch(/^error: environment\/docker-compose\.yaml: invalid YAML at line \d+, column \d+/);
  });
});

describe('withoutSidecars', () => {
  it('drops the services and every wait on them', () => {
    const { compose } = parseCompose('services:\n  main: { depends_on: [sink, db] }\n  sink: { build: ./leak_sink }\n  db: { image: d }\n  web: { image: w, depends_on: [sink] }\n', FILE);
    if (compose === undefined) throw new Error('fixture does not parse');
    const left = withoutSidecars(compose, new Set(['sink']));
    expect(left.sidecars.map((s) => [s.name, s.dependsOn])).toEqual([
      ['db', []],
      ['web', []],
    ]);
    expect(left.mainDependsOn).toEqual([{ service: 'db', condition: 'service_started' }]);
    expect(left.dropped).toEqual(['sink']);
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['5s', 5000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['1.5s', 1500],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
  });
});
