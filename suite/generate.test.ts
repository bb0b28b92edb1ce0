import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTask } from '../task-format/index.ts';
import { diffSuite, generateSuite, MANIFEST_FILE, ManifestSchema, STAGE_CYCLE, writeSuite } from './index.ts';

const opts = { families: ['log-triage'], perFamily: 8, seed: 3 };

describe('generateSuite', () => {
  it('is deterministic: same inputs, same hashes; another seed, other content', () => {
    const a = generateSuite(opts);
    const b = generateSuite(opts);
    expect(a.manifest).toEqual(b.manifest);
    const c = generateSuite({ ...opts, seed: 4 });
    expect(c.manifest.scenarios.map((s) => s.id)).toEqual(a.manifest.scenarios.map((s) => s.id));
    expect(c.manifest.scenarios.map((s) => s.content_sha256)).not.toEqual(a.manifest.scenarios.map((s) => s.content_sha256));
  });

  it('spreads scenarios over the stages round robin and groups each parameter draw into one cluster', () => {
    const { manifest } = generateSuite(opts);
    // The live two-episode memory variant rides along with instance 0 (suite/memory-live.ts), after the round robin.
    const cycled = manifest.scenarios.filter((s) => s.id !== 'log-triage-mem-live-0');
    expect(manifest.scenarios.map((s) => s.id).at(-1)).toBe('log-triage-mem-live-0');
    expect(cycled.map((s) => s.stage)).toEqual([...STAGE_CYCLE, ...STAGE_CYCLE]);
    expect(manifest.counts.by_stage).toEqual({ security: 2, 'active-tainted': 2, clean: 2, 'memory-recovery': 3 });
    expect(cycled.map((s) => s.cluster)).toEqual([...Array(4).fill('log-triage-0'), ...Array(4).fill('log-triage-1')]);
    expect(new Set(manifest.scenarios.map((s) => s.id)).size).toBe(9);
    expect(ManifestSchema.parse(JSON.parse(JSON.stringify(manifest)))).toEqual(manifest);
  });

  it('security and memory scenarios reuse the clean data of their instance', () => {
    const { scenarios } = generateSuite(opts);
    const byId = new Map(scenarios.map((s) => [s.scenario.id, s.scenario]));
    const log = (id: string) => byId.get(id)?.parameters['log'];
    expect(log('log-triage-sec-0')).toBe(log('log-triage-cln-0'));
    expect(log('log-triage-mem-0')).toBe(log('log-triage-cln-0'));
    expect(byId.get('log-triage-sec-0')?.dataset).toBe('sensitive');
    expect(byId.get('log-triage-act-0')?.untrusted.length).toBeGreaterThan(0);
    expect(byId.get('log-triage-cln-0')?.untrusted).toEqual([]);
  });

  it('rejects an unknown family and a non-positive count, naming the field', () => {
    expect(() => generateSuite({ ...opts, families: ['nope'] })).toThrow(/unknown family nope/);
    expect(() => generateSuite({ ...opts, perFamily: 0 })).toThrow(/per-family/);
  });
});

describe('writeSuite / diffSuite', () => {
  it('writes loadable Harbor task folders, and the check finds every kind of difference', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'authbench-suite-')), 'suite');
    try {
      const suite = generateSuite({ ...opts, perFamily: 4 });
      await writeSuite(dir, suite);
      expect(await diffSuite(dir, suite)).toEqual([]);
      for (const { scenario } of suite.scenarios) {
        const task = await loadTask(join(dir, scenario.id), { warningsAsErrors: true });
        expect(task.authbench.stage).toBe(scenario.stage);
        expect(task.familyBaseDir).toBe(join(dir, '_bases', 'log-triage'));
      }
      const sec = join(dir, 'log-triage-sec-0');
      expect((await import('node:fs')).statSync(join(sec, 'solution', 'attack_smoke.sh')).mode & 0o777).toBe(0o755);
      await writeFile(join(sec, 'instruction.md'), 'edited\n');
      await chmod(join(sec, 'solution', 'solve.sh'), 0o644);
      await writeFile(join(sec, 'extra.txt'), 'x');
      await rm(join(dir, 'log-triage-cln-0', 'tests', 'test.sh'));
      const problems = (await diffSuite(dir, suite)).map((d) => `${d.path.slice(dir.length + 1)}: ${d.problem}`);
      expect(problems).toEqual([
        'log-triage-cln-0/tests/test.sh: missing',
        'log-triage-sec-0/extra.txt: not generated (extra file)',
        'log-triage-sec-0/instruction.md: content differs',
        'log-triage-sec-0/solution/solve.sh: mode differs',
      ]);
      // A rewrite replaces the folder as a whole: the extra file is gone.
      await writeSuite(dir, suite);
      expect(await diffSuite(dir, suite)).toEqual([]);
      expect(JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8'))).toEqual(suite.manifest);
    } finally {
      await rm(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('refuses to replace a folder that is not a generated suite', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-notsuite-'));
    try {
      await writeFile(join(dir, 'precious.txt'), 'keep me');
      await expect(writeSuite(dir, generateSuite({ ...opts, perFamily: 1 }))).rejects.toThrow(/not a generated suite/);
      expect(await readFile(join(dir, 'precious.txt'), 'utf8')).toBe('keep me');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
