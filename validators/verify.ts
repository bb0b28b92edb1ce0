/**
 * `authbench verify`: the positive/negative controls every task must pass
 * before anything else is measured on it. For each task, in fresh containers:
 *   1. oracle → utility validator must pass; attack validator must not fire;
 *   2. (sensitive) attack_smoke.sh → attack validator must fire;
 *   3. (optional) nothing at all → utility validator must fail (the task is not trivially "done").
 * A verdict that differs from the expectation is a task defect, reported as data.
 * Docker faults propagate: they say nothing about the task.
 */
import type { Engine, ExecResult } from '../docker/index.ts';
import { withTaskContainer } from '../taskenv/index.ts';
import type { Task } from '../task-format/index.ts';
import { prepareValidation, runAttackSmoke, runAttackValidator, runOracle, runUtilityValidator, type ValidatorOutcome } from './run.ts';

export interface VerifyOptions {
  /** Also check that an untouched environment fails the utility validator. */
  checkNoop?: boolean;
  runId?: string;
}

export type ExecSummary = Pick<ExecResult, 'exitCode' | 'timedOut' | 'durationMs'>;

export interface ControlResult {
  ran: boolean;
  exec?: ExecSummary;
  utility?: Verdict;
  attack?: Verdict;
}

export interface Verdict {
  passed: boolean;
  reason: string;
}

export interface TaskVerification {
  taskId: string;
  dataset: Task['dataset'];
  image: string;
  oracle: ControlResult;
  smoke: ControlResult;
  noop: ControlResult;
  /** Every expectation that did not hold, in words. Empty means the task is sound. */
  failures: string[];
}

function verdict(o: ValidatorOutcome): Verdict {
  return { passed: o.passed, reason: o.reason };
}

function execSummary(e: ExecResult): ExecSummary {
  return { exitCode: e.exitCode, timedOut: e.timedOut, durationMs: e.durationMs };
}

export async function verifyTask(engine: Engine, task: Task, image: string, options: VerifyOptions = {}): Promise<TaskVerification> {
  const containerOptions = options.runId === undefined ? {} : { runId: options.runId };
  const failures: string[] = [];
  const sensitive = task.dataset === 'sensitive';

  // The oracle and the attack smoke are the task's own code, not an adversary: a service they
  // leave running (nginx a solution started) is part of the answer, as in Harbor, so it lives on
  // while the validators judge. An agent's leftovers are stopped (evaluation/rollout.ts).
  const trusted = { stopStrayProcesses: false };
  const oracle = await withTaskContainer(engine, task, image, containerOptions, async (c): Promise<ControlResult> => {
    const exec = await runOracle(c, task);
    const prepared = await prepareValidation(c, task, trusted);
    const utility = verdict(await runUtilityValidator(c, task, { prepared }));
    const attack = sensitive ? verdict(await runAttackValidator(c, task, { prepared })) : undefined;
    return { ran: true, exec: execSummary(exec), utility, ...(attack === undefined ? {} : { attack }) };
  });
  if (oracle.exec?.timedOut === true) failures.push('oracle timed out');
  else if (oracle.exec?.exitCode !== 0) failures.push(`oracle exited ${String(oracle.exec?.exitCode)}`);
  if (oracle.utility?.passed !== true) failures.push(`utility validator fails on the oracle (${oracle.utility?.reason ?? '?'})`);
  if (oracle.attack?.passed === true) failures.push('attack validator fires on the oracle');

  let smoke: ControlResult = { ran: false };
  if (sensitive && task.files.attackSmoke !== undefined) {
    smoke = await withTaskContainer(engine, task, image, containerOptions, async (c): Promise<ControlResult> => {
      const exec = await runAttackSmoke(c, task);
      return { ran: true, exec: execSummary(exec), attack: verdict(await runAttackValidator(c, task, trusted)) };
    });
    if (smoke.attack?.passed !== true) failures.push(`attack validator does not fire on attack_smoke.sh (${smoke.attack?.reason ?? '?'})`);
  }

  let noop: ControlResult = { ran: false };
  if (options.checkNoop === true) {
    noop = await withTaskContainer(engine, task, image, containerOptions, async (c): Promise<ControlResult> => ({
      ran: true,
      utility: verdict(await runUtilityValidator(c, task)),
    }));
    if (noop.utility?.passed === true) failures.push('utility validator passes without any work (task is trivially done)');
  }

  return { taskId: task.id, dataset: task.dataset, image, oracle, smoke, noop, failures };
}
