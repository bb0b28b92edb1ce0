import { z } from 'zod';
import { EnforcementSchema } from '../agent/index.ts';
import { PolicyScoreSchema } from '../score/index.ts';
import { RolloutMetricsSchema } from '../containment/index.ts';

export const ROLLOUT_STATUSES = ['completed', 'infra_error'] as const;

export const RolloutResultSchema = z
  .strictObject({
    schema_version: z.literal(1),
    rollout_id: z.string(),
    task_id: z.string(),
    dataset: z.enum(['standard', 'sensitive']),
    stage: z.string(),
    family: z.string().nullable().optional().describe('Scenario family (the task\'s [authbench].family)'),
    cluster: z.string(),
    model: z.string(),
    policy_source: z.string().describe('gold | allow-all | deny-all | none (defense none)'),
    policy_sha256: z.string().nullable(),
    policy_parse_status: z
      .enum(['strict', 'fenced', 'prefixed', 'repaired', 'invalid'])
      .optional()
      .describe('generated only: how much help the answer needed to yield a JSON object'),
    policy_valid: z.boolean().optional().describe('generated only: the answer was a valid policy (if not: scored 0, executed under deny-all)'),
    policy_generation: z
      .object({
        id: z.string().describe('One generation (task, attempt, invocation); rollouts of several defenses share it, so count its cost once per id'),
        input_tokens: z.number().int().nonnegative().nullable(),
        output_tokens: z.number().int().nonnegative().nullable(),
        cost_usd: z.number().nonnegative().nullable().describe('null when a call had an unknown cost'),
      })
      .optional()
      .describe('generated only: what the policy writer (exploration and tightening) cost'),
    defense: z.object({ name: z.string(), version: z.string() }),
    attempt: z.number().int(),
    seed: z.number().int(),
    status: z.enum(ROLLOUT_STATUSES).describe('infra_error: Docker or the model failed; never scored as an agent failure'),
    infra_error: z.object({ source: z.string(), code: z.string(), message: z.string() }).optional(),
    utility_success: z.boolean().nullable().describe('Utility validator passed (null when not run)'),
    utility_reason: z.string().optional(),
    attack_success: z.boolean().nullable().describe('Attack validator passed; null on standard tasks'),
    metrics: RolloutMetricsSchema.nullable()
      .optional()
      .describe('Containment metrics of the trace graph against the task\'s gold ledger; N/A cells are null; null when not measured'),
    static_score: PolicyScoreSchema.nullable().describe('The policy scored against gold (null under defense none)'),
    end_reason: z.string().nullable(),
    enforcement: EnforcementSchema.nullable(),
    totals: z
      .object({
        turns: z.number(),
        proposals: z.number(),
        valid_proposals: z.number(),
        invalid_proposals: z.number(),
        executed: z.number(),
        blocked: z.number(),
        held: z.number().optional().describe('Proposals held for a structured confirmation that never came (structured-guard)'),
        rolled_back: z.number().optional().describe('Executed proposals whose workspace effects the rollback defense undid'),
        denials: z.number(),
        input_tokens: z.number().nullable(),
        output_tokens: z.number().nullable(),
        cost_usd: z.number().nullable(),
      })
      .nullable(),
    image: z.string().nullable(),
    duration_ms: z.number(),
    phases_ms: z
      .object({
        setup: z.number().describe('Container start, launcher install and the sandbox session'),
        episode: z.number().describe('The agent episode, model calls included'),
        validate: z.number().describe('Utility and attack validators'),
        measure: z.number().describe('Containment measurement and the trace write'),
      })
      .optional()
      .describe('Where the rollout\'s wall time went (completed rollouts)'),
  })
  .describe('One rollout: jobs/<name>/<rollout>/result.json, written last and atomically');
export type RolloutResult = z.infer<typeof RolloutResultSchema>;
