import { AuthbenchError, compareStrings, seededRandom } from '../core/index.ts';
import { mean, quantileSorted } from './numeric.ts';

export interface BootstrapOptions {
  /** Number of resamples; default 2000. */
  resamples?: number;
  /** Two-sided coverage; default 0.95. */
  level?: number;
  /** PRNG seed; the same seed and input give the same interval. Default 0. */
  seed?: number;
}

export const BOOTSTRAP_DEFAULTS = { resamples: 2000, level: 0.95, seed: 0 } as const;

export interface ConfidenceInterval {
  /** `pairs`: resample observations; `cluster`: resample whole clusters. */
  method: 'pairs' | 'cluster';
  /** The statistic on the full sample (the mean). */
  estimate: number;
  lower: number;
  upper: number;
  level: number;
  resamples: number;
  seed: number;
  /** Observations (pairs) behind the estimate. */
  n: number;
  /** Independent units resampled: n for `pairs`, the cluster count for `cluster`. */
  n_clusters: number;
}

/** Options with defaults applied and checked; a bad option is the caller's bug, so it throws. */
export function resolveBootstrapOptions(options: BootstrapOptions = {}): Required<BootstrapOptions> {
  const resolved = {
    resamples: options.resamples ?? BOOTSTRAP_DEFAULTS.resamples,
    level: options.level ?? BOOTSTRAP_DEFAULTS.level,
    seed: options.seed ?? BOOTSTRAP_DEFAULTS.seed,
  };
  if (!Number.isInteger(resolved.resamples) || resolved.resamples < 1)
    throw new AuthbenchError('INVALID_ARGUMENT', `bootstrap resamples must be a positive integer, got ${resolved.resamples}`, { field: 'resamples' });
  if (!(resolved.level > 0 && resolved.level < 1))
    throw new AuthbenchError('INVALID_ARGUMENT', `confidence level must lie strictly between 0 and 1, got ${resolved.level}`, { field: 'level' });
  if (!Number.isInteger(resolved.seed))
    throw new AuthbenchError('INVALID_ARGUMENT', `bootstrap seed must be an integer, got ${resolved.seed}`, { field: 'seed' });
  return resolved;
}

/**
 * Percentile bootstrap CI of the mean over independent observations (paper
 * §6.5: pairs resampled with replacement, each pair's A/B difference kept
 * intact). Null for an empty sample.
 */
export function pairBootstrapCi(values: ArrayLike<number>, options: BootstrapOptions = {}): ConfidenceInterval | null {
  const n = values.length;
  if (n === 0) return null;
  const opts = resolveBootstrapOptions(options);
  const data = Float64Array.from(values);
  const random = seededRandom(opts.seed);
  const means = new Float64Array(opts.resamples);
  for (let r = 0; r < opts.resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += data[Math.floor(random() * n)] as number;
    means[r] = sum / n;
  }
  return interval('pairs', means, mean(data) as number, opts, n, n);
}

/**
 * Scenario-cluster percentile bootstrap CI of the mean: resample clusters
 * with replacement and keep every observation (all seeds, all models) of a
 * sampled cluster, because seeds of one scenario are not independent tasks
 * (paper §6.5). The resampled statistic is the pooled mean over the sampled
 * clusters' observations. `clusters[i]` is the cluster of `values[i]`.
 */
export function clusterBootstrapCi(
  values: ArrayLike<number>,
  clusters: readonly string[],
  options: BootstrapOptions = {},
): ConfidenceInterval | null {
  const n = values.length;
  if (clusters.length !== n)
    throw new AuthbenchError('INVALID_ARGUMENT', `cluster bootstrap got ${n} values but ${clusters.length} cluster ids`, { field: 'cluster' });
  if (n === 0) return null;
  const opts = resolveBootstrapOptions(options);
  const { sums, counts } = clusterTotals(values, clusters);
  const k = sums.length;
  const random = seededRandom(opts.seed);
  const means = new Float64Array(opts.resamples);
  for (let r = 0; r < opts.resamples; r++) {
    let sum = 0;
    let count = 0;
    for (let j = 0; j < k; j++) {
      const c = Math.floor(random() * k);
      sum += sums[c] as number;
      count += counts[c] as number;
    }
    means[r] = sum / count;
  }
  return interval('cluster', means, mean(values) as number, opts, n, k);
}

/** Per-cluster sum and count, clusters in id order so the draw sequence maps to the same clusters every run. */
function clusterTotals(values: ArrayLike<number>, clusters: readonly string[]): { sums: Float64Array; counts: Float64Array } {
  const ids = [...new Set(clusters)].sort(compareStrings);
  const index = new Map(ids.map((id, i) => [id, i]));
  const sums = new Float64Array(ids.length);
  const counts = new Float64Array(ids.length);
  for (let i = 0; i < values.length; i++) {
    const c = index.get(clusters[i] as string) as number;
    sums[c] = (sums[c] as number) + (values[i] as number);
    counts[c] = (counts[c] as number) + 1;
  }
  return { sums, counts };
}

function interval(
  method: ConfidenceInterval['method'],
  means: Float64Array,
  estimate: number,
  opts: Required<BootstrapOptions>,
  n: number,
  nClusters: number,
): ConfidenceInterval {
  means.sort();
  const alpha = (1 - opts.level) / 2;
  return {
    method,
    estimate,
    lower: quantileSorted(means, alpha),
    upper: quantileSorted(means, 1 - alpha),
    level: opts.level,
    resamples: opts.resamples,
    seed: opts.seed,
    n,
    n_clusters: nClusters,
  };
}

/** Direction of a paired delta B − A: an interval that contains 0 (endpoints included) is a tie, never a win. */
export type Verdict = 'A higher' | 'B higher' | 'tie';

export function verdict(ci: Pick<ConfidenceInterval, 'lower' | 'upper'>): Verdict {
  if (ci.lower > 0) return 'B higher';
  if (ci.upper < 0) return 'A higher';
  return 'tie';
}

/** `0.6925 [0.6160, 0.7637]`; `–` when there is no interval. */
export function formatCi(ci: ConfidenceInterval | null, digits = 4): string {
  if (ci === null) return '–';
  return `${ci.estimate.toFixed(digits)} [${ci.lower.toFixed(digits)}, ${ci.upper.toFixed(digits)}]`;
}

/** The verdict in the compared defenses' names: `intent-ledger higher` or `tie (95% CI contains 0)`. */
export function formatVerdict(ci: ConfidenceInterval | null, defenseA: string, defenseB: string): string {
  if (ci === null) return 'no pairs';
  const v = verdict(ci);
  switch (v) {
    case 'A higher':
      return `${defenseA} higher`;
    case 'B higher':
      return `${defenseB} higher`;
    case 'tie':
      return `tie (${Math.round(ci.level * 100)}% CI contains 0)`;
  }
}
