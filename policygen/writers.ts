/**
 * Who writes the policy: a provider model, or a scripted baseline writer that
 * answers at once with a fixed policy as JSON text — through the same episode
 * and parse path as a model, so a baseline's numbers mean the same thing.
 */
import { SCRIPTED_POLICY_WRITERS, createAgentModel, scriptedResponse, writeScriptedPolicy, type AgentModel, type ScriptedPolicyWriter } from '../agent/index.ts';
import { AuthbenchError } from '../core/index.ts';
import { parseModelRef, type ModelClientOptions, type ModelRef } from '../models/index.ts';
import { goldPaths, readStoredGold } from '../oracle/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';

export function isScriptedPolicyWriter(name: string): name is ScriptedPolicyWriter {
  return (SCRIPTED_POLICY_WRITERS as readonly string[]).includes(name);
}

/**
 * The policy a scripted writer answers with. `gold` answers S_gold — the gold
 * file's `required` sets, what policies are scored against — not the enforced
 * gold policy (which adds support, directories and implicit entries so the
 * oracle can run); so scripted/gold scores macro F1 = 1 by construction.
 */
export async function scriptedWriterPolicy(writer: ScriptedPolicyWriter, task: Task, oracleTracesDir: string): Promise<Policy> {
  if (writer !== 'gold') return writeScriptedPolicy(writer, task, oracleTracesDir);
  const paths = goldPaths(oracleTracesDir, task.id);
  const gold = await readStoredGold(paths);
  if (gold === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `task ${task.id} has no gold yet`, { file: paths.gold, hint: `run: authbench gen-gold ${task.id}` });
  return { read: [...gold.required.read], write: [...gold.required.write], execute: [...gold.required.execute] };
}

/** A model that answers every request with the policy JSON and never calls a tool. */
export function fixedAnswerModel(ref: ModelRef, answer: string): AgentModel {
  return { ref, complete: () => Promise.resolve(scriptedResponse(answer)) };
}

export interface PolicyWriterOptions {
  oracleTracesDir: string;
  client?: ModelClientOptions;
}

/** `--model` for policy writing: a provider model or scripted/gold|allow-all|deny-all. */
export async function createPolicyWriter(ref: string | ModelRef, task: Task, options: PolicyWriterOptions): Promise<AgentModel> {
  const parsed = typeof ref === 'string' ? parseModelRef(ref) : ref;
  if (parsed.provider !== 'scripted') return createAgentModel(parsed, task, options.client ?? {});
  if (!isScriptedPolicyWriter(parsed.name)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `scripted/${parsed.name} is not a policy writer`, {
      hint: `scripted policy writers: ${SCRIPTED_POLICY_WRITERS.map((w) => `scripted/${w}`).join(', ')} (scripted/oracle and scripted/follow-injection are execution agents)`,
    });
  }
  const policy = await scriptedWriterPolicy(parsed.name, task, options.oracleTracesDir);
  return fixedAnswerModel(parsed, JSON.stringify(policy, null, 2));
}
