import { describe, expect, it } from 'vitest';
import { stableStringify } from '../core/index.ts';
import { EvalConfigSchema, jobBuildOptions, planRollouts, type EvalConfig } from './config.ts';
import { jobLock, redactConfig } from './jobdir.ts';

describe('planRollouts', () => {
  it('expands task × policy × defense × attempt with stable ids and seeds', () => {
    const plan = planRollouts(['a', 'b'], { policies: ['gold', 'allow-all'], defenses: ['tool-boundary'], attempts: 2, seed: 10 });
    expect(plan.map((p) => p.id)).toEqual([
      'a__gold__tool-boundary__a1',
      'a__gold__tool-boundary__a2',
      'a__allow-all__tool-boundary__a1',
      'a__allow-all__tool-boundary__a2',
      'b__gold__tool-boundary__a1',
      'b__gold__tool-boundary__a2',
      'b__allow-all__tool-boundary__a1',
      'b__allow-all__tool-boundary__a2',
    ]);
    expect(plan.map((p) => p.seed)).toEqual([10, 11, 10, 11, 10, 11, 10, 11]);
  });

  it('runs defense none once per task and attempt: no policy is read', () => {
    const plan = planRollouts(['a'], { policies: ['gold', 'deny-all'], defenses: ['none', 'prompt-only'], attempts: 1, seed: 0 });
    expect(plan.map((p) => p.id)).toEqual(['a__none__none__a1', 'a__gold__prompt-only__a1', 'a__deny-all__prompt-only__a1']);
  });
});

describe('redactConfig', () => {
  it('never writes credentials embedded in a base URL', () => {
    const config = {
      schema_version: 1 as const,
      model: 'openai-compatible/x',
      base_url: 'https://alice:sk-secret@llm.example/v1',
      tasks_dir: 'tasks',
      oracle_traces_dir: 'oracle-traces',
      include: [],
      exclude: [],
      policies: ['gold' as const],
      defenses: ['none'],
      attempts: 1,
      seed: 0,
      max_turns: 5,
      cache: 'off' as const,
      model_timeout_sec: 10,
      model_retries: 0,
    };
    const out = JSON.stringify(redactConfig(config));
    expect(out).not.toContain('sk-secret');
    expect(out).not.toContain('alice');
    expect(redactConfig({ ...config, base_url: 'http://127.0.0.1:8000/v1' }).base_url).toBe('http://127.0.0.1:8000/v1');
  });
});

describe('EvalConfigSchema', () => {
  const base: EvalConfig = {
    schema_version: 1,
    model: 'scripted/oracle',
    tasks_dir: 'tasks',
    oracle_traces_dir: 'oracle-traces',
    include: [],
    exclude: [],
    policies: ['gold'],
    defenses: ['tool-boundary'],
    attempts: 1,
    seed: 0,
    max_turns: 30,
    cache: 'read-write',
    model_timeout_sec: 300,
    model_retries: 4,
  };

  it('parses configs written before replay existed unchanged', () => {
    expect(EvalConfigSchema.parse(base)).toEqual(base);
  });

  it('records a replay file by path and sha256', () => {
    const replay = { path: 'hostile/exfil.json', sha256: 'a'.repeat(64) };
    expect(EvalConfigSchema.parse({ ...base, model: 'scripted/replay', replay }).replay).toEqual(replay);
  });

  it.each([
    ['a digest that is not sha256 hex', { path: 'r.json', sha256: 'abc' }, 'replay.sha256'],
    ['no digest', { path: 'r.json' }, 'replay.sha256'],
    ['an unknown key', { path: 'r.json', sha256: 'a'.repeat(64), commands: [] }, 'replay'],
  ])('rejects %s', (_name, replay, path) => {
    const parsed = EvalConfigSchema.safeParse({ ...base, model: 'scripted/replay', replay });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual([path]);
  });

  describe('build', () => {
    const build = { base_map: [{ pattern: 'python:3.12*', image: 'authbench/base:python3.11-bookworm' }], build_args: { PY: '3.11', PIP_INDEX_URL: 'https://bob:tok-secret@pypi.corp/simple' } };

    it('records what changes an image, and gives it back as the task builds take it', () => {
      const config = EvalConfigSchema.parse({ ...base, build });
      expect(jobBuildOptions(config)).toEqual({ baseMapEntries: build.base_map, buildArgs: build.build_args });
      expect(jobBuildOptions(base)).toEqual({ baseMapEntries: [], buildArgs: {} });
      // Host access is not a build option a job records.
      expect(EvalConfigSchema.safeParse({ ...base, build: { ...build, ca_bundle: 'x' } }).success).toBe(false);
    });

    it('is part of the lock --resume compares, with credentials in build-arg URLs redacted', async () => {
      const plain = stableStringify(await jobLock(base, []));
      const withBuild = stableStringify(await jobLock({ ...base, build }, []));
      const otherMap = stableStringify(await jobLock({ ...base, build: { ...build, base_map: [{ pattern: 'python:3.12*', image: 'other:1' }] } }, []));
      expect(new Set([plain, withBuild, otherMap]).size).toBe(3);
      expect(withBuild).not.toContain('tok-secret');
      expect(withBuild).toContain('"PY":"3.11"');
      expect(redactConfig({ ...base, build }).build?.build_args['PIP_INDEX_URL']).toBe('https://REDACTED@pypi.corp/simple');
    });
  });
});
