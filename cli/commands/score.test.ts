import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../sandbox/paths/index.ts';
import { serializeGold, specToGold } from '../../gold/index.ts';
import { buildCandidateSnapshot } from '../../score/index.ts';
import { loadTask } from '../../task-format/index.ts';
import { runCli } from '../../test/cli.ts';

// The bundled csv-sales-report task, scored against a stored candidate snapshot (no Docker needed).
const TASKS = fileURLToPath(new URL('../../tasks', import.meta.url));
const ROOTS = { read: ['/app', '/root'], write: ['/app', '/root'], execute: ['/usr/bin', '/usr/local/bin', '/app'] };

const run = runCli;

let dir = '';
const file = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-score-cli-'));
  const image = buildSnapshot([
    { path: '/app/data/sales.csv', type: 'file' },
    { path: '/root/.bashrc', type: 'file' },
    { path: '/usr/bin/bash', type: 'file', mode: 0o755 },
    { path: '/usr/bin/python3.11', type: 'file', mode: 0o755 },
    { path: '/usr/bin/cat', type: 'file', mode: 0o755 },
    { path: '/usr/bin/python3', type: 'symlink', link: 'python3.11' },
    { path: '/usr/local/bin', type: 'dir' },
    { path: '/bin', type: 'symlink', link: 'usr/bin' },
  ]);
  await mkdir(join(dir, 'ot', 'csv-sales-report'), { recursive: true });
  await writeFile(join(dir, 'ot', 'csv-sales-report', 'candidates.json'), JSON.stringify(buildCandidateSnapshot(image, ROOTS)));
  await mkdir(join(dir, 'ot-other', 'csv-sales-report'), { recursive: true });
  await writeFile(
    join(dir, 'ot-other', 'csv-sales-report', 'candidates.json'),
    JSON.stringify(buildCandidateSnapshot(image, { ...ROOTS, read: ['/srv'] })),
  );
  // A gold set as gen-gold writes it (imported from the spec, plus one extra required read).
  const spec = (await loadTask(join(TASKS, 'csv-sales-report'))).spec;
  if (spec === undefined) throw new Error('csv-sales-report has no spec');
  const gold = specToGold({ ...spec, required_permissions: { ...spec.required_permissions, read: [...spec.required_permissions.read, '/root/.bashrc'] } }, 'csv-sales-report');
  await mkdir(join(dir, 'ot-gold', 'csv-sales-report'), { recursive: true });
  await writeFile(join(dir, 'ot-gold', 'csv-sales-report', 'gold.json'), serializeGold(gold));
  await writeFile(join(dir, 'ot-gold', 'csv-sales-report', 'candidates.json'), JSON.stringify(buildCandidateSnapshot(image, ROOTS)));
  await mkdir(join(dir, 'ot-gold-only', 'csv-sales-report'), { recursive: true });
  await writeFile(join(dir, 'ot-gold-only', 'csv-sales-report', 'gold.json'), serializeGold(gold));
  await writeFile(file('gold.json'), JSON.stringify({ read: ['/app/data/sales.csv'], write: ['/app/report.json'], execute: ['/bin/bash', '/usr/bin/python3'] }));
  await writeFile(file('broad.json'), JSON.stringify({ read: ['/app/**', '/root/**'], write: ['/app/report.json', '/tmp/x'], execute: ['/usr/bin/*'] }));
  await writeFile(file('bad.json'), JSON.stringify({ read: ['app/relative'], write: [], execute: [] }));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  process.exitCode = undefined;
});
afterEach(() => {
  process.exitCode = undefined;
});

const base = (): string[] => ['score', '--task', 'csv-sales-report', '--tasks', TASKS, '--oracle-traces', join(dir, 'ot')];

describe('authbench score', () => {
  it('prints one row per policy, invalid ones scored 0 with their diagnostics', async () => {
    const { code, out } = await run(...base(), '--policy', file('gold.json'), file('broad.json'), file('bad.json'));
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^policy\s+valid\s+read P\/R\/F1\s+write P\/R\/F1\s+execute P\/R\/F1\s+macro F1\s+SER$/);
    expect(lines.find((l) => l.startsWith(file('gold.json')))).toMatch(/yes\s+1\.00\/1\.00\/1\.00\s+1\.00\/1\.00\/1\.00\s+1\.00\/1\.00\/1\.00\s+1\.00\s+n\/a$/);
    // read: 2 files under the roots, 1 gold; write: report.json + /tmp/x; execute: 3 binaries, 2 gold.
    expect(lines.find((l) => l.startsWith(file('broad.json')))).toMatch(/yes\s+0\.50\/1\.00\/0\.67\s+0\.50\/1\.00\/0\.67\s+0\.67\/1\.00\/0\.80\s+0\.71\s+n\/a$/);
    expect(lines.find((l) => l.startsWith(file('bad.json')))).toMatch(/no\s+0\.00\/0\.00\/0\.00\s+0\.00\/0\.00\/0\.00\s+0\.00\/0\.00\/0\.00\s+0\.00/);
    expect(out).toContain(`${file('bad.json')}: invalid, scored 0`);
    expect(out).toMatch(/error: .*bad\.json: read\[0\]: "app\/relative": not an absolute path/);
  });

  it('--json carries the scores, validity and problems', async () => {
    const { code, out } = await run(...base(), '--policy', file('broad.json'), file('bad.json'), '--json');
    expect(code).toBe(0);
    const json = JSON.parse(out) as { candidates: { origin: string }; results: { valid: boolean; problems: unknown[]; score: { execute: unknown } }[] };
    expect(json.candidates.origin).toBe('stored');
    expect(json.results.map((r) => r.valid)).toEqual([true, false]);
    expect(json.results[0]?.score.execute).toEqual({ precision: 2 / 3, recall: 1, f1: 0.8, tp: 2, predicted: 3, gold: 2 });
    expect(json.results[1]?.problems).toHaveLength(1);
  });

  it('--reference gold without a gold set says to run gen-gold', async () => {
    const { code, err } = await run(...base(), '--policy', file('gold.json'), '--reference', 'gold');
    expect(code).toBe(1);
    expect(err).toContain('GOLD_MISSING');
    expect(err).toContain('task csv-sales-report has no gold yet');
    expect(err).toContain('hint: run: authbench gen-gold csv-sales-report');
  });

  it('--reference gold scores against oracle-traces/<id>/gold.json', async () => {
    const argv = ['score', '--task', 'csv-sales-report', '--tasks', TASKS, '--oracle-traces', join(dir, 'ot-gold'), '--reference', 'gold'];
    const { code, out } = await run(...argv, '--policy', file('gold.json'), '--json');
    expect(code).toBe(0);
    const json = JSON.parse(out) as { reference: string; results: { score: { read: unknown } }[] };
    expect(json.reference).toBe('gold');
    // The gold set also requires /root/.bashrc, which this policy does not grant.
    expect(json.results[0]?.score.read).toEqual({ precision: 1, recall: 0.5, f1: 2 / 3, tp: 1, predicted: 1, gold: 2 });
  });

  it('scores the built-in policies by name: gold is the stored gold policy, not a file called gold', async () => {
    const argv = ['score', '--task', 'csv-sales-report', '--tasks', TASKS, '--oracle-traces', join(dir, 'ot-gold'), '--reference', 'gold'];
    const { code, out, err } = await run(...argv, '--policy', 'gold', 'allow-all', 'deny-all', '--json');
    expect(code, err).toBe(0);
    const json = JSON.parse(out) as { results: { policy: string; valid: boolean; score: { read: { recall: number; precision: number }; execute: { recall: number; precision: number }; macro_f1: number } }[] };
    const by = Object.fromEntries(json.results.map((r) => [r.policy, r]));
    expect(json.results.map((r) => r.valid)).toEqual([true, true, true]);
    expect(by.gold?.score.read).toMatchObject({ recall: 1, precision: 1 });
    // Every candidate granted: all of the gold found, and /usr/bin/cat (not gold) with it.
    expect(by['allow-all']?.score.execute.recall).toBe(1);
    expect(by['allow-all']?.score.execute.precision).toBeLessThan(1);
    expect(by['deny-all']?.score.macro_f1).toBe(0);
  });

  it('--policy gold without a stored gold set says to run gen-gold', async () => {
    const { code, err } = await run(...base(), '--policy', 'gold');
    expect(code).toBe(1);
    expect(err).toContain('GOLD_MISSING');
  });

  it('--reference gold without a stored candidate snapshot says to run gen-gold', async () => {
    const argv = ['score', '--task', 'csv-sales-report', '--tasks', TASKS, '--oracle-traces', join(dir, 'ot-gold-only'), '--reference', 'gold'];
    const { code, err } = await run(...argv, '--policy', file('gold.json'));
    expect(code).toBe(1);
    expect(err).toContain('no candidate snapshot for task csv-sales-report');
    expect(err).toContain('authbench gen-gold csv-sales-report');
  });

  it('refuses a stored snapshot built for other roots', async () => {
    const { code, err } = await run('score', '--task', 'csv-sales-report', '--tasks', TASKS, '--oracle-traces', join(dir, 'ot-other'), '--policy', file('gold.json'));
    expect(code).toBe(1);
    expect(err).toContain('was built for other scored roots');
    expect(err).toContain('--refresh-candidates');
  });

  it('requires --policy and --task', async () => {
    const { code, err } = await run('score', '--task', 'csv-sales-report');
    expect(code).toBe(1);
    expect(err).toMatch(/policy/);
  });
});
