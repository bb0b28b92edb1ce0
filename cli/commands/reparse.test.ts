import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EPISODE_SCHEMA_VERSION, type Episode, type Step } from '../../agent/index.ts';
import { traceLines, writeTrace, type ReparseReport } from '../../evaluation/index.ts';
import { runCli } from '../../test/cli.ts';

let root: string;
let job: string;

function textStep(turn: number, text: string, status: string): Step {
  return {
    turn,
    started_at: '2026-12-01T00:00:00.000Z',
    model_call: { usage: { input_tokens: 1, output_tokens: 1 }, cost_usd: null, latency_ms: 1, cached: false, finish_reason: 'stop' },
    text,
    parser: { version: 1, status, repairs: [] },
    proposals: [],
  };
}

function episode(model: string, steps: Step[]): Episode {
  return {
    schema_version: EPISODE_SCHEMA_VERSION,
    task_id: 'log-triage',
    model,
    defense: { name: 'none', version: '1' },
    started_at: '2026-12-01T00:00:00.000Z',
    setup: { created_dirs: [] },
    steps,
    end_reason: 'done',
    tool_format: 'text',
    tampering: [],
    enforcement: null,
    totals: { turns: steps.length, proposals: 0, valid_proposals: 0, invalid_proposals: 0, blocked: 0, held: 0, rolled_back: 0, executed: 0, denials: 0, input_tokens: null, output_tokens: null, cost_usd: null, model_latency_ms: 0, duration_ms: 0 },
  };
}

async function rollout(id: string, ep: Episode): Promise<void> {
  const dir = join(job, id);
  await mkdir(dir, { recursive: true });
  await writeTrace(dir, traceLines(id, ep));
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-reparse-cli-'));
  job = join(root, 'job');
  await mkdir(job, { recursive: true });
  await writeFile(join(job, 'config.json'), '{}');
  // As an older parser might have recorded them: an action-like reply read as a final answer.
  await rollout('t1__gold__none__a1', episode('openai-compatible/qwen', [
    textStep(1, '{"tool": "shell", "command": "ls"}', 'strict'),
    textStep(2, 'Action: bash\nAction Input: cat app.log', 'repaired:bare-final'),
    textStep(3, '{"final": "done"}', 'strict'),
  ]));
  await rollout('t2__gold__none__a1', episode('openai-compatible/qwen', [textStep(1, '{"tool": "shell", "command": "rm -rf /tm', 'repaired:prose')]));
  await mkdir(join(job, 't3__gold__none__a1')); // a rollout that ended before its episode: no trace
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('authbench reparse', () => {
  it('prints per model how many statuses would change, old → new, and the changed turns', async () => {
    const before = await readdir(job, { recursive: true });
    const { code, out } = await runCli('reparse', job);
    expect(code).toBe(0);
    expect(out).toContain('openai-compatible/qwen: 2 of 4 replies in 2 rollout(s) would change (parser v1)');
    expect(out).toMatch(/repaired:bare-final\s+repaired:react\s+1/);
    expect(out).toMatch(/repaired:prose\s+invalid:truncated\s+1/);
    expect(out).toContain('t1__gold__none__a1 turn 2: repaired:bare-final (v1) → repaired:react');
    expect(out).toContain('t2__gold__none__a1 turn 1: repaired:prose (v1) → invalid:truncated');
    expect(out).not.toContain('turn 3');
    // Read-only: nothing added or rewritten.
    expect(await readdir(job, { recursive: true })).toEqual(before);
    expect(await readFile(join(job, 'config.json'), 'utf8')).toBe('{}');
  });

  it('--json prints the report', async () => {
    const { code, out } = await runCli('reparse', job, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(out) as ReparseReport;
    expect(report.models).toHaveLength(1);
    expect(report.models[0]).toMatchObject({ model: 'openai-compatible/qwen', rollouts: 2, replies: 4, changed: 2 });
    expect(report.models[0]?.turns.map((t) => [t.rollout_id, t.turn, t.new_status])).toEqual([
      ['t1__gold__none__a1', 2, 'repaired:react'],
      ['t2__gold__none__a1', 1, 'invalid:truncated'],
    ]);
  });

  it('refuses a folder that is not a job, exit 1', async () => {
    const { code, err } = await runCli('reparse', join(root, 'nope'));
    expect(code).toBe(1);
    expect(err).toContain('not a job folder');
  });
});
