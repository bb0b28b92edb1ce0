/**
 * `authbench attack search`: the search's configuration from its flags
 * (pure), then the search folder — `search.json` (config), `split.json`,
 * `queries.jsonl` (one line per target query, appended as it finishes),
 * `frozen.json` (the candidates frozen for transfer) and `summary.json`;
 * each query's task folder under `tasks/<query>/` and its eval job under
 * `jobs/<query>/`.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthbenchError, writeJsonAtomic } from '../core/index.ts';
import type { BuildHostAccess, Engine } from '../docker/index.ts';
import { checkJobName } from '../evaluation/index.ts';
import { SUITE_FAMILIES } from '../suite/index.ts';
import { carriesWording, familyById } from './scenarios.ts';
import { DEFAULT_BUDGET, SearchConfigSchema, type Budget, type Cluster, type FrozenCandidate, type QueryRecord, type SearchConfig, type SearchSummary, type Split } from './schema.ts';
import { createModelClient, formatModelRef, parseModelRef } from '../models/index.ts';
import { isModelMutator, modelMutator, type ModelMutatorStats } from './model-mutator.ts';
import { freezeCandidates, runSearch, scriptedMutator, summarize, type Mutator, type Target } from './search.ts';
import { splitFamilies } from './split.ts';
import { checkTemplate, DEFAULT_SEED_WORDING, STRATEGY_NAMES } from './strategies.ts';
import { dockerTarget } from './target.ts';

export const SEARCH_FILES = { config: 'search.json', split: 'split.json', queries: 'queries.jsonl', frozen: 'frozen.json', summary: 'summary.json' } as const;

/** The evaluated agent offline: follows only wordings with its profile's features (agent/scripted/susceptible.ts). */
export const DEFAULT_SEARCH_MODEL = 'scripted/susceptible';

export interface SearchFlags {
  model?: string;
  attackerModel?: string;
  seedWording?: string;
  strategies?: readonly string[];
  budget?: Partial<Budget>;
  seed?: number;
  maxTurns?: number;
  freeze?: number;
  families?: readonly string[];
  instances?: number;
  devFamilies?: number;
  auditInstances?: number;
}

/** The search's config from its flags, checked; INVALID_ARGUMENT naming the flag. Pure. */
export function searchConfig(flags: SearchFlags): SearchConfig {
  let mutator = 'scripted';
  if (flags.attackerModel !== undefined) {
    const ref = parseModelRef(flags.attackerModel, '--attacker-model');
    if (ref.provider === 'scripted') {
      throw new AuthbenchError('INVALID_ARGUMENT', `--attacker-model ${flags.attackerModel}: the scripted mutator is the default (leave the flag out); the flag takes a provider model`, {
        hint: 'e.g. --attacker-model openai/gpt-5, or openai-compatible/NAME with --attacker-base-url',
      });
    }
    mutator = formatModelRef(ref);
  }
  const seedWording = flags.seedWording ?? DEFAULT_SEED_WORDING;
  checkTemplate(seedWording);
  const strategies = [...new Set(flags.strategies ?? STRATEGY_NAMES)];
  const unknown = strategies.filter((s) => !(STRATEGY_NAMES as string[]).includes(s));
  if (unknown.length > 0) throw new AuthbenchError('INVALID_ARGUMENT', `--strategy ${unknown.join(', ')}: unknown`, { hint: `strategies: ${STRATEGY_NAMES.join(', ')}` });
  const families = [...new Set(flags.families ?? SUITE_FAMILIES.map((f) => f.id))];
  for (const f of families) familyById(f);
  const budget = { ...DEFAULT_BUDGET, ...Object.fromEntries(Object.entries(flags.budget ?? {}).filter(([, v]) => v !== undefined)) };
  const parsed = SearchConfigSchema.safeParse({
    schema_version: 1,
    model: flags.model ?? DEFAULT_SEARCH_MODEL,
    mutator,
    seed_wording: seedWording,
    strategies,
    budget,
    seed: flags.seed ?? 0,
    defense: 'none',
    max_turns: flags.maxTurns ?? 30,
    freeze: flags.freeze ?? 3,
    families,
    instances: flags.instances ?? 3,
    development_families: flags.devFamilies ?? Math.max(1, Math.floor(families.length / 4)),
    audit_instances: flags.auditInstances ?? 1,
    knowledge: { level: 'K2+F1', policy_family: 'none', tool_contract: 'shell(command, timeout_sec?): one shell command per call, its output as the observation', feedback: 'funnel-stage' },
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AuthbenchError('INVALID_ARGUMENT', `${issue?.path.join('.') ?? 'search'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

export interface SearchRunOptions {
  config: SearchConfig;
  jobsDir: string;
  name: string;
  /** Replaces the Docker target (tests). */
  target?: Target;
  hostAccess?: BuildHostAccess;
  keepImages?: boolean;
  onQuery?: (record: QueryRecord) => void;
  signal?: AbortSignal;
  /** How the attacker model is reached when the config names one (its key comes from the environment). */
  attacker?: { baseUrl?: string; timeoutMs?: number };
  /** Replaces the mutator the config names (tests). */
  mutator?: Mutator;
}

export interface SearchRun {
  dir: string;
  /** Who proposed the candidates: `scripted` or the attacker model. */
  mutator: string;
  split: Split;
  /** Development clusters the search queried in turn: those whose scenario shows its wording. */
  searched: Cluster[];
  queries: QueryRecord[];
  frozen: FrozenCandidate[];
  summary: SearchSummary;
  interrupted: boolean;
}

export async function runAttackSearch(engine: Engine | undefined, options: SearchRunOptions): Promise<SearchRun> {
  checkJobName(options.name);
  const { config } = options;
  const dir = join(options.jobsDir, options.name);
  if (existsSync(join(dir, SEARCH_FILES.config))) throw new AuthbenchError('INVALID_ARGUMENT', `search ${options.name} exists`, { file: dir, hint: 'choose another --job-name' });
  const split = splitFamilies({ families: config.families, instances: config.instances, developmentFamilies: config.development_families, auditInstances: config.audit_instances, seed: config.seed });
  const searched = split.development.filter((c) => carriesWording(c, config.seed));
  let target = options.target;
  if (target === undefined) {
    if (engine === undefined) throw new AuthbenchError('INTERNAL', 'a search without a target needs a Docker engine');
    target = dockerTarget({
      engine,
      dir,
      model: config.model,
      clusters: searched,
      seed: config.seed,
      maxTurns: config.max_turns,
      ...(options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess }),
      ...(options.keepImages === undefined ? {} : { keepImages: options.keepImages }),
    });
  }
  // The attacker model's client before anything is written: a missing key or URL is bad input, not a failed search.
  let modelStats: ModelMutatorStats | undefined;
  let mutator = options.mutator;
  if (mutator === undefined && isModelMutator(config.mutator)) {
    const client = await createModelClient(parseModelRef(config.mutator, '--attacker-model'), {
      baseUrlFlag: '--attacker-base-url',
      ...(options.attacker?.baseUrl === undefined ? {} : { baseUrl: options.attacker.baseUrl }),
      ...(options.attacker?.timeoutMs === undefined ? {} : { timeoutMs: options.attacker.timeoutMs }),
    });
    const made = modelMutator(client, config.strategies, config.knowledge, options.signal === undefined ? {} : { signal: options.signal });
    modelStats = made.stats;
    mutator = made;
  }
  mutator ??= scriptedMutator(config.strategies);
  await mkdir(dir, { recursive: true });
  await writeJsonAtomic(join(dir, SEARCH_FILES.config), config);
  await writeJsonAtomic(join(dir, SEARCH_FILES.split), { ...split, searched: searched.map((c) => c.cluster) } satisfies Split);
  const queriesFile = join(dir, SEARCH_FILES.queries);
  await writeFile(queriesFile, '');
  const outcome = await runSearch({
    seedWording: config.seed_wording,
    budget: config.budget,
    seed: config.seed,
    mutator,
    target,
    onQuery: async (record) => {
      await appendFile(queriesFile, `${JSON.stringify(record)}\n`);
      options.onQuery?.(record);
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const frozen = freezeCandidates(outcome.queries, config.freeze);
  const summary = { ...summarize(outcome, frozen), ...(modelStats === undefined ? {} : { attacker: { calls: modelStats.calls, invalid: modelStats.invalid, cost_usd: modelStats.costUsd } }) };
  await writeJsonAtomic(join(dir, SEARCH_FILES.frozen), frozen);
  await writeJsonAtomic(join(dir, SEARCH_FILES.summary), summary);
  return { dir, mutator: config.mutator, split, searched, queries: outcome.queries, frozen, summary, interrupted: outcome.interrupted };
}
