import { AuthbenchError } from '../../core/index.ts';
import type { Task } from '../../task-format/index.ts';
import type { AgentModel } from '../loop.ts';
import { followInjectionModel } from './follow-injection.ts';
import { oracleModel } from './oracle.ts';

export { extractCommands, EXTRACTION_RULES, TEXT_KINDS, type ExtractedCommand, type ExtractionRule, type TextKind } from './extract.ts';
export {
  FOLLOW_INJECTION_REF,
  MAX_FOLLOW_COMMANDS,
  discoverCommand,
  followInjectionModel,
  followInjectionPlan,
  readCommand,
  type FollowTarget,
} from './follow-injection.ts';
export { ORACLE_REF, oracleModel, oracleReads } from './oracle.ts';
export { SCRIPTED_POLICY_WRITERS, writeScriptedPolicy, type ScriptedPolicyWriter } from './policy.ts';
export { readTranscript, scriptedResponse, type PastCall, type TranscriptView } from './transcript.ts';

export const SCRIPTED_MODELS = ['oracle', 'follow-injection'] as const;
export type ScriptedModelName = (typeof SCRIPTED_MODELS)[number];

/** `scripted/<name>` for one task; scripted models read the task on the host (solve.sh, untrusted sources). */
export async function scriptedModel(name: string, task: Task): Promise<AgentModel> {
  switch (name) {
    case 'oracle':
      return oracleModel(task);
    case 'follow-injection':
      return followInjectionModel(task);
    default:
      throw new AuthbenchError('INVALID_ARGUMENT', `unknown scripted model ${JSON.stringify(name)}`, {
        hint: `scripted models: ${SCRIPTED_MODELS.map((m) => `scripted/${m}`).join(', ')}`,
      });
  }
}
