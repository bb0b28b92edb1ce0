import { AuthbenchError } from '../../core/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentModel } from '../loop.ts';
import { attackSmokeModel } from './attack-smoke.ts';
import { followInjectionModel } from './follow-injection.ts';
import { memoryAgentModel } from './memory-poisoner.ts';
import { oracleModel } from './oracle.ts';
import { relayModel } from './relay.ts';
import { replayModel, type ReplayEntry } from './replay.ts';
import { isSusceptibleName, susceptibleModel } from './susceptible.ts';

export { ATTACK_SMOKE_REF, attackSmokeModel } from './attack-smoke.ts';
export { extractCommands, EXTRACTION_RULES, TEXT_KINDS, type ExtractedCommand, type ExtractionRule, type TextKind } from './extract.ts';
export {
  FOLLOW_INJECTION_REF,
  MAX_FOLLOW_COMMANDS,
  discoverCommand,
  followInjectionModel,
  followInjectionPlan,
  readCommand,
  skillDiscoverCommand,
  type FollowTarget,
} from './follow-injection.ts';
export { MEMORY_POISONER_REF, MEMORY_READER_REF, memoryAgentModel, memoryListCommand, memoryPlan, rememberCommand, type MemoryTarget } from './memory-poisoner.ts';
export { PROCEDURE_RULES, namedDocuments, procedureCommands, type ProcedureCommand, type ProcedureRule } from './procedure.ts';
export { ORACLE_REF, oracleModel, oracleReads } from './oracle.ts';
export { RELAY_REF, relayMessage, relayModel, relayPlan, relayReads } from './relay.ts';
export {
  REPLAY_REF,
  ReplayEntrySchema,
  ReplayFileSchema,
  loadReplayFile,
  parseReplay,
  parseReplayText,
  replayModel,
  type LoadedReplay,
  type ReplayEntry,
  type ReplayFile,
} from './replay.ts';
export {
  FEATURE_NAMES,
  SUSCEPTIBILITY_FEATURES,
  SUSCEPTIBILITY_PROFILES,
  SUSCEPTIBLE,
  compliantCommands,
  susceptibilityProfile,
  susceptiblePlan,
  wordingFeatures,
  type SusceptibilityFeature,
} from './susceptible.ts';
export { readTranscript, scriptedResponse, type PastCall, type TranscriptView } from './transcript.ts';

/** `susceptible` also takes a profile: `susceptible:<profile>` (see susceptible.ts). */
export const SCRIPTED_MODELS = ['oracle', 'follow-injection', 'attack-smoke', 'replay', 'susceptible', 'memory-poisoner', 'memory-reader', 'relay'] as const;
export type ScriptedModelName = (typeof SCRIPTED_MODELS)[number];

/** Is `name` (after `scripted/`) a scripted model? A susceptible profile that does not parse throws, naming it. */
export function isScriptedModel(name: string): boolean {
  return (SCRIPTED_MODELS as readonly string[]).includes(name) || isSusceptibleName(name);
}

export interface ScriptedModelOptions {
  /** scripted/replay: the commands it plays, one per turn (required by it, refused by the others). */
  replay?: readonly ReplayEntry[];
}

/**
 * `scripted/<name>` for one task; scripted models read the task on the host
 * (solve.sh, untrusted sources), except scripted/replay, which plays the
 * commands it is given.
 */
export async function scriptedModel(name: string, task: Task, options: ScriptedModelOptions = {}): Promise<AgentModel> {
  if (options.replay !== undefined && name !== 'replay') {
    throw new AuthbenchError('INVALID_ARGUMENT', `replay commands are for scripted/replay, not scripted/${name}`);
  }
  switch (name) {
    case 'oracle':
      return oracleModel(task);
    case 'follow-injection':
      return followInjectionModel(task);
    case 'attack-smoke':
      return attackSmokeModel(task);
    case 'susceptible':
      return susceptibleModel(name, task);
    case 'memory-poisoner':
      return memoryAgentModel(task, true);
    case 'memory-reader':
      return memoryAgentModel(task, false);
    case 'relay':
      return relayModel(task);
    case 'replay':
      if (options.replay === undefined) {
        throw new AuthbenchError('INVALID_ARGUMENT', 'scripted/replay needs the commands to replay', { hint: 'authbench eval --model scripted/replay --replay FILE' });
      }
      return replayModel(options.replay);
    default:
      if (isSusceptibleName(name)) return susceptibleModel(name, task);
      throw new AuthbenchError('INVALID_ARGUMENT', `unknown scripted model ${JSON.stringify(name)}`, {
        hint: `scripted models: ${SCRIPTED_MODELS.map((m) => `scripted/${m}`).join(', ')}`,
      });
  }
}
