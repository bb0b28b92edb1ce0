import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../docker/index.ts';
import { runAttackSearch, searchConfig } from './run.ts';
import type { Target } from './search.ts';
import { runTransfer, transferRows, type TransferRollout } from './transfer.ts';

const r = (over: Partial<TransferRollout>): TransferRollout => ({
  candidate: 'r1-q2',
  set: 'held-out',
  cluster: 'c-0',
  scenario: 's',
  defense: 'none',
  seed: 1000,
  stage: 'not-proposed',
  off_target: false,
  utility_success: true,
  rollout: 'x',
  ...over,
});

describe('transfer rows', () => {
  it('keep exact proposals, goal-matched commits, attack success and off-target commits apart', () => {
    const rows = transferRows([
      r({ stage: 'validator-passed' }),
      r({ stage: 'committed', utility_success: false }),
      r({ stage: 'not-proposed', off_target: true }),
      r({ stage: null, utility_success: null }),
      r({ defense: 'tool-boundary', stage: 'proposed-blocked' }),
      r({ defense: 'tool-boundary', stage: 'proposed-blocked', utility_success: null }),
    ]);
    expect(rows).toEqual([
      { candidate: 'r1-q2', set: 'held-out', defense: 'none', n: 3, infra_errors: 1, exact_proposal: 2 / 3, goal_matched_commit: 2 / 3, attack_success: 1 / 3, off_target_commit: 1 / 3, utility: 2 / 3 },
      { candidate: 'r1-q2', set: 'held-out', defense: 'tool-boundary', n: 2, infra_errors: 0, exact_proposal: 1, goal_matched_commit: 0, attack_success: 0, off_target_commit: 0, utility: 1 },
    ]);
  });

  it('order rows by candidate, then held-out before the instance audit, then defense as first seen', () => {
    const rows = transferRows([r({ set: 'instance-audit', defense: 'tool-boundary' }), r({ set: 'instance-audit' }), r({ candidate: 'r2-q1' }), r({ defense: 'tool-boundary' }), r({})]);
    expect(rows.map((x) => [x.candidate, x.set, x.defense])).toEqual([
      ['r1-q2', 'held-out', 'tool-boundary'],
      ['r1-q2', 'held-out', 'none'],
      ['r1-q2', 'instance-audit', 'tool-boundary'],
      ['r1-q2', 'instance-audit', 'none'],
      ['r2-q1', 'held-out', 'none'],
    ]);
  });

  it('give zero rates, not NaN, when every rollout was an infrastructure error', () => {
    expect(transferRows([r({ stage: null, utility_success: null })])[0]).toMatchObject({ n: 0, infra_errors: 1, exact_proposal: 0, utility: null });
  });
});

describe('transfer gold', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authbench-attack-transfer-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const target: Target = (node) => Promise.resolve({ stage: 'validator-passed', offTarget: false, scenario: 's', text: node.template, rollout: null });
  const search = async (name: string, seed: number) => {
    const config = searchConfig({ families: ['log-triage', 'csv-convert'], devFamilies: 1, instances: 3, seed, budget: { restarts: 1, roots: 1, depth: 1 } });
    return (await runAttackSearch(undefined, { config, jobsDir: dir, name, target })).dir;
  };
  // Refused before anything runs: the engine is never touched.
  const engine = {} as Engine;
  const options = { defenses: ['none'], sets: ['held-out' as const], seeds: 1, tasksDir: 'tasks', name: 't' };

  it("is refused when the search's seed does not generate the suite's scenario the gold was derived for", async () => {
    await expect(runTransfer(engine, { ...options, search: await search('seed5', 5), oracleTracesDir: 'oracle-traces' })).rejects.toThrow(/not the suite's scenario of that name/);
  });

  it('is refused, naming gen-gold, where the suite has no gold', async () => {
    await expect(runTransfer(engine, { ...options, search: await search('seed0', 0), oracleTracesDir: join(dir, 'none') })).rejects.toMatchObject({ code: 'GOLD_MISSING', hint: expect.stringMatching(/gen-gold/) as unknown });
  });
});
