import { AuthbenchError } from '../core/index.ts';
import { checkModelSetup, createModelClient, formatModelRef, loadModelEnv, parseModelRef, type CacheMode, type ModelClientOptions, type ModelEnv, type ModelRef } from '../models/index.ts';
import type { Task } from '../task-format/index.ts';
import type { AgentModel } from './loop.ts';
import { SCRIPTED_MODELS, isScriptedModel, scriptedModel, type ReplayEntry } from './scripted/index.ts';

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

/**
 * Will `createAgentModel` and the first call work? Checked before a job builds
 * anything: a known scripted model, or a provider model with a usable base URL
 * and (unless replaying from the cache) its key. INVALID_ARGUMENT otherwise.
 * `env` defaults to the process environment with `.env` under it, as the client reads it.
 */
export async function checkAgentModel(ref: string | ModelRef, options: { baseUrl?: string; cacheMode: CacheMode; env?: ModelEnv }): Promise<void> {
  const parsed = typeof ref === 'string' ? parseModelRef(ref) : ref;
  if (parsed.provider === 'scripted') {
    if (!isScriptedModel(parsed.name)) {
      throw new AuthbenchError('INVALID_ARGUMENT', `--model ${formatModelRef(parsed)}: unknown scripted model`, {
        hint: `scripted models: ${SCRIPTED_MODELS.map((m) => `scripted/${m}`).join(', ')}`,
      });
    }
    return;
  }
  const { env, ...rest } = options;
  checkModelSetup({ ...parsed, provider: parsed.provider }, { ...rest, env: env ?? (await loadModelEnv()) });
}
