/**
 * An eval job's configuration (jobs/<name>/config.json) and the pure
 * expansion of it into rollouts: task × policy source × defense × attempt.
 */
import { z } from 'zod';
import { ShellModeSchema, ToolFormatSchema } from '../agent/index.ts';

/** What traces an eval's commands (`eval --tracer`). */
export const EVAL_TRACERS = ['strace', 'ebpf'] as const;
export type EvalTracer = (typeof EVAL_TRACERS)[number];
import { AgentNameSchema } from '../agents/index.ts';
import { BaseMapEntrySchema, type BaseMapEntry } from '../docker/index.ts';
import { TOPOLOGIES } from '../task-format/index.ts';

/** Stopped proposals re-run per rollout when the config says nothing (`max_counterfactuals`; evaluation/counterfactual.ts). */
export const DEFAULT_MAX_COUNTERFACTUALS = 8;

export const POLICY_SOURCES = ['gold', 'allow-all', 'deny-all', 'generated'] as const;
export type PolicySource = (typeof POLICY_SOURCES)[number];
/** A job's policies: the sources, or `file` for the hand-written policy its config names (`policy_file`). */
export type JobPolicy = PolicySource | 'file';

export const EvalConfigSchema = z
  .strictObject({
    schema_version: z.literal(1),
    model: z.string().describe('Model reference as given (`gpt-5`, `anthropic/…`, `scripted/oracle`)'),
    // Optional so configs (and locks) of jobs that replay nothing stay as they were.
    replay: z
      .strictObject({
        path: z.string().describe('The replay file as given to --replay'),
        sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest').describe('Of the file\'s bytes when the job started'),
      })
      .optional()
      .describe('scripted/replay: the commands it plays (present exactly when the model is scripted/replay)'),
    base_url: z.string().optional().describe('Base URL for openai-compatible providers'),
    tasks_dir: z.string().describe('Folder of task folders'),
    oracle_traces_dir: z.string().describe('Where gold lives'),
    include: z.array(z.string()).describe('Task id globs to keep (empty: all)'),
    exclude: z.array(z.string()).describe('Task id globs to drop'),
    policies: z.array(z.enum([...POLICY_SOURCES, 'file'])).min(1).describe('Policy sources; `file` is the policy_file'),
    // Optional so configs (and locks) of jobs without a hand-written policy stay as they were.
    policy_file: z
      .strictObject({
        path: z.string().describe('The policy file as given to --policy'),
        sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest').describe("Of the file's bytes when the job started"),
      })
      .optional()
      .describe('A hand-written policy, scored and enforced like a generated one (present exactly when policies has `file`)'),
    limit: z.number().int().min(1).optional().describe('Only the first N selected tasks (by id)'),
    // Optional so configs (and locks) of jobs without generated policies stay as they were.
    policy_strategy: z
      .enum(['direct', 'sufficiency-tightness'])
      .optional()
      .describe('How `generated` policies are written (absent: direct); one generation per (task, attempt)'),
    defenses: z.array(z.string()).min(1).describe('Runtime defenses'),
    attempts: z.number().int().min(1).describe('Attempts per (task, policy, defense)'),
    seed: z.number().int().describe('Base seed; attempt k uses seed + k'),
    max_turns: z.number().int().min(1),
    // Optional so configs (and locks) of jobs with native tool calls stay as they were.
    tool_format: ToolFormatSchema.optional().describe('How the execution agent acts (absent: native)'),
    // Optional so configs (and locks) of jobs traced by strace stay as they were.
    tracer: z
      .enum(EVAL_TRACERS)
      .optional()
      .describe("What traces the agent's commands: strace in the container, or eBPF from the host (one tracer for the job, `--tracer ebpf`; absent: strace)"),
    // Optional so configs (and locks) of jobs with a fresh shell per command stay as they were.
    shell: ShellModeSchema.optional().describe('How the built-in loop runs commands: a fresh `bash -c` each, or one persistent shell per episode (absent: fresh)'),
    // Optional so configs (and locks) of single-agent jobs stay as they were.
    topology: z
      .enum(TOPOLOGIES)
      .optional()
      .describe("Agent topology for tasks whose [authbench] sets none (absent: single; evaluation/topology.ts)"),
    // Optional so configs (and locks) of jobs with authbench's own loop stay as they were; the version
    // is in the lock, so --resume refuses a job whose agent's pinned version changed.
    agent: z
      .strictObject({
        name: AgentNameSchema,
        version: z.string().describe('The adapter\'s exact package version when the job started'),
      })
      .optional()
      .describe('The installed agent that acts (`--agent`; absent: authbench, the built-in loop)'),
    // Optional so configs (and locks) of jobs with the default stay as they were.
    max_counterfactuals: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Stopped proposals re-run per rollout in a throw-away copy to judge false positives (absent: 8; 0: none, --no-counterfactuals)'),
    cache: z.enum(['off', 'read-write', 'replay-only']).describe('Model response cache mode'),
    model_timeout_sec: z.number().positive().describe('Per model call (each attempt)'),
    model_retries: z.number().int().min(0).describe('Retries of a failed model call (rate limits, 5xx, timeouts)'),
    // Optional so configs (and locks) of jobs built with the defaults stay as they were. What changes an
    // image is here, so --resume refuses other images; the build CA and proxies are not: they never change one.
    build: z
      .strictObject({
        base_map: z.array(BaseMapEntrySchema).describe('--base-map entries, checked before the map file'),
        build_args: z.record(z.string(), z.string()).describe('--build-arg values (credentials in URLs redacted on disk)'),
      })
      .optional()
      .describe('How task images are built, when not by default'),
  })
  .describe('What an eval job runs');
export type EvalConfig = z.infer<typeof EvalConfigSchema>;

/** The job's image build options (base map, build args) as the task builds take them. Pure. */
export function jobBuildOptions(config: Pick<EvalConfig, 'build'>): { baseMapEntries: BaseMapEntry[]; buildArgs: Record<string, string> } {
  return { baseMapEntries: [...(config.build?.base_map ?? [])], buildArgs: { ...config.build?.build_args } };
}

export interface RolloutSpec {
  /** Stable, filesystem-safe: `<task>__<policy>__<defense>__a<k>`. */
  id: string;
  taskId: string;
  /**
   * `none` under defense none: nothing reads the policy, so one rollout stands for all sources.
   * `file`: a hand-written policy (the job's policy_file, or one the adversarial suite passes itself).
   */
  policy: JobPolicy | 'none';
  defense: string;
  attempt: number;
  seed: number;
}

/** Every rollout of a job, in a stable order. Pure. */
export function planRollouts(taskIds: readonly string[], config: Pick<EvalConfig, 'policies' | 'defenses' | 'attempts' | 'seed'>): RolloutSpec[] {
  const out: RolloutSpec[] = [];
  const seen = new Set<string>();
  for (const taskId of taskIds) {
    for (const defense of config.defenses) {
      const policies: readonly (JobPolicy | 'none')[] = defense === 'none' ? ['none'] : config.policies;
      for (const policy of policies) {
        for (let attempt = 1; attempt <= config.attempts; attempt++) {
          const id = `${taskId}__${policy}__${defense}__a${attempt}`;
          if (seen.has(id)) continue;
          seen.add(id);
          out.push({ id, taskId, policy, defense, attempt, seed: config.seed + attempt - 1 });
        }
      }
    }
  }
  return out;
}
