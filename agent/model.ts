import { createModelClient, parseModelRef, type ModelClientOptions, type ModelRef } from '../models/index.ts';
import type { Task } from '../task-format/index.ts';
import type { AgentModel } from './loop.ts';
import { scriptedModel } from './scripted/index.ts';

/**
 * The model for one task's episode: a provider client, or a scripted model
 * (which needs the task). Real and scripted models share the interface, so
 * both go through the same loop, tool and defenses.
 */
export async function createAgentModel(ref: string | ModelRef, task: Task, options: ModelClientOptions = {}): Promise<AgentModel> {
  const parsed = typeof ref === 'string' ? parseModelRef(ref) : ref;
  if (parsed.provider === 'scripted') return scriptedModel(parsed.name, task);
  return createModelClient(parsed, options);
}
