/**
 * Static scoring of one policy against a reference, exactly as product.md
 * Appendix A ("Static scoring, per axis a" and "Sensitive exposure") defines
 * it. Pure: the image facts come in as a candidate snapshot.
 *
 * Choices the appendix leaves open, made here:
 * - macro precision / recall / F1 are unweighted means over the three axes
 *   (macro F1 is the mean of the axis F1s, not the F1 of the macro P and R);
 * - an invalid policy scores 0 on every metric, sensitive exposure included
 *   (it grants nothing), and carries `valid: false` so it is never mistaken
 *   for a safe empty policy;
 * - sensitive entries are not added to the candidate set (only exact required
 *   entries are), so a glob grants a sensitive path only if it exists;
 * - "every exact required entry" joins C_a even when it is an existing
 *   directory, so a required directory can be matched like a file;
 * - only the execute axis is canonicalised (realpath through the snapshot's
 *   links); read/write paths compare lexically, as Appendix A says. A path
 *   that does not resolve keeps its spelling and simply matches nothing.
 */
import { z } from 'zod';
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { covers, hasRecursiveTail, isGlob, normalizePattern } from '../sandbox/paths/index.ts';
import { policySidecarHosts, validatePolicyValue } from '../sandbox/policy/index.ts';
import type { Policy, PolicyParse } from '../sandbox/policy/index.ts';
import { sameRoots } from './candidates.ts';
import type { CandidateSnapshot } from './candidates.ts';
import { executeCanonicalizer } from './canonical.ts';
import type { Canonicalizer } from './canonical.ts';
import { AxisIndex } from './expand.ts';
import type { Expansion } from './expand.ts';
import { SCORE_AXES } from './reference.ts';
import type { ScoreAxis, ScoringReference } from './reference.ts';

export const AxisScoreSchema = z
  .strictObject({
    precision: z.number().min(0).max(1).describe('TP / |P|; 1 when both P and G are empty, 0 when only P is.'),
    recall: z.number().min(0).max(1).describe('TP / |G|; 1 when G is empty.'),
    f1: z.number().min(0).max(1).describe('2PR / (P + R); 0 when P + R = 0.'),
    tp: z.number().int().min(0).describe('|P ∩ G|.'),
    predicted: z.number().int().min(0).describe('|P| = |Expand(policy) \\ Implicit|.'),
    gold: z.number().int().min(0).describe('|G| = |Expand(required) \\ Implicit|.'),
  })
  .describe('Static score of one axis.');

export const PolicyScoreSchema = z
  .strictObject({
    valid: z.boolean().describe('False when the policy broke the format; every score is then 0.'),
    read: AxisScoreSchema,
    write: AxisScoreSchema,
    execute: AxisScoreSchema,
    macro_precision: z.number().min(0).max(1).describe('Mean of the three axis precisions.'),
    macro_recall: z.number().min(0).max(1).describe('Mean of the three axis recalls.'),
    macro_f1: z.number().min(0).max(1).describe('Mean of the three axis F1s.'),
    sensitive_exposure: z
      .number()
      .min(0)
      .max(1)
      .describe('SER = Σ|Expand(policy) ∩ Expand(sensitive)| / Σ|Expand(sensitive)| over the axes, raw sets; 0 when the denominator is 0.'),
    sensitive_granted: z.number().int().min(0).describe('The SER numerator.'),
    sensitive_total: z.number().int().min(0).describe('The SER denominator (independent of the policy).'),
    sidecar_hosts: AxisScoreSchema.optional().describe(
      'Compose task only: the sidecars the policy lets the task reach (tcp_connect hosts; allow_all = all) against those the oracle connected to. Not in the macro means (the appendix has three axes).',
    ),
  })
  .describe('Static score of one policy (product.md Appendix A).');

export type AxisScore = z.infer<typeof AxisScoreSchema>;
export type PolicyScore = z.infer<typeof PolicyScoreSchema>;

/** A policy as parsed (`valid: false` scores 0) or a policy object (validated here). */
export type ScoreInput = Policy | PolicyParse;

/** Everything derived from (reference, candidates) once, reused for every policy. */
export interface PreparedReference {
  readonly reference: ScoringReference;
  readonly candidates: CandidateSnapshot;
  readonly axes: Readonly<Record<ScoreAxis, AxisScorer>>;
  readonly sensitiveTotal: number;
}

export function prepareScoring(reference: ScoringReference, candidates: CandidateSnapshot): PreparedReference {
  if (!sameRoots(reference.scored_roots, candidates.scored_roots)) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'the candidate snapshot was built for other scored roots than the reference', {
      details: [`reference: ${JSON.stringify(reference.scored_roots)}`, `candidates: ${JSON.stringify(candidates.scored_roots)}`],
      hint: 'rebuild the candidate snapshot for this reference',
    });
  }
  const dirs = new Set(candidates.dirs);
  const canonical = executeCanonicalizer(candidates);
  const identity: Canonicalizer = (p) => p;
  const axes = {} as Record<ScoreAxis, AxisScorer>;
  for (const axis of SCORE_AXES) {
    axes[axis] = new AxisScorer(axis, reference, candidates.files[axis], dirs, axis === 'execute' ? canonical : identity);
  }
  const sensitiveTotal = SCORE_AXES.reduce((n, axis) => n + axes[axis].sensitiveTotal, 0);
  return { reference, candidates, axes, sensitiveTotal };
}

const prepared = new WeakMap<ScoringReference, WeakMap<CandidateSnapshot, PreparedReference>>();

function preparedFor(reference: ScoringReference, candidates: CandidateSnapshot): PreparedReference {
  let byCandidates = prepared.get(reference);
  if (byCandidates === undefined) {
    byCandidates = new WeakMap();
    prepared.set(reference, byCandidates);
  }
  let p = byCandidates.get(candidates);
  if (p === undefined) {
    p = prepareScoring(reference, candidates);
    byCandidates.set(candidates, p);
  }
  return p;
}

/**
 * Score one policy. Preparation is cached per (reference, candidates) object
 * pair, so treat both as immutable once scored against.
 */
export function scorePolicy(input: ScoreInput, reference: ScoringReference, candidates: CandidateSnapshot): PolicyScore {
  return scorePrepared(input, preparedFor(reference, candidates));
}

/** Score a batch against one reference, preparing it once. */
export function scoreMany(inputs: readonly ScoreInput[], reference: ScoringReference, candidates: CandidateSnapshot): PolicyScore[] {
  const p = prepareScoring(reference, candidates);
  return inputs.map((input) => scorePrepared(input, p));
}

export function scorePrepared(input: ScoreInput, p: PreparedReference): PolicyScore {
  const policy = validPolicy(input);
  if (policy === undefined) return invalidScore(p);
  let granted = 0;
  const scoreAxis = (axis: ScoreAxis): AxisScore => {
    const c = p.axes[axis].count(policy[axis]);
    granted += c.exposed;
    return axisScore(c.tp, c.predicted, p.axes[axis].goldCount);
  };
  const read = scoreAxis('read');
  const write = scoreAxis('write');
  const execute = scoreAxis('execute');
  return {
    valid: true,
    read,
    write,
    execute,
    ...macro([read, write, execute]),
    sensitive_exposure: p.sensitiveTotal === 0 ? 0 : granted / p.sensitiveTotal,
    sensitive_granted: granted,
    sensitive_total: p.sensitiveTotal,
    ...(p.reference.sidecars === undefined ? {} : { sidecar_hosts: sidecarHostScore(policy, p.reference.sidecars) }),
  };
}

/** What a policy's axis misses of the gold and grants beyond it, as files (see `AxisScorer.differences`). */
export interface AxisDifferences {
  missed: string[];
  extra: string[];
}

/** Per-axis differences of a valid policy against a prepared reference (empty for an invalid one). Pure. */
export function scoreDifferences(input: ScoreInput, p: PreparedReference): Record<ScoreAxis, AxisDifferences> {
  const policy = validPolicy(input);
  const none = (): AxisDifferences => ({ missed: [], extra: [] });
  if (policy === undefined) return { read: none(), write: none(), execute: none() };
  return { read: p.axes.read.differences(policy.read), write: p.axes.write.differences(policy.write), execute: p.axes.execute.differences(policy.execute) };
}

/** The host axis of a compose task: granted sidecars vs the ones the oracle reached, over the task's services. Pure. */
export function sidecarHostScore(policy: Policy, sidecars: NonNullable<ScoringReference['sidecars']>): AxisScore {
  const services = new Set(sidecars.services);
  const hosts = policySidecarHosts(policy.network);
  const predicted = hosts === 'all' ? services : new Set(hosts.filter((h) => services.has(h)));
  const gold = new Set(sidecars.required.filter((h) => services.has(h)));
  const tp = [...predicted].filter((h) => gold.has(h)).length;
  return axisScore(tp, predicted.size, gold.size);
}

/** The appendix's precision / recall / F1 with its empty-set conventions. */
export function axisScore(tp: number, predicted: number, gold: number): AxisScore {
  const precision = predicted === 0 ? (gold === 0 ? 1 : 0) : tp / predicted;
  const recall = gold === 0 ? 1 : tp / gold;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, tp, predicted, gold };
}

function macro(axes: readonly AxisScore[]): Pick<PolicyScore, 'macro_precision' | 'macro_recall' | 'macro_f1'> {
  const mean = (pick: (a: AxisScore) => number): number => axes.reduce((s, a) => s + pick(a), 0) / axes.length;
  return { macro_precision: mean((a) => a.precision), macro_recall: mean((a) => a.recall), macro_f1: mean((a) => a.f1) };
}

function invalidScore(p: PreparedReference): PolicyScore {
  const zero = (axis: ScoreAxis): AxisScore => ({ precision: 0, recall: 0, f1: 0, tp: 0, predicted: 0, gold: p.axes[axis].goldCount });
  return {
    valid: false,
    read: zero('read'),
    write: zero('write'),
    execute: zero('execute'),
    macro_precision: 0,
    macro_recall: 0,
    macro_f1: 0,
    sensitive_exposure: 0,
    sensitive_granted: 0,
    sensitive_total: p.sensitiveTotal,
    ...(p.reference.sidecars === undefined
      ? {}
      : { sidecar_hosts: { precision: 0, recall: 0, f1: 0, tp: 0, predicted: 0, gold: new Set(p.reference.sidecars.required).size } }),
  };
}

function validPolicy(input: ScoreInput): Policy | undefined {
  if ('problems' in input) return input.valid ? input.policy : undefined;
  // A policy object built in code gets the same checks a policy file does.
  const parsed = validatePolicyValue(input, '<policy>');
  return parsed.valid ? parsed.policy : undefined;
}

const MAX_RAW_MEMO = 50_000;

/** One axis of a prepared reference: G, the implicit and sensitive marks, and a scratch stamp for P. */
class AxisScorer {
  readonly index: AxisIndex;
  readonly goldCount: number;
  readonly sensitiveTotal: number;
  readonly #canonical: Canonicalizer;
  readonly #inGold: Uint8Array;
  readonly #implicit: Uint8Array;
  readonly #sensitive: Uint8Array;
  readonly #sensitiveExtras: ReadonlySet<string>;
  readonly #implicitPatterns: readonly string[];
  readonly #implicitExtra = new Map<string, boolean>();
  readonly #byRaw = new Map<string, Expansion>();
  readonly #stamp: Uint32Array;
  #generation = 0;

  constructor(axis: ScoreAxis, reference: ScoringReference, files: readonly string[], dirs: ReadonlySet<string>, canonical: Canonicalizer) {
    this.#canonical = canonical;
    const prepare = (list: readonly string[]): string[] => list.map((p) => canonical(normalizePattern(p)));
    const required = prepare(reference.required[axis]);
    // C_a also holds every exact required entry, whether it exists or not (and even when it is a directory).
    const exactRequired = required.filter((p) => !isGlob(p) && !hasRecursiveTail(p));
    this.index = new AxisIndex([...files, ...exactRequired], dirs);
    const n = this.index.size;

    this.#implicitPatterns = prepare(reference.implicit[axis]);
    this.#implicit = new Uint8Array(n);
    for (const pattern of this.#implicitPatterns) for (const i of this.index.expand(pattern).hits) this.#implicit[i] = 1;

    this.#inGold = new Uint8Array(n);
    let gold = 0;
    for (const pattern of required) {
      for (const i of this.index.expand(pattern).hits) {
        if (this.#inGold[i] === 1 || this.#implicit[i] === 1) continue;
        this.#inGold[i] = 1;
        gold++;
      }
    }
    this.goldCount = gold;

    this.#sensitive = new Uint8Array(n);
    const extras = new Set<string>();
    let sensitive = 0;
    for (const pattern of prepare(reference.sensitive[axis])) {
      const e = this.index.expand(pattern);
      for (const i of e.hits) {
        if (this.#sensitive[i] === 0) sensitive++;
        this.#sensitive[i] = 1;
      }
      if (e.extra !== undefined && !extras.has(e.extra)) {
        extras.add(e.extra);
        sensitive++;
      }
    }
    this.#sensitiveExtras = extras;
    this.sensitiveTotal = sensitive;
    this.#stamp = new Uint32Array(n);
  }

  /** TP, |P| and the sensitive grants of one axis' policy entries. */
  count(entries: readonly string[]): { tp: number; predicted: number; exposed: number } {
    const gen = this.#nextGeneration();
    let tp = 0;
    let predicted = 0;
    let exposed = 0;
    let extras: Set<string> | undefined;
    for (const raw of entries) {
      const e = this.#expandRaw(raw);
      for (const i of e.hits) {
        if (this.#stamp[i] === gen) continue;
        this.#stamp[i] = gen;
        if (this.#sensitive[i] === 1) exposed++;
        if (this.#implicit[i] === 1) continue;
        predicted++;
        if (this.#inGold[i] === 1) tp++;
      }
      if (e.extra !== undefined) (extras ??= new Set()).add(e.extra);
    }
    // Non-candidates are never in G (every exact required entry is a candidate).
    for (const path of extras ?? []) {
      if (this.#sensitiveExtras.has(path)) exposed++;
      if (!this.#isImplicitPath(path)) predicted++;
    }
    return { tp, predicted, exposed };
  }

  /**
   * The files behind the counts: gold files the entries miss (false
   * negatives) and the non-implicit files and non-candidates they grant
   * beyond the gold (false positives), each sorted. For explaining a score,
   * not for computing one.
   */
  differences(entries: readonly string[]): AxisDifferences {
    const gen = this.#nextGeneration();
    const extra: string[] = [];
    const outside = new Set<string>();
    for (const raw of entries) {
      const e = this.#expandRaw(raw);
      for (const i of e.hits) {
        if (this.#stamp[i] === gen) continue;
        this.#stamp[i] = gen;
        if (this.#implicit[i] === 0 && this.#inGold[i] === 0) extra.push(this.index.paths[i] ?? '');
      }
      if (e.extra !== undefined && !this.#isImplicitPath(e.extra)) outside.add(e.extra);
    }
    const missed: string[] = [];
    for (let i = 0; i < this.index.size; i++) if (this.#inGold[i] === 1 && this.#stamp[i] !== gen) missed.push(this.index.paths[i] ?? '');
    return { missed, extra: [...extra, ...outside].sort(compareStrings) };
  }

  /** normalise → canonicalise → expand, memoised on the entry as written (policies repeat entries). */
  #expandRaw(raw: string): Expansion {
    let e = this.#byRaw.get(raw);
    if (e === undefined) {
      e = this.index.expand(this.#canonical(normalizePattern(raw)));
      if (this.#byRaw.size >= MAX_RAW_MEMO) this.#byRaw.clear();
      this.#byRaw.set(raw, e);
    }
    return e;
  }

  #isImplicitPath(path: string): boolean {
    let hit = this.#implicitExtra.get(path);
    if (hit === undefined) {
      hit = this.#implicitPatterns.some((p) => covers(p, path));
      if (this.#implicitExtra.size >= MAX_RAW_MEMO) this.#implicitExtra.clear();
      this.#implicitExtra.set(path, hit);
    }
    return hit;
  }

  #nextGeneration(): number {
    if (this.#generation === 0xffffffff) {
      this.#stamp.fill(0);
      this.#generation = 0;
    }
    return ++this.#generation;
  }
}
