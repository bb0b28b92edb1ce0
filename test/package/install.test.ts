/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/), the
 * tarball installed into an empty folder with `npm install` (dependencies from
 * the registry), and the installed `authbench` run from there with the repo's
 * pinned Node 24 — never from this checkout's sources. The `package` tier of
 * scripts/run-tests.ts; needs the npm registry; about a minute.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The `node` devDependency: Node 24 whatever the machine's own node is. */
const NODE24 = join(REPO, 'node_modules', 'node', 'bin', 'node');
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
/** A bundled task the installed package must validate. */
const TASK = 'log-triage';

let tmp: string;
/** The user's folder the tarball is installed into (and its working directory). */
let user: string;
/** The installed package: <user>/node_modules/authbench. */
let installed: string;

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The installed `authbench` (node_modules/.bin/authbench, as npm linked it) run by `node`. */
function authbench(args: readonly string[], node = NODE24): SpawnSyncReturns<string> {
  return run(node, [join(user, 'node_modules', '.bin', 'authbench'), ...args], user, { ...process.env, NO_COLOR: '1' });
}

function output(r: SpawnSyncReturns<string>): string {
  return `exit ${String(r.status)}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** A node older than 24 on PATH outside node_modules (the system's), if there is one. */
function olderNode(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const node = join(dir, 'node');
    if (!existsSync(node)) continue;
    const major = Number(run(node, ['-p', 'process.versions.node.split(".")[0]'], REPO).stdout.trim());
    return major < 24 ? node : undefined;
  }
  return undefined;
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'authbench-package-'));
  user = join(tmp, 'user');
  mkdirSync(user);
  // A package.json of its own, so npm installs here rather than in a project above the temp folder.
  writeFileSync(join(user, 'package.json'), '{ "name": "user-project", "private": true }\n');
  // npm runs prepack's `node` from node_modules/.bin: the pinned Node 24 that strips the build script's types.
  const pack = run('npm', ['pack', '--pack-destination', tmp], REPO);
  if (pack.status !== 0) throw new Error(`npm pack failed\n${output(pack)}`);
  const tarballs = readdirSync(tmp).filter((f) => f.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`npm pack wrote ${tarballs.length} tarballs\n${output(pack)}`);
  const tarball = join(tmp, tarballs[0] ?? '');
  const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], user);
  if (install.status !== 0) throw new Error(`npm install of the tarball failed\n${output(install)}`);
  installed = join(user, 'node_modules', 'authbench');
}, 600_000);

afterAll(() => {
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed tarball, installed into an empty folder', () => {
  it('is the installed package, not a link to this checkout, and ships no TypeScript sources', () => {
    expect(relative(REPO, dirname(installed)).startsWith('..')).toBe(true);
    expect(existsSync(join(installed, 'dist', 'bin', 'authbench.js'))).toBe(true);
    expect(existsSync(join(installed, 'bin', 'authbench.ts'))).toBe(false);
    expect(existsSync(join(installed, 'cli'))).toBe(false);
    expect(jsFiles(join(installed, 'dist')).filter((f) => f.endsWith('.test.js') || f.endsWith('test-support.js'))).toEqual([]);
  });

  it('runs `authbench --help` and `--version` with Node 24', () => {
    expect(run(NODE24, ['-p', 'process.versions.node'], REPO).stdout).toMatch(/^2[4-9]\.|^[3-9]\d\./);
    const help = authbench(['--help']);
    expect(help.status, output(help)).toBe(0);
    expect(help.stdout).toContain('authbench <command>');
    expect(help.stdout).toMatch(/authbench tasks\b/);
    const version = authbench(['--version']);
    expect(version.status, output(version)).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
  });

  it('validates a bundled task with `authbench tasks validate`, from the user folder', () => {
    const ok = authbench(['tasks', 'validate', '--tasks', join('node_modules', 'authbench', 'tasks', TASK), '--json']);
    expect(ok.status, output(ok)).toBe(0);
    expect(ok.stdout).toContain(TASK);
    // It really checks: a folder that is no task fails, naming it.
    const bad = authbench(['tasks', 'validate', '--tasks', join('node_modules', 'authbench', 'dist')]);
    expect(bad.status, output(bad)).toBe(1);
  });

  it('lists the bundled tasks and their gold by default from a folder without tasks/ of its own', () => {
    const listed = authbench(['tasks', 'list', '--json']);
    expect(listed.status, output(listed)).toBe(0);
    const rows = JSON.parse(listed.stdout) as { id: string; gold: boolean }[];
    expect(rows.map((r) => r.id)).toContain(TASK);
    expect(rows.find((r) => r.id === TASK)?.gold).toBe(true);
  });

  it('finds every runtime asset the code reads beside itself', () => {
    // Each `new URL('./…', import.meta.url)` in the compiled code names a file shipped next to it (scripts/build.ts).
    const literal = /new URL\(\s*['"](\.\/[^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g;
    const named = jsFiles(join(installed, 'dist')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(literal)].map((m) => ({ file: relative(installed, file), target: join(dirname(file), m[1] ?? '') })),
    );
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(named.filter((n) => !existsSync(n.target)).map((n) => `${n.file}: ${relative(installed, n.target)}`)).toEqual([]);
    // And the loaders themselves, through the installed modules: launcher build context, base map, pricing, report scripts, version.
    const probe = `
      import { existsSync, readFileSync } from 'node:fs';
      import { join } from 'node:path';
      const dist = ${JSON.stringify(join(installed, 'dist'))};
      const load = (p) => import(join(dist, p));
      const { LAUNCHER_SOURCE_DIR } = await load('sandbox/launcher/index.js');
      const { NATIVE_SOURCE_DIR } = await load('sandbox/ebpf/index.js');
      const kept = readFileSync(join(LAUNCHER_SOURCE_DIR, '.dockerignore'), 'utf8').split('\\n').filter((l) => l.startsWith('!')).map((l) => l.slice(1));
      const { loadBaseMap } = await load('docker/index.js');
      const { loadPricing } = await load('models/index.js');
      const { loadPlotAssets, loadViewerScript } = await load('report/index.js');
      const { AUTHBENCH_VERSION } = await load('core/index.js');
      process.stdout.write(JSON.stringify({
        launcher: kept.filter((f) => existsSync(join(LAUNCHER_SOURCE_DIR, f))),
        launcherExpected: kept.length,
        ebpf: ['Dockerfile', 'ab-ebpf.h', 'ab-ebpf.bpf.c', 'ab-ebpf.c'].filter((f) => existsSync(join(NATIVE_SOURCE_DIR, f))).length,
        baseMap: (await loadBaseMap(undefined, {})).entries.length,
        pricing: Object.keys(await loadPricing({ env: {} })).length,
        plots: (await loadPlotAssets()).map((a) => a.name),
        viewer: (await loadViewerScript()).length,
        version: AUTHBENCH_VERSION,
      }));`;
    const r = run(NODE24, ['--input-type=module', '-e', probe], user);
    expect(r.status, output(r)).toBe(0);
    const got = JSON.parse(r.stdout) as { launcher: string[]; launcherExpected: number; ebpf: number; baseMap: number; pricing: number; plots: string[]; viewer: number; version: string };
    expect(got.launcher).toContain('Dockerfile');
    expect(got.launcher).toContain('ab-launch.c');
    expect(got.launcher).toHaveLength(got.launcherExpected);
    // The native eBPF tracer is built from these on the user's machine (gen-gold and eval --tracer ebpf).
    expect(got.ebpf).toBe(4);
    expect(got.baseMap).toBeGreaterThan(0);
    expect(got.pricing).toBeGreaterThan(0);
    expect(got.plots).toEqual(['vega', 'vega-lite', 'vega-embed']);
    expect(got.viewer).toBeGreaterThan(0);
    expect(got.version).toBe(VERSION);
  });

  const old = olderNode();
  it.skipIf(old === undefined)(`tells an older Node (${old ?? 'none on PATH: skipped'}) it needs Node >= 24 instead of crashing`, () => {
    const r = authbench(['--help'], old);
    expect(r.status, output(r)).toBe(125);
    expect(r.stderr).toContain('authbench needs Node >= 24');
    expect(r.stderr).not.toContain('SyntaxError');
  });
});
