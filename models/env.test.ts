import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadModelEnv, mergeDotEnv, parseDotEnv, resolveApiKey } from './env.ts';

describe('parseDotEnv', () => {
  it('reads the usual .env syntax', () => {
    const text = [
      '# comment',
      'OPENAI_API_KEY=sk-plain',
      'export ANTHROPIC_API_KEY="sk ant"',
      "SINGLE='a#b' # trailing comment",
      'SPACED =  value  ',
      'EMPTY=',
      'MULTI="line1\\nline2"',
      'not a pair',
    ].join('\n');
    expect(parseDotEnv(text)).toEqual({
      OPENAI_API_KEY: 'sk-plain',
      ANTHROPIC_API_KEY: 'sk ant',
      SINGLE: 'a#b',
      SPACED: 'value',
      EMPTY: '',
      MULTI: 'line1\nline2',
    });
  });
});

describe('mergeDotEnv', () => {
  it('never overwrites a variable already set, even to empty', () => {
    const merged = mergeDotEnv({ A: 'env', B: '', C: undefined }, { A: 'file', B: 'file', C: 'file', D: 'file' });
    expect(merged).toEqual({ A: 'env', B: '', C: 'file', D: 'file' });
  });
});

describe('loadModelEnv', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authbench-env-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fills keys from ./.env without touching process.env', async () => {
    await writeFile(join(dir, '.env'), 'AUTHBENCH_TEST_ONLY_KEY=from-file\nOPENAI_API_KEY=sk-file\n');
    const env = await loadModelEnv({ cwd: dir, env: { OPENAI_API_KEY: 'sk-shell' } });
    expect(env['AUTHBENCH_TEST_ONLY_KEY']).toBe('from-file');
    expect(resolveApiKey('openai', env)).toBe('sk-shell');
    expect(process.env['AUTHBENCH_TEST_ONLY_KEY']).toBeUndefined();
  });

  it('skips a missing default .env but not a missing explicit one', async () => {
    expect(await loadModelEnv({ cwd: dir, env: { X: '1' } })).toEqual({ X: '1' });
    await expect(loadModelEnv({ cwd: dir, env: {}, dotenvPath: 'nope.env' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('treats an empty key as missing', () => {
    expect(resolveApiKey('anthropic', { ANTHROPIC_API_KEY: '' })).toBeUndefined();
    expect(resolveApiKey('openai-compatible', { OPENAI_API_KEY: 'sk-real' })).toBeUndefined();
  });
});
