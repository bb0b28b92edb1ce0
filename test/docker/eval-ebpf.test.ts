/**
 * `authbench eval --tracer ebpf` end to end through the real CLI: the same scripted jobs traced
 * by strace and by the job's eBPF hub must reach the same verdicts rollout by rollout — utility,
 * attack, outcome, the containment measurement — and every ebpf result says which tracer it
 * had — with a fresh `bash -c` per command and with the persistent shell. Skipped, with the
 * probe's reason, where eBPF cannot run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RolloutResult } from '../../evaluation/index.ts';
import { gatherEbpfFacts, judgeEbpf } from '../../sandbox/ebpf/index.ts';

const verdict = judgeEbpf(await gatherEbpfFacts(), 'native');
const reason = verdict.available ? '' : ` (skipped: ${verdict.reason})`;
const jobs = mkdtempSync(join(tmpdir(), 'authbench-eval-ebpf-'));
afterAll(() => rmSync(jobs, { recursive: true, force: true }));

function evalJob(name: string, args: readonly string[]): { status: number | null; stderr: string; results: RolloutResult[] } {
  const r = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--job-name', name, '--json', ...args], { encoding: 'utf8', timeout: 900_000 });
  const dir = join(jobs, name);
  const results = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'result.json')))
        .map((d) => JSON.parse(readFileSync(join(dir, d.name, 'result.json'), 'utf8')) as RolloutResult)
    : [];
  return { status: r.status, stderr: r.stderr, results };
}

/** What a rollout concluded, as far as a tracer may not change it. */
function verdictOf(r: RolloutResult): object {
  return {
    status: r.status,
    outcome: r.outcome,
    utility: r.utility_success,
    attack: r.attack_success,
    end: r.end_reason,
    enforcement: r.enforcement?.level,
    harm: r.metrics?.committed_harm,
    taintToCommit: r.metrics?.taint_to_commit_rate,
    // The stopped commands re-run in copies of the container (which join the hub as well).
    counterfactuals: r.metrics?.counterfactual_proposals,
    unjudged: r.metrics?.unjudged_stopped_proposals,
    falseBlocks: r.metrics?.false_positive_block_rate,
  };
}

/**
 * The same job traced both ways (named `<name>-strace` and `<name>-ebpf`) reaches the same verdicts
 * rollout by rollout, every ebpf result says so, and the attack fired somewhere (not a vacuous
 * agreement). Returns the eBPF results for further checks.
 */
function expectSameVerdicts(name: string, args: readonly string[]): RolloutResult[] {
  const strace = evalJob(`${name}-strace`, args);
  const ebpf = evalJob(`${name}-ebpf`, [...args, '--tracer', 'ebpf']);
  expect(strace.status, strace.stderr.slice(-2000)).toBe(0);
  expect(ebpf.status, ebpf.stderr.slice(-2000)).toBe(0);
  expect(ebpf.results.length).toBe(strace.results.length);
  expect(ebpf.results.length).toBeGreaterThanOrEqual(4);
  expect(ebpf.results.every((r) => r.tracer === 'ebpf')).toBe(true);
  expect(strace.results.every((r) => r.tracer === undefined)).toBe(true);
  const byId = (rs: RolloutResult[]) => Object.fromEntries(rs.map((r) => [r.rollout_id, verdictOf(r)]));
  expect(byId(ebpf.results)).toEqual(byId(strace.results));
  expect(ebpf.results.some((r) => r.attack_success === true)).toBe(true);
  return ebpf.results;
}

const JOB = ['--model', 'scripted/follow-injection', '-i', 'log-*', '--defense', 'none', '--defense', 'tool-boundary', '--policy', 'gold', '-n', '2'];

describe(`eval --tracer ebpf${reason}`, () => {
  it.skipIf(!verdict.available)(
    'reaches the verdicts strace reaches on the same scripted jobs, rollout by rollout',
    () => {
      const ebpf = expectSameVerdicts('fresh', [...JOB, '-i', 'sensitive-*']);
      // And the kernel stopped the attack elsewhere.
      expect(ebpf.some((r) => r.defense.name === 'tool-boundary' && r.attack_success === false)).toBe(true);
    },
    1_200_000,
  );

  it.skipIf(!verdict.available)(
    'reaches the verdicts strace reaches with the persistent shell too',
    () => {
      expectSameVerdicts('shell', [...JOB, '-i', 'sensitive-lint-*', '--shell', 'persistent']);
    },
    1_200_000,
  );
});
