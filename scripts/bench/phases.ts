/**
 * Per-rollout phases ÷ the container floor (issue 21 item 3): real scripted/oracle rollouts of
 * one starter task under its gold policy (one job, -n 1, through runJob and the real
 * runRollout), each phase from its result.json `phases_ms`, and the teardown still on the
 * critical path (the rollout's wall time past its `duration_ms`: what its disposal held the
 * slot for) and, beside it, the removal the job runs off that path (evaluation/teardown.ts),
 * waited for before the next floor sample so it overlaps neither measurement. The floor is what no rollout can avoid: create + start + remove of a container of
 * the task's image with the rollout's own spec (harness mount, limits), no command in it. One
 * floor sample before each rollout, so load on the shared machine lands on both alike; medians.
 * The fixed cost is every phase but the episode (the agent's own work) and the counterfactual
 * runs (none under gold). Of it, the validators' own commands (the task's test.sh and pytest,
 * timed by their supervisor) are the task's: the harness's share is shown without them too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import type { Engine } from '../../docker/index.ts';
import { configFromFlags, runJob, runRollout, type RolloutRunner } from '../../evaluation/index.ts';
import { ensureHarness } from '../../sandbox/launcher/index.ts';
import { taskContainerSpec } from '../../taskenv/index.ts';
import { summarize, type Summary } from './stats.ts';

/** The phases of a rollout's fixed cost, in the order they happen. */
export const FIXED_PHASES = ['setup', 'validate', 'measure', 'teardown'] as const;
export type FixedPhase = (typeof FIXED_PHASES)[number];

/** One rollout's timings (ms). */
export interface PhaseSample {
  setup: number;
  episode: number;
  validate: number;
  measure: number;
  /** Wall time of runRollout past the result's duration_ms: the teardown the slot waited for. */
  teardown: number;
  /** The removal left running after runRollout returned (off the critical path; informational). */
  deferred: number;
  /** create + start + remove of a bare container of the image, measured just before. */
  floor: number;
  /** Of the floor: create + start (no rollout can start its container faster). */
  floorStart?: number;
  /** Of validate: the validators' own commands (phases_ms.validator_commands); undefined when untimed. */
  validatorCommands?: number;
}

export interface PhasesResult {
  task: string;
  rollouts: number;
  floor: Summary;
  episode: Summary;
  deferred: Summary;
  phases: Record<FixedPhase, Summary>;
  /** Per rollout, the sum of the fixed phases. */
  fixed: Summary;
  /**
   * Of validate, the task's own tests (test.sh, pytest) and, per rollout, the fixed cost without
   * them: the harness's share. Undefined unless every sample was timed.
   */
  tests?: { commands: Summary; harnessFixed: Summary };
  /**
   * Per rollout, create + start of the bare container plus the task's tests: the fixed cost of a
   * harness that cost nothing at all. Undefined unless every sample has both.
   */
  noHarness?: Summary;
  /** Median ÷ the floor's median. */
  ratios: Record<FixedPhase | 'fixed' | 'episode' | 'deferred', number> & { tests?: number; harnessFixed?: number; noHarness?: number };
}

/** The issue's target for the fixed cost ÷ the floor. */
export const FIXED_TARGET = 2;

/** Medians and ratios of the samples. Pure. */
export function summarizePhases(task: string, samples: readonly PhaseSample[]): PhasesResult {
  if (samples.length === 0) throw new AuthbenchError('INTERNAL', 'bench phases: no rollout was timed');
  const floor = summarize(samples.map((s) => s.floor));
  const episode = summarize(samples.map((s) => s.episode));
  const deferred = summarize(samples.map((s) => s.deferred));
  const phases = Object.fromEntries(FIXED_PHASES.map((p) => [p, summarize(samples.map((s) => s[p]))])) as Record<FixedPhase, Summary>;
  const fixed = summarize(samples.map((s) => FIXED_PHASES.reduce((sum, p) => sum + s[p], 0)));
  const per = (x: Summary): number => (floor.median === 0 ? Number.NaN : x.median / floor.median);
  const ratios: PhasesResult['ratios'] = { ...(Object.fromEntries(FIXED_PHASES.map((p) => [p, per(phases[p])])) as Record<FixedPhase, number>), fixed: per(fixed), episode: per(episode), deferred: per(deferred) };
  const timed = samples.every((s) => s.validatorCommands !== undefined);
  if (!timed) return { task, rollouts: samples.length, floor, episode, deferred, phases, fixed, ratios };
  const commands = summarize(samples.map((s) => s.validatorCommands ?? 0));
  const harnessFixed = summarize(samples.map((s) => FIXED_PHASES.reduce((sum, p) => sum + s[p], 0) - (s.validatorCommands ?? 0)));
  const withTests = { task, rollouts: samples.length, floor, episode, deferred, phases, fixed, tests: { commands, harnessFixed }, ratios: { ...ratios, tests: per(commands), harnessFixed: per(harnessFixed) } };
  if (!samples.every((s) => s.floorStart !== undefined)) return withTests;
  const noHarness = summarize(samples.map((s) => (s.floorStart ?? 0) + (s.validatorCommands ?? 0)));
  return { ...withTests, noHarness, ratios: { ...withTests.ratios, noHarness: per(noHarness) } };
}

/** The section as text. Pure. */
export function renderPhases(r: PhasesResult): string {
  const ms = (s: Summary): string => `${s.median.toFixed(0).padStart(6)} ms  (p25 ${s.p25.toFixed(0)}, p75 ${s.p75.toFixed(0)})`;
  const row = (name: string, s: Summary, ratio: number): string => `  ${name.padEnd(26)} ${ms(s).padEnd(34)} ${ratio.toFixed(2)}×`;
  return [
    `per-rollout phases ÷ container floor (scripted/oracle on ${r.task}, gold, -n 1; ${r.rollouts} rollouts, medians)`,
    `  ${'floor (create+start+remove)'.padEnd(26)} ${ms(r.floor)}`,
    ...FIXED_PHASES.flatMap((p) => [
      row(p === 'teardown' ? 'teardown (critical path)' : p, r.phases[p], r.ratios[p]),
      ...(p === 'validate' && r.tests !== undefined ? [row("  of which the task's tests", r.tests.commands, r.ratios.tests ?? Number.NaN)] : []),
    ]),
    row('fixed cost (sum)', r.fixed, r.ratios.fixed) + `   target ≤ ${FIXED_TARGET}× ${r.ratios.fixed <= FIXED_TARGET ? 'ok' : 'over'}`,
    ...(r.tests === undefined ? [] : [row("  without the task's tests", r.tests.harnessFixed, r.ratios.harnessFixed ?? Number.NaN) + "   (the harness's share)"]),
    ...(r.noHarness === undefined || r.ratios.noHarness === undefined
      ? []
      : [
          row('  with no harness at all', r.noHarness, r.ratios.noHarness) +
            `   (create + start + the task's tests${r.ratios.noHarness > FIXED_TARGET ? `: over ${FIXED_TARGET}× whatever the harness does, for this task on this machine` : ''})`,
        ]),
    row('removal, off the path', r.deferred, r.ratios.deferred),
    row('episode (the agent; not fixed)', r.episode, r.ratios.episode),
    '',
  ].join('\n');
}

/**
 * `rollouts` timed rollouts of `task` after one untimed warm-up (it builds the image). A
 * rollout that did not complete or did not pass fails the bench: its phases would not be a
 * rollout's.
 */
export async function measurePhases(engine: Engine, options: { task: string; rollouts: number; onProgress?: (line: string) => void }): Promise<PhasesResult> {
  const jobsDir = await mkdtemp(join(tmpdir(), 'authbench-bench-phases-'));
  try {
    const harness = await ensureHarness(engine);
    const run = async (name: string, attempts: number, runner: RolloutRunner): Promise<void> => {
      const config = configFromFlags({ model: 'scripted/oracle', include: [options.task], policies: ['gold'], cache: 'off', attempts });
      const outcome = await runJob(engine, { config, jobsDir, name, resume: false, concurrency: 1 }, { runRollout: runner });
      const bad = outcome.results.filter((r) => r.status !== 'completed' || r.utility_success !== true);
      if (bad.length > 0 || outcome.results.length !== attempts) {
        throw new AuthbenchError('INTERNAL', `bench phases: ${bad.length} of ${outcome.results.length} rollouts of ${options.task} did not pass`, {
          details: bad.map((r) => `${r.rollout_id}: ${r.status} ${r.outcome ?? ''} ${r.utility_reason ?? ''} ${r.infra_error?.message ?? ''}`),
        });
      }
    };
    // Job names are run labels: another process's orphan sweep (runJob) must not match ours.
    const tag = `bench-phases-${process.pid}`;
    options.onProgress?.(`phases: warm-up rollout of ${options.task}`);
    await run(`${tag}-warmup`, 1, runRollout);
    const samples: PhaseSample[] = [];
    options.onProgress?.(`phases: ${options.rollouts} rollouts of ${options.task}, each after a floor sample`);
    await run(`${tag}-timed`, options.rollouts, async (spec, ctx) => {
      const f0 = performance.now();
      const bare = await engine.startContainer(taskContainerSpec(ctx.task, ctx.image, harness, { runId: ctx.jobId }));
      const floorStart = performance.now() - f0;
      await bare.remove();
      const floor = performance.now() - f0;
      const t0 = performance.now();
      const result = await runRollout(spec, ctx);
      const wall = performance.now() - t0;
      await ctx.teardown?.settle();
      const deferred = performance.now() - t0 - wall;
      const p = result.phases_ms;
      if (p !== undefined) {
        const tests = p.validator_commands === undefined ? {} : { validatorCommands: p.validator_commands };
        samples.push({ setup: p.setup, episode: p.episode, validate: p.validate, measure: p.measure, teardown: Math.max(0, wall - result.duration_ms), deferred, floor, floorStart, ...tests });
      }
      return result;
    });
    return summarizePhases(options.task, samples);
  } finally {
    await rm(jobsDir, { recursive: true, force: true });
  }
}
