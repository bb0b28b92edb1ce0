/**
 * scripted/oracle: replays the task's solution/solve.sh through the agent's
 * shell tool (one call whose command is the script body, read on the host),
 * then answers. The upper bound on utility for a policy: what the reference
 * solution achieves under the same loop, defense and enforcement.
 */
import { readFile } from 'node:fs/promises';
import type { ModelRef } from '../../models/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentModel } from '../loop.ts';
import { MAX_COMMAND_TIMEOUT_SEC } from '../tools.ts';
import { asCompletion, readTranscript, scriptedResponse, shellCall } from './transcript.ts';

export const ORACLE_REF: ModelRef = { provider: 'scripted', name: 'oracle' };

export async function oracleModel(task: Pick<Task, 'files' | 'limits'>): Promise<AgentModel> {
  const script = await readFile(task.files.solveSh, 'utf8');
  const timeoutSec = task.limits.agentTimeoutSec === undefined ? undefined : Math.min(task.limits.agentTimeoutSec, MAX_COMMAND_TIMEOUT_SEC);
  return {
    ref: ORACLE_REF,
    complete: asCompletion((request) => {
      const view = readTranscript(request, 'scripted/oracle');
      if (view.calls.length === 0) return scriptedResponse('Running the reference solution.', [shellCall(view.callCount + 1, script, timeoutSec)]);
      const exit = /^exit code: (.*)$/m.exec(view.calls[0]?.output ?? '')?.[1] ?? 'unknown';
      return scriptedResponse(`Replayed solution/solve.sh (exit code ${exit}).`);
    }),
  };
}
