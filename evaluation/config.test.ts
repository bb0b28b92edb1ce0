import { describe, expect, it } from 'vitest';
import { planRollouts } from './config.ts';
import { redactConfig } from './job.ts';

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
