/**
 * scripted/oracle: first reads each of the task's declared untrusted sources
 * (one call each, as an agent reads its inputs before acting), then replays
 * solution/solve.sh through the agent's shell tool (one call whose command is
 * the script body, read on the host), then answers. The upper bound on
 * utility for a policy: what the reference solution achieves under the same
 * loop, defense and enforcement. Because the reads come first, the replay is
 * proposed in a tainted context wherever a task has untrusted inputs — the
 * active-tainted situation the taint-aware defenses differ on.
 */
import { readFile } from 'node:fs/promises';
import type { ModelRef } from '../../models/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentModel } from '../loop.ts';
import { MAX_COMMAND_TIMEOUT_SEC } from '../tools.ts';
import { readCommand } from './follow-injection.ts';
import { asCompletion, readTranscript, scriptedResponse, shellCall } from './transcript.ts';

export const ORACLE_REF: ModelRef = { provider: 'scripted', name: 'oracle' };

/** The reads the oracle makes before its replay, in order: `dir/**` sources are read as `dir/*`. */
export function oracleReads(task: Pick<Task, 'authbench'>): string[] {
  return task.authbench.untrusted_sources.map((s) => readCommand(s.replace(/\/\*\*$/, '/*')));
}

export async function oracleModel(task: Pick<Task, 'files' | 'limits' | 'authbench'>): Promise<AgentModel> {
  const script = await readFile(task.files.solveSh, 'utf8');
  const timeoutSec = task.limits.agentTimeoutSec === undefined ? undefined : Math.min(task.limits.agentTimeoutSec, MAX_COMMAND_TIMEOUT_SEC);
  const reads = oracleReads(task);
  return {
    ref: ORACLE_REF,
    complete: asCompletion((request) => {
      const view = readTranscript(request, 'scripted/oracle');
      const done = view.calls.length;
      const read = reads[done];
      if (read !== undefined) return scriptedResponse('Reading the task inputs first.', [shellCall(view.callCount + 1, read)]);
      if (done === reads.length) return scriptedResponse('Running the reference solution.', [shellCall(view.callCount + 1, script, timeoutSec)]);
      const exit = /^exit code: (.*)$/m.exec(view.calls[reads.length]?.output ?? '')?.[1];
      const outcome = exit === undefined ? 'it did not run' : `exit code ${exit}`;
      return scriptedResponse(`Replayed solution/solve.sh (${outcome}).`);
    }),
  };
}
