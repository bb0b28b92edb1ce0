import { describe, expect, it } from 'vitest';
import { checkJobName, lockDifferences } from './jobdir.ts';
import { EVAL_DEFAULTS, configFromFlags, resumeConfig } from './resume.ts';

describe('configFromFlags', () => {
  it('fills the defaults for flags not given, and the strategy only for generated policies', () => {
    const c = configFromFlags({ model: 'openai/gpt-5', max_turns: 5 });
    expect(c).toMatchObject({ ...EVAL_DEFAULTS, model: 'openai/gpt-5', max_turns: 5 });
    expect(c.policy_strategy).toBeUndefined();
    expect(configFromFlags({ model: 'openai/gpt-5', policies: ['generated'] }).policy_strategy).toBe('direct');
  });

  it('needs a model and names the flag of an invalid value', () => {
    expect(() => configFromFlags({})).toThrow(/--model is required/);
    expect(() => configFromFlags({ model: 'scripted/oracle', attempts: 0 })).toThrow(/^--attempts: /);
  });
});

describe('tool format', () => {
  it('is saved only when not the default, and a resume compares it with native as the default', () => {
    expect(configFromFlags({ model: 'openai/gpt-5', tool_format: 'native' })).not.toHaveProperty('tool_format');
    const text = configFromFlags({ model: 'openai/gpt-5', tool_format: 'text' });
    expect(text.tool_format).toBe('text');
    const native = configFromFlags({ model: 'openai/gpt-5' });
    expect(resumeConfig('j', native, { tool_format: 'native' })).toEqual(native);
    expect(resumeConfig('j', text, { tool_format: 'text' })).toEqual(text);
    expect(() => resumeConfig('j', native, { tool_format: 'text' })).toThrow(/--tool-format differs/);
    expect(() => resumeConfig('j', text, { tool_format: 'native' })).toThrow(/--tool-format differs/);
  });
});

describe('tracer', () => {
  it('is saved only when not the default (strace), and a resume refuses the other one', () => {
    expect(configFromFlags({ model: 'openai/gpt-5', tracer: 'strace' })).not.toHaveProperty('tracer');
    const ebpf = configFromFlags({ model: 'openai/gpt-5', tracer: 'ebpf' });
    expect(ebpf.tracer).toBe('ebpf');
    const strace = configFromFlags({ model: 'openai/gpt-5' });
    expect(resumeConfig('j', strace, { tracer: 'strace' })).toEqual(strace);
    expect(() => resumeConfig('j', strace, { tracer: 'ebpf' })).toThrow(/--tracer differs/);
    expect(() => resumeConfig('j', ebpf, { tracer: 'strace' })).toThrow(/--tracer differs/);
  });
});

describe('counterfactuals', () => {
  it('are saved only when not the default 8, and a resume of a job saved before the field compares with 8', () => {
    expect(configFromFlags({ model: 'openai/gpt-5', max_counterfactuals: 8 })).not.toHaveProperty('max_counterfactuals');
    const off = configFromFlags({ model: 'openai/gpt-5', max_counterfactuals: 0 });
    expect(off.max_counterfactuals).toBe(0);
    const before = configFromFlags({ model: 'openai/gpt-5' });
    expect(resumeConfig('j', before, { max_counterfactuals: 8 })).toEqual(before);
    expect(resumeConfig('j', off, { max_counterfactuals: 0 })).toEqual(off);
    expect(() => resumeConfig('j', before, { max_counterfactuals: 0 })).toThrow(/--no-counterfactuals differs/);
    expect(() => resumeConfig('j', off, { max_counterfactuals: 8 })).toThrow(expect.objectContaining({ details: ['--max-counterfactuals/--no-counterfactuals: saved 0, given 8'] }));
    expect(() => configFromFlags({ model: 'openai/gpt-5', max_counterfactuals: -1 })).toThrow(/--max-counterfactuals/);
  });
});

describe('resumeConfig', () => {
  const saved = configFromFlags({ model: 'openai/gpt-5', include: ['a', 'b'], policies: ['gold', 'allow-all'], base_url: 'https://user:secret@llm.example/v1' });
  const onDisk = { ...saved, base_url: 'https://REDACTED@llm.example/v1' };

  it('takes the saved config when nothing is given again, and accepts values equal to it (lists as sets)', () => {
    expect(resumeConfig('j', saved, {})).toEqual(saved);
    expect(resumeConfig('j', saved, { model: 'openai/gpt-5', include: ['b', 'a'], policies: ['allow-all', 'gold'], max_turns: EVAL_DEFAULTS.max_turns })).toEqual(saved);
  });

  it('refuses each differing flag by name, with both values', () => {
    let error: unknown;
    try {
      resumeConfig('j', saved, { include: ['a'], seed: 3 });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'CHECK_FAILED', field: 'include', details: ['the task selection (positionals, -i/--include): saved a, b, given a', '--seed: saved 0, given 3'] });
  });

  it('asks for a base URL whose credentials were redacted on disk, and takes it when given again', () => {
    expect(() => resumeConfig('j', onDisk, {})).toThrow(/base URL had credentials/);
    expect(resumeConfig('j', onDisk, { base_url: 'https://user:secret@llm.example/v1' }).base_url).toBe('https://user:secret@llm.example/v1');
    expect(() => resumeConfig('j', onDisk, { base_url: 'https://user:secret@other.example/v1' })).toThrow(/--base-url differs/);
  });
});

describe('checkJobName', () => {
  it('accepts one folder name and refuses anything that leaves --jobs-dir or hides', () => {
    for (const ok of ['run1', 'openai_gpt-5-2026-01-01T10-00-00', 'a.b']) expect(() => checkJobName(ok), ok).not.toThrow();
    for (const bad of ['../../x', '..', '.', 'a/b', '/abs', '.hidden', '-flag', '', 'a\\b']) expect(() => checkJobName(bad), bad).toThrow(/one folder inside --jobs-dir/);
  });
});

describe('lockDifferences', () => {
  const lock = { schema_version: 1, authbench_version: '1', config: { model: 'm', max_turns: 5, replay: { sha256: 'a' } }, tasks: { t1: { content_sha256: 'c', gold_sha256: 'g' }, t2: { content_sha256: 'c', gold_sha256: null } } };
  it('names the config keys, tasks and gold that changed', () => {
    const changed = {
      ...lock,
      config: { model: 'm', max_turns: 6, replay: { sha256: 'b' } },
      tasks: { t1: { content_sha256: 'c', gold_sha256: 'h' }, t3: { content_sha256: 'c', gold_sha256: null } },
    };
    expect(lockDifferences(lock, changed)).toEqual(['config max_turns', 'the replay file', 'task t1 gold', 'task t2 removed', 'task t3 added']);
    expect(lockDifferences(lock, lock)).toEqual([]);
  });
});
