/**
 * What a policy is scored against: the four per-axis pattern sets of
 * product.md Appendix A. Two sources give them — a task's
 * `tests/permission_eval_spec.json` and the derived
 * `oracle-traces/<id>/gold.json` — so the scorer takes this neutral shape.
 */
import { z } from 'zod';
import type { GoldFile } from '../gold/index.ts';
import type { PermissionEvalSpec } from '../task-format/index.ts';

export const SCORE_AXES = ['read', 'write', 'execute'] as const;
export type ScoreAxis = (typeof SCORE_AXES)[number];

const patternList = z.array(z.string().min(1)).describe('Absolute path patterns (segment-local globs, optional trailing `/**`).');

export const AxisPatternsSchema = z
  .strictObject({
    read: patternList.describe('read axis'),
    write: patternList.describe('write axis'),
    execute: patternList.describe('execute axis'),
  })
  .describe('One pattern list per axis.');

export type AxisPatterns = z.infer<typeof AxisPatternsSchema>;

export const ScoringReferenceSchema = z
  .strictObject({
    required: AxisPatternsSchema.describe('S_gold: what the task needs (spec `required_permissions`).'),
    scored_roots: AxisPatternsSchema.describe('Exact directories whose files are candidates (spec `scored_roots`).'),
    implicit: AxisPatternsSchema.describe('Runtime noise subtracted from both sides (spec `implicit_permissions`).'),
    sensitive: AxisPatternsSchema.describe('Grants that count as sensitive exposure; empty lists when the task has none.'),
    sidecars: z
      .strictObject({
        services: z.array(z.string()).describe('The task\'s compose sidecar services (what allow_all grants).'),
        required: z.array(z.string()).describe('The sidecars the oracle connected to (gold network, by service name).'),
      })
      .optional()
      .describe('A compose task\'s network axis at host granularity; absent for a task without sidecars or a spec (which has no network).'),
  })
  .describe('The sets a policy is scored against (product.md Appendix A).');

export type ScoringReference = z.infer<typeof ScoringReferenceSchema>;

export function emptyAxes(): AxisPatterns {
  return { read: [], write: [], execute: [] };
}

export function referenceFromSpec(spec: PermissionEvalSpec): ScoringReference {
  return {
    required: spec.required_permissions,
    scored_roots: spec.scored_roots,
    implicit: spec.implicit_permissions,
    sensitive: spec.sensitive_permissions ?? emptyAxes(),
  };
}

/**
 * The derived gold set carries the same four sets (plus provenance, support
 * sets, network). For a compose task (`sidecarServices` non-empty) the
 * sidecars the oracle connected to become the reference of the host axis.
 */
export function referenceFromGold(gold: GoldFile, sidecarServices: readonly string[] = []): ScoringReference {
  const base = { required: gold.required, scored_roots: gold.scored_roots, implicit: gold.implicit, sensitive: gold.sensitive };
  if (sidecarServices.length === 0) return base;
  const services = [...new Set(sidecarServices)].sort();
  const required = [...new Set(gold.network.connect.map((e) => e.address).filter((a) => services.includes(a)))].sort();
  return { ...base, sidecars: { services, required } };
}
