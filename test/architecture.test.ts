/**
 * The module rules the README's architecture section states, checked: every
 * cross-module import goes through the module's index.ts, dependencies only
 * point the ways the table allows (nothing imports cli), the table below
 * allows nothing the README's table does not, and test-only modules
 * (`test-support.ts`) stay out of production code and barrels.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  docker: ['core'],
  'sandbox/paths': ['core'],
  'sandbox/trace': ['core'],
  'sandbox/ebpf': ['core', 'docker', 'sandbox/trace'],
  'sandbox/policy': ['core', 'sandbox/paths'],
  'sandbox/launcher': ['core', 'docker'],
  'sandbox/compile': ['core', 'sandbox/paths', 'sandbox/policy', 'sandbox/launcher'],
  'sandbox/run': ['core', 'docker', 'sandbox/compile', 'sandbox/launcher', 'sandbox/paths', 'sandbox/policy', 'sandbox/trace'],
  'sandbox/selftest': ['core', 'docker', 'sandbox/launcher'],
  'task-format': ['core', 'sandbox/paths'],
  models: ['core'],
  'models/relay': ['core', 'models'],
  gold: ['core', 'sandbox/paths', 'sandbox/policy', 'sandbox/trace', 'task-format'],
  score: ['core', 'docker', 'gold', 'sandbox/paths', 'sandbox/policy', 'task-format'],
  taskenv: ['core', 'docker', 'sandbox/launcher', 'sandbox/run', 'task-format'],
  validators: ['core', 'docker', 'sandbox/launcher', 'sandbox/paths', 'sandbox/trace', 'task-format', 'taskenv'],
  evaluation: ['agent', 'agents', 'containment', 'core', 'docker', 'goldstore', 'policygen', 'sandbox/ebpf', 'sandbox/policy', 'score', 'task-format', 'taskenv', 'validators'],
  oracle: ['core', 'docker', 'gold', 'goldstore', 'sandbox/compile', 'sandbox/ebpf', 'sandbox/launcher', 'sandbox/paths', 'sandbox/policy', 'sandbox/run', 'sandbox/trace', 'task-format', 'taskenv', 'validators'],
  goldstore: ['core', 'docker', 'gold', 'sandbox/paths', 'sandbox/policy', 'score', 'task-format', 'taskenv', 'validators'],
  agent: ['containment', 'core', 'docker', 'models', 'sandbox/compile', 'sandbox/paths', 'sandbox/policy', 'sandbox/run', 'sandbox/trace', 'task-format'],
  stats: ['core'],
  suite: ['core', 'task-format'],
  report: ['containment', 'core', 'evaluation', 'stats'],
  containment: ['core', 'sandbox/launcher', 'sandbox/paths', 'sandbox/policy', 'sandbox/trace', 'task-format'],
  policygen: ['agent', 'core', 'docker', 'goldstore', 'models', 'sandbox/compile', 'sandbox/policy', 'sandbox/trace', 'task-format', 'taskenv'],
  dataset: ['core', 'docker', 'evaluation', 'gold', 'goldstore', 'oracle', 'sandbox/paths', 'score', 'task-format', 'taskenv', 'validators'],
  adversarial: ['agent', 'core', 'docker', 'evaluation', 'goldstore', 'sandbox/policy', 'sandbox/trace', 'task-format', 'taskenv'],
  agents: ['core', 'docker', 'models', 'models/relay', 'sandbox/policy', 'sandbox/run', 'taskenv'],
  trajectories: ['agent', 'core', 'docker', 'evaluation'],
  attack: ['agent', 'core', 'docker', 'evaluation', 'models', 'suite'],
  cluster: ['core'],
};
// cli may import every module above; bin only cli; scripts and tests anything.

const SKIP = new Set(['node_modules', '.git', 'tasks', 'oracle-traces', 'jobs', 'test', 'scripts', 'bin', 'coverage']);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) && dir === '.') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.config.ts')) out.push(path);
  }
  return out;
}

function moduleOf(path: string): string {
  const parts = normalize(path).split('/');
  if (parts[0] === 'sandbox' && parts.length > 2) return `sandbox/${parts[1]}`;
  // The relay is a module of its own inside models/: it builds on the models module, which never imports it.
  if (parts[0] === 'models' && parts[1] === 'relay' && parts.length > 2) return 'models/relay';
  return parts[0] ?? '';
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

const edges = sourceFiles('.').flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => {
    const target = normalize(join(dirname(file), m[1] ?? m[2] ?? ''));
    return { file, target, from: moduleOf(file), to: moduleOf(target) };
  }),
);

/**
 * The README's module table: module → what its "may import" cell allows. A cell lists modules,
 * some with a parenthetical saying what for (dropped here); `sandbox/*` is every sandbox module;
 * `everything below` (cli) and `nothing` (core) are read as such.
 */
function readmeTable(markdown: string, modules: readonly string[]): Map<string, readonly string[] | 'everything'> {
  const out = new Map<string, readonly string[] | 'everything'>();
  const lines = markdown.split('\n');
  const header = lines.indexOf('| module | owns | may import |');
  expect(header, 'the README has no module table').toBeGreaterThanOrEqual(0);
  const end = lines.indexOf('', header);
  for (const line of lines.slice(header + 2, end < 0 ? undefined : end)) {
    const row = /^\| `([a-z/-]+?)\/?` \| .* \| ([^|]+) \|$/.exec(line);
    if (row === null) continue;
    const [, module = '', cell = ''] = row;
    const allowed = cell.trim();
    if (allowed === 'everything below') out.set(module, 'everything');
    else if (allowed === 'nothing') out.set(module, []);
    else {
      const names = allowed.replace(/\([^)]*\)/g, '').split(',').map((n) => n.trim());
      out.set(module, names.flatMap((n) => (n === 'sandbox/*' ? modules.filter((m) => m.startsWith('sandbox/')) : [n])));
    }
  }
  return out;
}

describe('architecture', () => {
  it('allows only what the README module table allows, for exactly its modules', () => {
    const table = readmeTable(readFileSync('README.md', 'utf8'), Object.keys(ALLOWED));
    expect(table.get('cli')).toBe('everything');
    expect([...table.keys()].filter((m) => m !== 'cli').sort()).toEqual(Object.keys(ALLOWED).sort());
    const beyond = Object.entries(ALLOWED).flatMap(([m, deps]) => {
      const readme = table.get(m);
      return deps.filter((d) => readme !== 'everything' && !(readme ?? []).includes(d)).map((d) => `${m} -> ${d}`);
    });
    expect(beyond).toEqual([]);
  });

  it('finds the modules it checks', () => {
    const seen = new Set(edges.map((e) => e.from));
    for (const m of [...Object.keys(ALLOWED).filter((m) => m !== 'core'), 'cli']) expect(seen, m).toContain(m);
  });

  it('imports other modules only through their index.ts', () => {
    const offenders = edges.filter((e) => e.from !== e.to && !e.target.endsWith('/index.ts')).map((e) => `${e.file} -> ${relative('.', e.target)}`);
    expect(offenders).toEqual([]);
  });

  it('points dependencies only the ways the README allows', () => {
    const offenders = edges
      .filter((e) => e.from !== e.to && e.from !== 'cli')
      .filter((e) => !(ALLOWED[e.from] ?? []).includes(e.to))
      .map((e) => `${e.file}: ${e.from} -> ${e.to}`);
    expect(offenders).toEqual([]);
  });

  it('keeps test-only modules (test-support.ts) out of production files and index.ts barrels', () => {
    const testOnly = (path: string): boolean => basename(path).includes('test-support');
    const offenders = edges.filter((e) => !testOnly(e.file) && testOnly(e.target)).map((e) => `${e.file} -> ${relative('.', e.target)}`);
    expect(offenders).toEqual([]);
  });
});
