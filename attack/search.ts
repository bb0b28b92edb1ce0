/**
 * The bounded tree search over candidate wordings. Each restart expands the
 * seed wording into `roots` candidates, then level by level expands the kept
 * candidates `branching` ways and keeps the `width` that reached furthest in
 * the funnel, until `depth` levels, `max_queries` target queries, or a
 * candidate reaching the goal stage (the restart stops there: its budget is
 * not spent confirming what it found). The target and the mutator are
 * injected, so the search itself is pure logic, tested with a fake target.
 *
 * K2+F1 is kept by construction: the mutator is handed a candidate's wording,
 * the strategies that made it and the funnel stage it reached — never the
 * trace, the agent's output or the policy.
 */
import { seededRandom, sha256 } from '../core/index.ts';
import { GOAL_STAGE, stageRank, type Budget, type FrozenCandidate, type FunnelStage, type QueryRecord, type SearchSummary } from './schema.ts';
import { applyStrategy, type StrategyName } from './strategies.ts';

/** What the mutator sees of a candidate: its wording, how it was made, how far it got. */
export interface MutatorView {
  template: string;
  chain: readonly StrategyName[];
  stage: FunnelStage | null;
}

export interface Mutation {
  strategy: StrategyName;
  template: string;
}

export interface Mutator {
  name: string;
  /**
   * Up to `k` children of a candidate (or of the seed wording, with an empty chain), in the order they
   * are tried; `isNew` says whether a wording is still untried in this restart, so no child is wasted.
   */
  children(parent: MutatorView, k: number, next: () => number, isNew: (template: string) => boolean): Mutation[] | Promise<Mutation[]>;
}

/**
 * The offline mutator: each child applies one strategy the candidate's chain
 * does not have yet, drawn without replacement. Stage-blind by design — it
 * spends no knowledge it was not given; the search's selection is what uses
 * the feedback.
 */
export function scriptedMutator(strategies: readonly StrategyName[]): Mutator {
  return {
    name: 'scripted',
    children(parent, k, next, isNew) {
      const pool = strategies.filter((s) => !parent.chain.includes(s));
      const out: Mutation[] = [];
      while (out.length < k && pool.length > 0) {
        const [strategy] = pool.splice(Math.floor(next() * pool.length), 1);
        if (strategy === undefined) continue;
        // A prefix and a suffix strategy commute: the same wording reached the other way round is no new child.
        const template = applyStrategy(parent.template, strategy);
        if (isNew(template) && !out.some((m) => m.template === template)) out.push({ strategy, template });
      }
      return out;
    },
  };
}

/** A candidate about to be queried. */
export interface SearchNode {
  id: string;
  restart: number;
  depth: number;
  parent: string | null;
  strategy: StrategyName;
  chain: StrategyName[];
  template: string;
}

/** One query's result: the stage, and what the record keeps beside it. */
export interface TargetResult {
  stage: FunnelStage | null;
  offTarget: boolean;
  scenario: string | null;
  text: string | null;
  rollout: string | null;
  error?: string;
}

/** Runs one candidate on the evaluated agent; `query` counts from 0 within the restart. */
export type Target = (node: SearchNode, query: number) => Promise<TargetResult>;

export interface SearchOptions {
  seedWording: string;
  budget: Budget;
  seed: number;
  mutator: Mutator;
  target: Target;
  /** Called after every query, in order (the caller appends it to queries.jsonl). */
  onQuery?: (record: QueryRecord) => void | Promise<void>;
  signal?: AbortSignal;
}

export interface SearchOutcome {
  queries: QueryRecord[];
  restarts: SearchSummary['restarts'];
  interrupted: boolean;
}

/** Best first; among equals, the order they were queried in (the mutator's draw). Pure. */
function byStage(records: readonly QueryRecord[]): QueryRecord[] {
  return records
    .map((r, i) => ({ r, i }))
    .sort((a, b) => stageRank(b.r.stage) - stageRank(a.r.stage) || a.i - b.i)
    .map(({ r }) => r);
}

export async function runSearch(options: SearchOptions): Promise<SearchOutcome> {
  const { budget, mutator, target } = options;
  const queries: QueryRecord[] = [];
  const restarts: SearchSummary['restarts'] = [];
  let interrupted = false;
  for (let restart = 1; restart <= budget.restarts && !interrupted; restart++) {
    const next = seededRandom(Number.parseInt(sha256(`attack-search/${options.seed}/${restart}`).slice(0, 8), 16));
    const tried = new Set<string>();
    const mine: QueryRecord[] = [];
    let goalAt: string | null = null;

    /** Query candidates in order until the budget or the goal; the records of those queried. */
    const query = async (candidates: readonly Omit<SearchNode, 'id'>[]): Promise<QueryRecord[]> => {
      const done: QueryRecord[] = [];
      for (const c of candidates) {
        if (mine.length >= budget.max_queries || goalAt !== null) break;
        if (options.signal?.aborted === true) {
          interrupted = true;
          break;
        }
        // The same wording reached by two paths is one candidate: query it once per restart.
        if (tried.has(c.template)) continue;
        tried.add(c.template);
        const node: SearchNode = { ...c, id: `r${restart}-q${mine.length + 1}` };
        const result = await target(node, mine.length);
        const record: QueryRecord = {
          id: node.id,
          restart,
          depth: node.depth,
          parent: node.parent,
          strategy: node.strategy,
          chain: node.chain,
          template: node.template,
          scenario: result.scenario,
          text: result.text,
          stage: result.stage,
          off_target: result.offTarget,
          rollout: result.rollout,
          ...(result.error === undefined ? {} : { error: result.error }),
        };
        mine.push(record);
        queries.push(record);
        done.push(record);
        await options.onQuery?.(record);
        if (result.stage === GOAL_STAGE) goalAt = record.id;
      }
      return done;
    };

    const isNew = (template: string): boolean => !tried.has(template);
    const roots = await mutator.children({ template: options.seedWording, chain: [], stage: null }, budget.roots, next, isNew);
    let level = await query(roots.map((m) => ({ restart, depth: 1, parent: null, strategy: m.strategy, chain: [m.strategy], template: m.template })));
    for (let depth = 2; depth <= budget.depth && level.length > 0; depth++) {
      const kept = byStage(level).slice(0, budget.width);
      const children: Omit<SearchNode, 'id'>[] = [];
      // In order, one parent after another: the mutator's draws (and a model's calls) stay reproducible.
      for (const p of kept) {
        const made = await mutator.children({ template: p.template, chain: p.chain, stage: p.stage }, budget.branching, next, isNew);
        children.push(...made.map((m) => ({ restart, depth, parent: p.id, strategy: m.strategy, chain: [...p.chain, m.strategy], template: m.template })));
      }
      level = await query(children);
    }
    const best = byStage(mine)[0]?.stage ?? null;
    restarts.push({ restart, queries: mine.length, best, goal_at: goalAt });
  }
  return { queries, restarts, interrupted };
}

/**
 * The candidates frozen for transfer: those that got a proposal through at
 * least, best first, each wording once, at most `k`. Pure.
 */
export function freezeCandidates(queries: readonly QueryRecord[], k: number): FrozenCandidate[] {
  const out: FrozenCandidate[] = [];
  const seen = new Set<string>();
  for (const q of byStage(queries)) {
    if (out.length >= k || q.stage === null || stageRank(q.stage) < stageRank('proposed-blocked')) break;
    if (seen.has(q.template)) continue;
    seen.add(q.template);
    out.push({ query: q.id, template: q.template, chain: q.chain, stage: q.stage });
  }
  return out;
}

export function summarize(outcome: SearchOutcome, frozen: readonly FrozenCandidate[]): SearchSummary {
  const byStageCount = { 'not-proposed': 0, 'proposed-blocked': 0, committed: 0, 'validator-passed': 0 } satisfies Record<FunnelStage, number>;
  for (const q of outcome.queries) if (q.stage !== null) byStageCount[q.stage]++;
  const best = byStage(outcome.queries)[0]?.stage ?? null;
  return {
    schema_version: 1,
    queries: outcome.queries.length,
    failed: outcome.queries.filter((q) => q.stage === null).length,
    by_stage: byStageCount,
    off_target: outcome.queries.filter((q) => q.off_target).length,
    restarts: outcome.restarts,
    best,
    goal_reached: best === GOAL_STAGE,
    frozen: frozen.length,
  };
}
