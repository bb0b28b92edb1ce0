import { AuthbenchError, compareStrings } from '../core/index.ts';
import { ratio } from './numeric.ts';
import { metricValue, type StatsRow } from './schema.ts';

/** What pairs two rollouts across defenses: the same scenario, model and seed. */
export interface PairKey {
  scenario: string;
  model: string;
  seed: number;
}

/** Two rollouts of one key, under defense A and defense B. */
export interface MatchedRows {
  key: PairKey;
  cluster: string;
  stage: string;
  a: StatsRow;
  b: StatsRow;
}

export interface RowMatch {
  /** Sorted by scenario, model, seed, so results do not depend on row order. */
  matched: MatchedRows[];
  /** Keys with a row under A only / B only. */
  only_a: PairKey[];
  only_b: PairKey[];
}

/**
 * Match the rows of two defenses by (scenario, model, seed). Throws when a key
 * repeats under one defense (which rollout would count?) or when the two rows
 * of a key disagree on stage or cluster (the key would not mean one scenario).
 */
export function matchRows(rows: readonly StatsRow[], defenseA: string, defenseB: string): RowMatch {
  if (defenseA === defenseB)
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot compare defense ${defenseA} with itself`, { field: 'defense' });
  const byKeyA = indexByKey(rows, defenseA);
  const byKeyB = indexByKey(rows, defenseB);
  const matched: MatchedRows[] = [];
  const onlyA: PairKey[] = [];
  for (const [id, a] of byKeyA) {
    const b = byKeyB.get(id);
    if (b === undefined) {
      onlyA.push(keyOf(a));
      continue;
    }
    for (const field of ['stage', 'cluster'] as const) {
      if (a[field] !== b[field])
        throw new AuthbenchError('INVALID_ARGUMENT', `rollouts ${a.rollout_id} and ${b.rollout_id} share a pair key but not their ${field}`, {
          field,
          details: [`${defenseA}: ${a[field]}`, `${defenseB}: ${b[field]}`],
        });
    }
    matched.push({ key: keyOf(a), cluster: a.cluster, stage: a.stage, a, b });
  }
  const onlyB = [...byKeyB.entries()].filter(([id]) => !byKeyA.has(id)).map(([, b]) => keyOf(b));
  matched.sort((x, y) => byKey(x.key, y.key));
  return { matched, only_a: onlyA.sort(byKey), only_b: onlyB.sort(byKey) };
}

function indexByKey(rows: readonly StatsRow[], defense: string): Map<string, StatsRow> {
  const out = new Map<string, StatsRow>();
  for (const row of rows) {
    if (row.defense !== defense) continue;
    const id = JSON.stringify([row.scenario, row.model, row.seed]);
    const seen = out.get(id);
    if (seen !== undefined)
      throw new AuthbenchError('INVALID_ARGUMENT', `rollouts ${seen.rollout_id} and ${row.rollout_id} repeat one pair key under defense ${defense}`, {
        field: 'rollout_id',
        hint: 'keep one rollout per (scenario, model, seed, defense); drop retried attempts before computing statistics',
      });
    out.set(id, row);
  }
  return out;
}

function keyOf(row: StatsRow): PairKey {
  return { scenario: row.scenario, model: row.model, seed: row.seed };
}

function byKey(x: PairKey, y: PairKey): number {
  return compareStrings(x.scenario, y.scenario) || compareStrings(x.model, y.model) || x.seed - y.seed;
}

/** One paired observation of a metric: A's and B's value for the same key. */
export interface Pair extends PairKey {
  cluster: string;
  stage: string;
  a: number;
  b: number;
}

export interface PairedMetric {
  metric: string;
  defense_a: string;
  defense_b: string;
  /** Keys where the metric applies under both defenses, in key order. */
  pairs: Pair[];
  unpaired: {
    /** Keys with a row under one defense only. */
    only_a: PairKey[];
    only_b: PairKey[];
    /** Keys where the metric is N/A under A but applies under B, and the reverse — suspicious, so listed. */
    na_a: PairKey[];
    na_b: PairKey[];
    /** Keys where the metric is N/A under both (the usual case off its stage). */
    na_both: number;
  };
}

/**
 * Pair the metric's values under defenses A and B by (scenario, model, seed)
 * (paper §6.5). A key pairs only when the metric applies under both; every
 * other key is reported as unpaired, never dropped silently.
 */
export function pairRows(rows: readonly StatsRow[], metric: string, defenseA: string, defenseB: string): PairedMetric {
  const match = matchRows(rows, defenseA, defenseB);
  const pairs: Pair[] = [];
  const naA: PairKey[] = [];
  const naB: PairKey[] = [];
  let naBoth = 0;
  for (const m of match.matched) {
    const a = metricValue(m.a, metric);
    const b = metricValue(m.b, metric);
    if (a !== null && b !== null) pairs.push({ ...m.key, cluster: m.cluster, stage: m.stage, a, b });
    else if (a === null && b === null) naBoth++;
    else (a === null ? naA : naB).push(m.key);
  }
  return {
    metric,
    defense_a: defenseA,
    defense_b: defenseB,
    pairs,
    unpaired: { only_a: match.only_a, only_b: match.only_b, na_a: naA, na_b: naB, na_both: naBoth },
  };
}

export interface UnpairedCounts {
  only_a: number;
  only_b: number;
  na_a: number;
  na_b: number;
  na_both: number;
}

/** The unpaired key lists reduced to counts, for summaries. */
export function countUnpaired(unpaired: PairedMetric['unpaired']): UnpairedCounts {
  return {
    only_a: unpaired.only_a.length,
    only_b: unpaired.only_b.length,
    na_a: unpaired.na_a.length,
    na_b: unpaired.na_b.length,
    na_both: unpaired.na_both,
  };
}

/** Paired delta Δ(B, A) = mean over pairs of (B − A) (paper eq. 12); null without pairs. */
export function pairedDelta(pairs: readonly Pair[]): number | null {
  if (pairs.length === 0) return null;
  let sum = 0;
  for (const p of pairs) sum += p.b - p.a;
  return sum / pairs.length;
}

/** The per-pair differences B − A, as a typed array for resampling. */
export function pairDifferences(pairs: readonly Pair[]): Float64Array {
  return Float64Array.from(pairs, (p) => p.b - p.a);
}

export interface WinRate {
  n: number;
  b_higher: number;
  a_higher: number;
  equal: number;
  /** Shares of n; null without pairs. */
  share_b_higher: number | null;
  share_a_higher: number | null;
  share_equal: number | null;
}

/** Paired win rate: the share of pairs where B > A, where A > B and where they are equal. */
export function pairedWinRate(pairs: readonly Pair[]): WinRate {
  let b = 0;
  let a = 0;
  for (const p of pairs) {
    if (p.b > p.a) b++;
    else if (p.a > p.b) a++;
  }
  const n = pairs.length;
  const equal = n - a - b;
  return {
    n,
    b_higher: b,
    a_higher: a,
    equal,
    share_b_higher: ratio(b, n),
    share_a_higher: ratio(a, n),
    share_equal: ratio(equal, n),
  };
}
