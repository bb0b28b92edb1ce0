import { AuthbenchError } from '../core/index.ts';
import { createModelClient, parseModelRef, type ModelClientOptions, type ModelRef } from '../models/index.ts';
import type { Task } from '../task-format/index.ts';
import type { AgentModel } from './loop.ts';
import { scriptedModel, type ReplayEntry } from './scripted/index.ts';

export interface AgentModelOptions extends ModelClientOptions {
  /** scripted/replay: the commands to play, one per turn (strings, or `{ command, timeout_sec? }`). */
  replay?: readonly ReplayEntry[];
}

/**
 * The model for one task's episode: a provider client, or a scripted model
 * (which needs the task, or for scripted/replay its commands). Real and
 * scripted models share the interface, so both go through the same loop,
 * tool and defenses.
 */
export async function createAgentModel(ref: string | ModelRef, task: Task, options: AgentModelOptions = {}): Promise<AgentModel> {
  const parsed = typeof ref === 'string' ? parseModelRef(ref) : ref;
  const { replay, ...client } = options;
  if (parsed.provider === 'scripted') return scriptedModel(parsed.name, task, replay === undefined ? {} : { replay });
  if (replay !== undefined) throw new AuthbenchError('INVALID_ARGUMENT', `replay commands are for scripted/replay, not ${parsed.provider}/${parsed.name}`);
  return createModelClient(parsed, client);
}
