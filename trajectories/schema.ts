/**
 * ATIF, Harbor's Agent Trajectory Interchange Format (`trajectory.json`), as
 * authbench reads and writes it; and what an imported trajectory becomes here.
 * Every object is loose: later ATIF versions only add optional fields, so a
 * reader that checks the required fields and keeps the rest reads v1.0 … v1.8
 * alike (an unknown field survives a parse untouched).
 */
import { z } from 'zod';

/** The versions this reader was written against; another one is refused rather than misread. */
export const ATIF_VERSIONS = ['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6', 'ATIF-v1.7', 'ATIF-v1.8'] as const;

/**
 * The version `authbench trajectories export` writes. Everything it writes is
 * in the root and step tables every version has (plus `final_metrics` and
 * `extra`), so any reader of the v1.5–v1.8 range the issue asks for reads it;
 * it is not v1.8 because nothing it writes needs the fields later versions add.
 */
export const ATIF_EXPORT_VERSION = 'ATIF-v1.6' as const;

/** A required field's message: missing, or there but of the wrong kind. */
const need = (what: string) => (issue: { input?: unknown }): string => (issue.input === undefined ? `required (${what})` : `must be ${what}`);

const text = z
  .union([z.string(), z.array(z.unknown())], { error: 'must be a string (or a list of content parts)' })
  .describe('Text, or (multimodal writers) a list of content parts whose `text` fields are read');

export const AtifToolCallSchema = z
  .looseObject({
    tool_call_id: z.string({ error: need('a string') }).describe('Id the observation results link to (`source_call_id`)'),
    function_name: z.string({ error: need('a string') }).describe("The tool's name as the agent called it"),
    arguments: z.record(z.string(), z.unknown(), { error: need('a JSON object') }).describe('The arguments, a JSON object'),
  })
  .describe('One tool call of an agent step');
export type AtifToolCall = z.infer<typeof AtifToolCallSchema>;

export const AtifResultSchema = z
  .looseObject({
    source_call_id: z.string().nullable().optional().describe('The tool_call_id this result answers; none: an action outside tool calling or a system event'),
    content: text.nullable().optional().describe('What the agent was shown'),
    subagent_trajectory_ref: z.array(z.looseObject({ session_id: z.string() })).nullable().optional().describe("A delegated sub-agent's own trajectories"),
  })
  .describe('One observation result');

export const AtifMetricsSchema = z
  .looseObject({
    prompt_tokens: z.number().nullable().optional().describe('Includes cached ones'),
    completion_tokens: z.number().nullable().optional(),
    cached_tokens: z.number().nullable().optional(),
    cost_usd: z.number().nullable().optional(),
  })
  .describe("One step's model-call accounting");

export const AtifStepSchema = z
  .looseObject({
    step_id: z.number({ error: need('a number') }).int('must be an integer').positive('must be 1 or more').describe('1-based ordinal'),
    timestamp: z.string().nullable().optional().describe('ISO 8601'),
    source: z.enum(['system', 'user', 'agent'], { error: need('"system", "user" or "agent"') }).describe('Who produced the step'),
    model_name: z.string().nullable().optional().describe("Agent steps: overrides the root's"),
    message: text.describe('The prompt, instruction or reply; may be empty'),
    reasoning_content: z.string().nullable().optional(),
    tool_calls: z.array(AtifToolCallSchema).nullable().optional().describe('Agent steps: the tool calls made'),
    observation: z.looseObject({ results: z.array(AtifResultSchema, { error: need('a list') }) }).nullable().optional().describe('What came back'),
    metrics: AtifMetricsSchema.nullable().optional(),
    extra: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .describe('One step of a trajectory');
export type AtifStep = z.infer<typeof AtifStepSchema>;

export const AtifTrajectorySchema = z
  .looseObject({
    schema_version: z
      .string({ error: need('a string such as "ATIF-v1.6"') })
      .refine((v) => (ATIF_VERSIONS as readonly string[]).includes(v), { message: `must be one of ${ATIF_VERSIONS[0]} … ${ATIF_VERSIONS.at(-1) ?? ''}` })
      .describe('ATIF-v1.x'),
    session_id: z.string({ error: need('a string') }).describe('Id of the whole run'),
    agent: z
      .looseObject({
        name: z.string({ error: need('a string') }),
        version: z.string({ error: need('a string') }),
        model_name: z.string().nullable().optional(),
        extra: z.record(z.string(), z.unknown()).nullable().optional(),
      }, { error: need('an object { name, version }') })
      .describe('Which agent ran'),
    steps: z.array(AtifStepSchema, { error: need('a list of steps') }).describe('In order'),
    notes: z.string().nullable().optional(),
    final_metrics: z
      .looseObject({
        total_prompt_tokens: z.number().nullable().optional(),
        total_completion_tokens: z.number().nullable().optional(),
        total_cached_tokens: z.number().nullable().optional(),
        total_cost_usd: z.number().nullable().optional(),
        total_steps: z.number().nullable().optional(),
      })
      .nullable()
      .optional(),
    extra: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .describe('One agent run (trajectory.json)');
export type AtifTrajectory = z.infer<typeof AtifTrajectorySchema>;

// What an imported trajectory is here: its tool calls as proposals, each with the observation
// linked to it, and whether it maps to one shell command scripted/replay can play.

export const ImportedProposalSchema = z
  .object({
    id: z.string().describe('Stable call id: the tool_call_id when it is non-empty and unique, else `step<N>.call<k>`'),
    step_id: z.number().int().describe('The ATIF step it came from'),
    tool: z.string().describe('function_name as written'),
    args: z.record(z.string(), z.unknown()).describe('arguments as written'),
    command: z.string().nullable().describe('The shell command it maps to; null when unmapped'),
    timeout_sec: z.number().positive().optional().describe("authbench's own `timeout_sec`, kept for replay"),
    unmapped: z.string().optional().describe('Why it maps to no command (set exactly when command is null)'),
    observation: z.string().nullable().describe('The linked result text (source_call_id); null when nothing answered the call'),
  })
  .describe('One tool call of an imported trajectory');
export type ImportedProposal = z.infer<typeof ImportedProposalSchema>;

export const LinkageSchema = z
  .object({
    tool_calls: z.number().int().nonnegative(),
    observed: z.number().int().nonnegative().describe('Tool calls with a result whose source_call_id names them'),
    unobserved: z.array(z.string()).describe('Call ids nothing answered'),
    orphan_results: z.number().int().nonnegative().describe('Results naming a call id no tool call has'),
    unlinked_results: z.number().int().nonnegative().describe('Results without source_call_id (actions outside tool calling, system events)'),
  })
  .describe('Event linkage: does every tool call have its observation');
export type Linkage = z.infer<typeof LinkageSchema>;

export const ImportedTrajectorySchema = z
  .object({
    file: z.string().describe('The trajectory file as read'),
    schema_version: z.string(),
    session_id: z.string(),
    agent: z.object({ name: z.string(), version: z.string(), model_name: z.string().optional() }),
    task_id: z.string().optional().describe("The authbench task, when the trajectory says (our own exports' extra.authbench.task_id)"),
    steps: z.number().int().nonnegative().describe('ATIF steps'),
    proposals: z.array(ImportedProposalSchema).describe('Every tool call, in trajectory order'),
    reward: z.number().nullable().describe("The native endpoint: the verifier's reward next to the trajectory; null when none was found"),
    reward_file: z.string().optional(),
    linkage: LinkageSchema,
  })
  .describe('An ATIF trajectory as authbench reads it');
export type ImportedTrajectory = z.infer<typeof ImportedTrajectorySchema>;
