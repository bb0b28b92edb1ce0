/**
 * Running a task's oracle, attack smoke and validators inside its container,
 * the way Harbor does: solution/ is copied to /solution and solve.sh runs from
 * the task's working directory; tests/ is copied to /tests only after the
 * agent (or oracle) has finished, never before, so nothing the agent runs can
 * read or tamper with them; validators run as root outside enforcement.
 */
import { dirname } from 'node:path';
import type { Container, ExecResult } from '../docker/index.ts';
import type { Task } from '../task-format/index.ts';
import { parseRewardJson, parseRewardText, rewardComponents, rewardPassed, type RewardSource } from './reward.ts';

export const CONTAINER_PATHS = {
  solution: '/solution',
  tests: '/tests',
  verifierLogs: '/logs/verifier',
} as const;

const DEFAULT_ORACLE_TIMEOUT_MS = 600_000;

export interface ValidatorOutcome {
  /** utility: the task was done; attack: the attack happened. */
  passed: boolean;
  /** Why the verdict is what it is (reward value, pytest summary, or the problem). */
  reason: string;
  reward?: number;
  /** reward.json's named parts (e.g. `task`, `recovery` of a memory/recovery scenario). */
  components?: Record<string, number>;
  source: RewardSource;
  exec: ExecResult;
}

function timeoutMs(seconds: number | undefined, fallback: number): number {
  return seconds === undefined ? fallback : Math.round(seconds * 1000);
}

/** Copy solution/ into /solution and run solve.sh from the working directory. */
export async function runOracle(container: Container, task: Task): Promise<ExecResult> {
  await container.copyIn(dirname(task.files.solveSh), '/');
  return container.exec({
    cmd: ['bash', `${CONTAINER_PATHS.solution}/solve.sh`],
    workdir: task.workdir,
    timeoutMs: timeoutMs(task.limits.agentTimeoutSec, DEFAULT_ORACLE_TIMEOUT_MS),
  });
}

/** Run the deliberately unsafe solution/attack_smoke.sh (sensitive tasks only). */
export async function runAttackSmoke(container: Container, task: Task): Promise<ExecResult> {
  if (task.files.attackSmoke === undefined) {
    throw new Error(`task ${task.id} has no solution/attack_smoke.sh`);
  }
  await container.copyIn(dirname(task.files.attackSmoke), '/');
  return container.exec({
    cmd: ['bash', `${CONTAINER_PATHS.solution}/attack_smoke.sh`],
    workdir: task.workdir,
    timeoutMs: timeoutMs(task.limits.agentTimeoutSec, DEFAULT_ORACLE_TIMEOUT_MS),
  });
}

async function ensureTests(container: Container, task: Task): Promise<void> {
  const present = await container.exec({ cmd: ['test', '-d', CONTAINER_PATHS.tests] });
  if (present.exitCode !== 0) await container.copyIn(task.files.testsDir, '/');
}

/**
 * The utility validator: tests/test.sh writing /logs/verifier/reward.txt|json
 * (Harbor), else `pytest tests/test_outputs.py` judged by its exit code.
 */
export async function runUtilityValidator(container: Container, task: Task): Promise<ValidatorOutcome> {
  await ensureTests(container, task);
  const limit = timeoutMs(task.limits.verifierTimeoutSec, 600_000);
  if (task.files.testSh === undefined) {
    const exec = await container.exec({
      cmd: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', `${CONTAINER_PATHS.tests}/test_outputs.py`],
      workdir: task.workdir,
      timeoutMs: limit,
    });
    return { passed: exec.exitCode === 0, reason: pytestSummary(exec), source: 'exit-code', exec };
  }
  await container.exec({ cmd: ['mkdir', '-p', CONTAINER_PATHS.verifierLogs] });
  // A stale reward from an earlier validator run must not be read as this one's.
  await container.exec({ cmd: ['rm', '-f', `${CONTAINER_PATHS.verifierLogs}/reward.txt`, `${CONTAINER_PATHS.verifierLogs}/reward.json`] });
  const exec = await container.exec({ cmd: ['bash', `${CONTAINER_PATHS.tests}/test.sh`], workdir: task.workdir, timeoutMs: limit });
  if (exec.timedOut) return { passed: false, reason: 'validator timed out', source: 'exit-code', exec };
  const txt = await container.readFile(`${CONTAINER_PATHS.verifierLogs}/reward.txt`);
  const json = txt === undefined ? await container.readFile(`${CONTAINER_PATHS.verifierLogs}/reward.json`) : undefined;
  if (txt === undefined && json === undefined) {
    return { passed: false, reason: `test.sh wrote no reward file (exit ${String(exec.exitCode)})`, source: 'exit-code', exec };
  }
  const source: RewardSource = txt !== undefined ? 'reward.txt' : 'reward.json';
  const parsed = txt !== undefined ? parseRewardText(txt.toString('utf8')) : parseRewardJson((json ?? Buffer.alloc(0)).toString('utf8'));
  if (typeof parsed === 'string') return { passed: false, reason: parsed, source, exec };
  const components = json === undefined ? {} : rewardComponents(json.toString('utf8'));
  return { passed: rewardPassed(parsed), reason: `reward ${parsed}`, reward: parsed, ...(Object.keys(components).length > 0 ? { components } : {}), source, exec };
}

/** The attack validator (AuthBench): pytest on test_attack_outputs.py; passing means the attack happened. */
export async function runAttackValidator(container: Container, task: Task): Promise<ValidatorOutcome> {
  if (task.files.attackValidator === undefined) {
    throw new Error(`task ${task.id} has no tests/test_attack_outputs.py`);
  }
  await ensureTests(container, task);
  const exec = await container.exec({
    cmd: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', `${CONTAINER_PATHS.tests}/test_attack_outputs.py`],
    workdir: task.workdir,
    timeoutMs: timeoutMs(task.limits.verifierTimeoutSec, 600_000),
  });
  return { passed: exec.exitCode === 0, reason: pytestSummary(exec), source: 'exit-code', exec };
}

/** pytest's last non-empty line ("2 passed in 0.01s"), or the exit status when there is none. */
export function pytestSummary(exec: ExecResult): string {
  if (exec.timedOut) return 'timed out';
  const last = exec.stdout.trimEnd().split('\n').at(-1)?.trim();
  return last !== undefined && last !== '' ? last : `exit ${String(exec.exitCode)}`;
}
