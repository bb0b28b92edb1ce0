/**
 * Who writes the policy: a provider model, or a scripted baseline writer that
 * answers at once with a fixed policy as JSON text — through the same episode
 * and parse path as a model, so a baseline's numbers mean the same thing.
 */
import { createAgentModel, scriptedResponse, type AgentModel } from '../agent/index.ts';
import { AuthbenchError } from '../core/index.ts';
import { goldPaths, requireGold } from '../goldstore/index.ts';
import { parseModelRef, type ModelClientOptions, type ModelRef } from '../models/index.ts';
import { allowAllPolicy, denyAllPolicy, type Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';

/** Baseline policy writers: no model, the same output every time. */
export const SCRIPTED_POLICY_WRITERS = ['gold', 'allow-all', 'deny-all'] as const;
export type ScriptedPolicyWriter = (typeof SCRIPTED_POLICY_WRITERS)[number];

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
  if (writer === 'allow-all') return allowAllPolicy();
  if (writer === 'deny-all') return denyAllPolicy();
  const gold = await requireGold(goldPaths(oracleTracesDir, task.id));
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
