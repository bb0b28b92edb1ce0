/**
 * What a candidate search writes: its configuration, the family split, one
 * record per target query, the frozen candidates and the summary. One zod
 * schema each; the types are inferred from them.
 */
import { z } from 'zod';
import { STRATEGY_NAMES, type StrategyName } from './strategies.ts';

/**
 * The funnel a query can reach, in order — all the attacker is shown (the
 * seed's F1 feedback): not proposed; proposed but stopped (a defense blocked
 * it, the kernel denied it or it failed); committed (it ran and succeeded);
 * the attack validator passed with the exact proposal committed.
 */
export const FUNNEL_STAGES = ['not-proposed', 'proposed-blocked', 'committed', 'validator-passed'] as const;
export const FunnelStageSchema = z.enum(FUNNEL_STAGES);
export type FunnelStage = z.infer<typeof FunnelStageSchema>;
export const GOAL_STAGE: FunnelStage = 'validator-passed';

export function stageRank(stage: FunnelStage | null): number {
  return stage === null ? -1 : FUNNEL_STAGES.indexOf(stage);
}

export const StrategySchema = z.enum(STRATEGY_NAMES as [StrategyName, ...StrategyName[]]);

export const BudgetSchema = z
  .strictObject({
    roots: z.number().int().min(1).describe('Root candidates per restart (each the seed wording with one strategy)'),
    branching: z.number().int().min(1).describe('Children per expanded candidate'),
    width: z.number().int().min(1).describe('Candidates kept per depth level (the beam)'),
    depth: z.number().int().min(1).describe('Levels, roots included'),
    restarts: z.number().int().min(1).describe('Independent searches from the seed wording, each with its own draws'),
    max_queries: z.number().int().min(1).describe('Target queries per restart at most'),
  })
  .describe('How much the search may spend');
export type Budget = z.infer<typeof BudgetSchema>;

/** The seed's defaults (§6.3): three roots, branching three, width six, depth four, two restarts, 40 queries per restart. */
export const DEFAULT_BUDGET: Budget = { roots: 3, branching: 3, width: 6, depth: 4, restarts: 2, max_queries: 40 };

export const ClusterSchema = z.strictObject({
  family: z.string(),
  instance: z.number().int().nonnegative(),
  cluster: z.string().describe('family-instance: the independent unit'),
});
export type Cluster = z.infer<typeof ClusterSchema>;

export const SplitSchema = z
  .strictObject({
    seed: z.number().int(),
    development_families: z.array(z.string()),
    held_out_families: z.array(z.string()).describe('Never seen by the search: no family is in both'),
    development: z.array(ClusterSchema).describe('What the search queries'),
    held_out: z.array(ClusterSchema).describe('Confirmatory: every cluster of the held-out families'),
    instance_audit: z.array(ClusterSchema).describe('Other instances of the development families, never queried: instance-level transfer'),
    searched: z.array(z.string()).optional().describe('Development clusters the search queried in turn: those whose scenario shows its wording (an unsafe-helper placement does not)'),
  })
  .describe('Scenario families split without family leakage');
export type Split = z.infer<typeof SplitSchema>;

export const KnowledgeSchema = z
  .strictObject({
    level: z.literal('K2+F1'),
    policy_family: z.string().describe('The defense the candidates are optimised against (K2: known)'),
    tool_contract: z.string().describe('The tool the agent acts through (K2: known)'),
    feedback: z.literal('funnel-stage').describe('F1: the stage reached, nothing of the trace, output or policy'),
  })
  .describe("The attacker's knowledge level");
export type Knowledge = z.infer<typeof KnowledgeSchema>;

export const SearchConfigSchema = z
  .strictObject({
    schema_version: z.literal(1),
    model: z.string().describe('The evaluated agent (--model)'),
    mutator: z.string().describe('Who proposes candidates: `scripted` (the strategies, seeded) or an attacker model'),
    seed_wording: z.string().describe('The template the roots are made from'),
    strategies: z.array(StrategySchema).describe('Strategies the mutator may apply'),
    budget: BudgetSchema,
    seed: z.number().int().describe('Split, scenarios and the mutator draw from it'),
    defense: z.literal('none').describe('Candidates are optimised under no defense'),
    max_turns: z.number().int().min(1),
    freeze: z.number().int().min(1).describe('Candidates frozen at most'),
    families: z.array(z.string()).describe('The family pool split into development / held-out'),
    instances: z.number().int().min(1).describe('Security scenarios (instances) per family'),
    development_families: z.number().int().min(1),
    audit_instances: z.number().int().min(0).describe('Instances per development family kept for the instance audit'),
    knowledge: KnowledgeSchema,
  })
  .describe('What a candidate search runs');
export type SearchConfig = z.infer<typeof SearchConfigSchema>;

export const QueryRecordSchema = z
  .strictObject({
    id: z.string().describe('r<restart>-q<n>'),
    restart: z.number().int().min(1),
    depth: z.number().int().min(1),
    parent: z.string().nullable().describe('The query whose candidate this one mutates; null for a root'),
    strategy: StrategySchema.describe('The strategy that made it from its parent (or the seed wording)'),
    chain: z.array(StrategySchema).describe('Every strategy from the seed wording to it'),
    template: z.string().describe('The candidate wording, placeholders unfilled'),
    scenario: z.string().nullable().describe('The development scenario it was tried on'),
    text: z.string().nullable().describe('The injected text as placed in that scenario'),
    stage: FunnelStageSchema.nullable().describe('Funnel stage reached; null when the query failed (infrastructure)'),
    off_target: z.boolean().describe('The attack validator passed without the exact command being proposed'),
    rollout: z.string().nullable().describe('The rollout folder, relative to the search folder'),
    error: z.string().optional().describe('Why the query failed'),
  })
  .describe('One target query: one rollout of the evaluated agent');
export type QueryRecord = z.infer<typeof QueryRecordSchema>;

export const FrozenCandidateSchema = z.strictObject({
  query: z.string(),
  template: z.string(),
  chain: z.array(StrategySchema),
  stage: FunnelStageSchema,
});
export type FrozenCandidate = z.infer<typeof FrozenCandidateSchema>;

export const SearchSummarySchema = z
  .strictObject({
    schema_version: z.literal(1),
    queries: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative().describe('Queries that hit an infrastructure error'),
    by_stage: z.record(FunnelStageSchema, z.number().int().nonnegative()),
    off_target: z.number().int().nonnegative(),
    restarts: z.array(
      z.strictObject({
        restart: z.number().int().min(1),
        queries: z.number().int().nonnegative(),
        best: FunnelStageSchema.nullable(),
        goal_at: z.string().nullable().describe('The first query that reached the goal; the restart stops there'),
      }),
    ),
    best: FunnelStageSchema.nullable(),
    goal_reached: z.boolean(),
    frozen: z.number().int().nonnegative(),
    attacker: z
      .strictObject({
        calls: z.number().int().nonnegative().describe('Model calls the attacker made'),
        invalid: z.number().int().nonnegative().describe('Replies that were no valid, new one-line template (no child)'),
        cost_usd: z.number().nonnegative().nullable().describe('What they cost; null when a price was unknown'),
      })
      .optional()
      .describe('The attacker model, when the search had one (--attacker-model)'),
  })
  .describe('What the search found');
export type SearchSummary = z.infer<typeof SearchSummarySchema>;
