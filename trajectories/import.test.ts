import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { importAtif, parseAtif, parseAtifText, parseReward, readImport } from './import.ts';

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);
const load = async (name: string): Promise<unknown> => JSON.parse(await readFile(fixture(name), 'utf8')) as unknown;
const imported = async (name: string) => importAtif(parseAtif(await load(name), name), name);

function thrown(f: () => unknown): AuthbenchError {
  try {
    f();
  } catch (e) {
    if (e instanceof AuthbenchError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('import: fixtures written from the public schema', () => {
  it('a minimal v1.0: one bash call, its observation linked', async () => {
    const t = await imported('minimal-v1.0.json');
    expect(t).toMatchObject({ schema_version: 'ATIF-v1.0', session_id: 'minimal-1', agent: { name: 'mini-swe-agent', version: '1.0.0' }, steps: 3, reward: null });
    expect(t.proposals).toEqual([{ id: 'c1', step_id: 2, tool: 'bash', args: { command: 'ls /app' }, command: 'ls /app', observation: 'README.md\nmain.py' }]);
    expect(t.linkage).toEqual({ tool_calls: 1, observed: 1, unobserved: [], orphan_results: 0, unlinked_results: 0 });
  });

  it('a v1.6 with tool calls, observations (one on a later step, one in content parts) and metrics', async () => {
    const t = await imported('tools-v1.6.json');
    expect(t.agent).toEqual({ name: 'claude-code', version: '2.0.14', model_name: 'claude-sonnet-4-5' });
    expect(t.proposals.map((p) => [p.id, p.command, p.observation])).toEqual([
      ['toolu_01', null, '2026-11-30 ERROR disk full\n2026-11-30 INFO ok'],
      ['toolu_02', 'grep -c ERROR /app/logs/app.log', '1'],
      ['toolu_03', 'grep ERROR /app/logs/app.log > /app/report.txt', ''],
    ]);
    expect(t.proposals[0]?.unmapped).toContain('`Read` is not a shell tool');
    expect(t.linkage).toEqual({ tool_calls: 3, observed: 3, unobserved: [], orphan_results: 0, unlinked_results: 1 });
  });

  it('a v1.8 with fields this reader never heard of: kept on parse, ignored by the import', async () => {
    const raw = await load('extra-v1.8.json');
    const traj = parseAtif(raw, 'extra-v1.8.json');
    expect((traj as Record<string, unknown>).trajectory_id).toBe('traj-77-a');
    expect((traj.steps[1] as Record<string, unknown>).future_field).toEqual({ anything: true });
    const t = importAtif(traj, 'extra-v1.8.json');
    expect(t.proposals.map((p) => p.command)).toEqual(['cat /app/config.ini', "sed -i 's/port=x/port=80/' /app/config.ini", null]);
    expect(t.linkage).toMatchObject({ tool_calls: 3, observed: 2, unobserved: ['call_c'], orphan_results: 1 });
  });

  it('a Terminus keystroke trajectory: the plain command maps, the editor session and all after it do not', async () => {
    const t = await imported('terminus-keystrokes.json');
    expect(t.proposals.map((p) => p.command)).toEqual(['ls -la /app', null, null, null, null]);
    expect(t.proposals.map((p) => p.unmapped ?? '')).toEqual([
      '',
      expect.stringContaining('interactive program'),
      expect.stringContaining('state is unknown'),
      expect.stringContaining('state is unknown'),
      expect.stringContaining('`mark_task_complete` is not a shell tool'),
    ]);
    expect(t.linkage.unobserved).toEqual(['t4', 't5']);
  });

  it('a broken one: every problem named by its field path', async () => {
    const raw = await load('broken.json');
    const broken = thrown(() => parseAtif(raw, 'broken.json'));
    expect(broken.code).toBe('INVALID_TRAJECTORY');
    expect(broken.details).toEqual([
      'error: broken.json: session_id: required (a string)',
      'error: broken.json: agent.version: required (a string)',
      'error: broken.json: steps.0.source: required ("system", "user" or "agent")',
      'error: broken.json: steps.1.tool_calls.0.arguments: must be a JSON object',
    ]);
  });

  it('refuses versions it was not written against, and non-JSON', () => {
    const e = thrown(() => parseAtif({ schema_version: 'ATIF-v2.0', session_id: 's', agent: { name: 'a', version: '1' }, steps: [] }, 'f.json'));
    expect([e.message, e.field]).toEqual([expect.stringContaining('ATIF-v1.0 … ATIF-v1.8'), 'schema_version']);
    expect(thrown(() => parseAtifText('{', 'f.json')).message).toContain('invalid JSON');
  });

  it('gives repeated or empty call ids stable ids of their own (observations cannot be told apart)', () => {
    const traj = parseAtif(
      {
        schema_version: 'ATIF-v1.5',
        session_id: 's',
        agent: { name: 'a', version: '1' },
        steps: [
          { step_id: 1, source: 'agent', message: '', tool_calls: [{ tool_call_id: 'x', function_name: 'bash', arguments: { command: 'a' } }, { tool_call_id: '', function_name: 'bash', arguments: { command: 'b' } }] },
          { step_id: 2, source: 'agent', message: '', tool_calls: [{ tool_call_id: 'x', function_name: 'bash', arguments: { command: 'c' } }] },
        ],
      },
      's',
    );
    expect(importAtif(traj, 's').proposals.map((p) => p.id)).toEqual(['step1.call1', 'step1.call2', 'step2.call1']);
  });
});

describe('rewards and trial folders', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it.each([
    ['reward.txt', '1\n', 1],
    ['reward.txt', '0.25', 0.25],
    ['reward.json', '0', 0],
    ['reward.json', '{"reward": 1, "tests": 4}', 1],
    ['reward.json', '{"score": 0.5}', 0.5],
  ])('%s %j → %d', (file, text, reward) => {
    expect(parseReward(text, file)).toBe(reward);
  });

  it.each([
    ['reward.txt', 'passed'],
    ['reward.txt', ''],
    ['reward.json', '{"a": 1, "b": 0}'],
    ['reward.json', '"1"'],
  ])('%s %j is no reward', (file, text) => {
    expect(thrown(() => parseReward(text, file)).code).toBe('INVALID_TRAJECTORY');
  });

  it('reads a Harbor trial folder: agent/trajectory.json and verifier/reward.txt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'atif-trial-'));
    dirs.push(dir);
    await mkdir(join(dir, 'agent'));
    await mkdir(join(dir, 'verifier'));
    await writeFile(join(dir, 'agent', 'trajectory.json'), await readFile(fixture('minimal-v1.0.json')));
    await writeFile(join(dir, 'verifier', 'reward.txt'), '1\n');
    const t = await readImport(dir);
    expect([t.file, t.reward, t.reward_file]).toEqual([join(dir, 'agent', 'trajectory.json'), 1, join(dir, 'verifier', 'reward.txt')]);
    const alone = await readImport(fixture('minimal-v1.0.json'));
    expect(alone.reward).toBeNull();
  });

  it('a folder without a trajectory is bad input', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'atif-empty-'));
    dirs.push(dir);
    await expect(readImport(dir)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('holds no trajectory') as unknown });
  });
});
