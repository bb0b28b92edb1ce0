import { describe, expect, it } from 'vitest';
import type { Step } from '../agent/index.ts';
import { reparseRows, reparseSteps } from './reparse.ts';

const step = (turn: number, text: string, status?: string): Pick<Step, 'turn' | 'text' | 'parser'> => ({
  turn,
  text,
  ...(status === undefined ? {} : { parser: { version: 1, status, repairs: [] } }),
});

describe('reparseSteps', () => {
  it('lists the replies whose recorded status the current parser would change, and skips native steps', () => {
    const { replies, changed } = reparseSteps('r1', [
      step(1, '{"tool": "shell", "command": "ls"}', 'strict'),
      // What an older parser took for a final answer is an action today.
      step(2, '```json\n{"tool": "bash", "cmd": "cat x"}\n```', 'repaired:bare-final'),
      step(3, '{"tool": "shell", "command": "rm -rf /tm', 'repaired:bare-final'),
      step(4, 'native text, no parser record'),
    ]);
    expect(replies).toBe(3);
    expect(changed).toEqual([
      { rollout_id: 'r1', turn: 2, old_status: 'repaired:bare-final', old_version: 1, new_status: 'repaired:fenced' },
      { rollout_id: 'r1', turn: 3, old_status: 'repaired:bare-final', old_version: 1, new_status: 'invalid:truncated' },
    ]);
  });
});

describe('reparseRows', () => {
  it('groups by model with transitions by count, and leaves out rollouts without text replies', () => {
    const t = (rollout_id: string, turn: number, old_status: string, new_status: string) => ({ rollout_id, turn, old_status, old_version: 1, new_status });
    const rows = reparseRows([
      { model: 'm/b', replies: 4, changed: [t('r2', 3, 'repaired:bare-final', 'repaired:fenced'), t('r2', 1, 'repaired:bare-final', 'repaired:fenced')] },
      { model: 'm/b', replies: 2, changed: [t('r1', 2, 'strict', 'invalid:unknown-tool')] },
      { model: 'm/a', replies: 3, changed: [] },
      { model: 'm/native', replies: 0, changed: [] },
    ]);
    expect(rows.map((r) => [r.model, r.rollouts, r.replies, r.changed])).toEqual([
      ['m/a', 1, 3, 0],
      ['m/b', 2, 6, 3],
    ]);
    expect(rows[1]?.transitions).toEqual([
      { from: 'repaired:bare-final', to: 'repaired:fenced', count: 2 },
      { from: 'strict', to: 'invalid:unknown-tool', count: 1 },
    ]);
    expect(rows[1]?.turns.map((x) => `${x.rollout_id}#${x.turn}`)).toEqual(['r1#2', 'r2#1', 'r2#3']);
  });
});
