import { resolvePolicy } from '../../oracle/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { Task } from '../../task-format/index.ts';

/** Baseline policy writers: no model, the same output every time. */
export const SCRIPTED_POLICY_WRITERS = ['gold', 'allow-all', 'deny-all'] as const;
export type ScriptedPolicyWriter = (typeof SCRIPTED_POLICY_WRITERS)[number];

/** The policy a scripted writer "writes" for a task (gold reads the committed oracle-traces/<id>/gold.json). */
export async function writeScriptedPolicy(writer: ScriptedPolicyWriter, task: Task, oracleTracesDir: string): Promise<Policy> {
  return (await resolvePolicy(writer, task, oracleTracesDir)).policy;
}
