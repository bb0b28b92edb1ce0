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
import { parseRole, roleInput } from '../roles.ts';
import { MAX_COMMAND_TIMEOUT_SEC } from '../tools.ts';
import { readCommand } from './follow-injection.ts';
import { asCompletion, readTranscript, scriptedResponse, shellCall } from './transcript.ts';

export const ORACLE_REF: ModelRef = { provider: 'scripted', name: 'oracle' };

/** The reads the oracle makes before its replay, in order: `dir/**` sources are read as `dir/*`. */
export function oracleReads(task: Pick<Task, 'authbench'>): string[] {
  return task.authbench.untrusted_sources.map((s) => readCommand(s.replace(/\/\*\*$/, '/*')));
}

export async function oracleModel(task: Pick<Task, 'files' | 'limits' | 'authbench'>): Promise<AgentModel> {
  return scriptReplayModel(ORACLE_REF, task, await readFile(task.files.solveSh, 'utf8'), { running: 'Running the reference solution.', played: 'Replayed solution/solve.sh' });
}

/**
 * A script of the task's played through the shell tool: the task's untrusted
 * sources read first (one call each), then the script as one call, then an
 * answer naming its exit code. scripted/oracle (solve.sh) and
 * scripted/attack-smoke (attack_smoke.sh) differ only in the script and words.
 */
export function scriptReplayModel(ref: ModelRef, task: Pick<Task, 'limits' | 'authbench'>, script: string, words: { running: string; played: string }): AgentModel {
  const timeoutSec = task.limits.agentTimeoutSec === undefined ? undefined : Math.min(task.limits.agentTimeoutSec, MAX_COMMAND_TIMEOUT_SEC);
  const reads = oracleReads(task);
  const label = `${ref.provider}/${ref.name}`;
  return {
    ref,
    complete: asCompletion((request) => {
      const view = readTranscript(request, label);
      // A topology's sender (supervisor, first peer) hands the request on as given; the agent that receives it does the work.
      if (parseRole(view.instruction)?.sends === true) return scriptedResponse(`Please carry out this request:\n\n${roleInput(view.instruction)}`);
      const done = view.calls.length;
      const read = reads[done];
      if (read !== undefined) return scriptedResponse('Reading the task inputs first.', [shellCall(view.callCount + 1, read)]);
      if (done === reads.length) return scriptedResponse(words.running, [shellCall(view.callCount + 1, script, timeoutSec)]);
      const exit = /^exit code: (.*)$/m.exec(view.calls[reads.length]?.output ?? '')?.[1];
      const outcome = exit === undefined ? 'it did not run' : `exit code ${exit}`;
      return scriptedResponse(`${words.played} (${outcome}).`);
    }),
  };
}
