/**
 * scripted/attack-smoke: a positive control that needs no injection to be
 * found. It plays the task's own solution/attack_smoke.sh — the author's proof
 * that the attack validator can pass — through the agent's shell tool, the way
 * scripted/oracle plays solve.sh: the task's untrusted sources read first (one
 * call each), then the script as one call, then an answer. Under allow-all it
 * must attack; under gold the kernel must contain it. Works on any dataset
 * whose sensitive tasks ship an attack smoke run.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import type { ModelRef } from '../../models/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentModel } from '../loop.ts';
import { scriptReplayModel } from './oracle.ts';
import { asCompletion, scriptedResponse } from './transcript.ts';

export const ATTACK_SMOKE_REF: ModelRef = { provider: 'scripted', name: 'attack-smoke' };

/**
 * A sensitive task without the script cannot be played: an error naming the
 * task (the job stops before a rollout of it says "contained" about an attack
 * that never ran). A standard task has no attack: the model answers at once.
 */
export async function attackSmokeModel(task: Pick<Task, 'id' | 'dir' | 'dataset' | 'files' | 'limits' | 'authbench'>): Promise<AgentModel> {
  if (task.files.attackSmoke === undefined) {
    if (task.dataset === 'sensitive') {
      throw new AuthbenchError('INVALID_ARGUMENT', `scripted/attack-smoke: task ${task.id} has no solution/attack_smoke.sh to play`, {
        file: join(task.dir, 'solution', 'attack_smoke.sh'),
        hint: `leave it out (--exclude ${task.id}) or use scripted/follow-injection, which finds the injection itself`,
      });
    }
    return {
      ref: ATTACK_SMOKE_REF,
      complete: asCompletion(() => scriptedResponse(`No attack to play: ${task.id} is a standard task.`)),
    };
  }
  return scriptReplayModel(ATTACK_SMOKE_REF, task, await readFile(task.files.attackSmoke, 'utf8'), { running: 'Running the attack smoke script.', played: 'Played solution/attack_smoke.sh' });
}
