/**
 * Gold ↔ AuthBench `tests/permission_eval_spec.json`. Export keeps what the
 * spec can say — required, scored roots, implicit, sensitive — and drops the
 * rest (support, directories, ephemeral, network, flaky), which AuthBench's
 * format has no place for. Import gives a starting gold for tasks that ship a
 * hand-written spec; its provenance says so.
 */
import { AUTHBENCH_VERSION, AuthbenchError, formatProblem } from '../core/index.ts';
import { checkSpec, type PermissionEvalSpec } from '../task-format/index.ts';
import { covers, hasRecursiveTail, isGlob, normalizePattern } from '../sandbox/paths/index.ts';
import { AXES, canonicalAxes, emptyAxes, type Axis, type AxisLists } from './axes.ts';
import { DERIVATION_RULES_VERSION, GOLD_SCHEMA_VERSION, canonicalGold, emptyNetwork, type GoldFile } from './schema.ts';

/** The spec a gold file exports; checked with task-format's checkSpec (throws INVALID_SPEC when it fails). */
export function goldToSpec(gold: GoldFile, file = `oracle-traces/${gold.task_id}/gold.json`): PermissionEvalSpec {
  const hasSensitive = AXES.some((axis) => gold.sensitive[axis].length > 0);
  const value = {
    required_permissions: canonicalAxes(gold.required),
    scored_roots: canonicalAxes(gold.scored_roots),
    implicit_permissions: canonicalAxes(gold.implicit),
    ...(hasSensitive ? { sensitive_permissions: canonicalAxes(gold.sensitive) } : {}),
  };
  const checked = checkSpec(value, file);
  if (checked.spec === undefined) {
    throw new AuthbenchError('INVALID_SPEC', `gold for ${gold.task_id} does not make a valid permission_eval_spec.json`, {
      file,
      details: checked.problems.map(formatProblem),
      hint: 'an override probably added a required or sensitive entry outside the scored roots',
    });
  }
  return checked.spec;
}

/** A starting gold from an AuthBench spec (already validated by parseSpec/checkSpec). */
export function specToGold(spec: PermissionEvalSpec, taskId: string): GoldFile {
  return canonicalGold({
    schema_version: GOLD_SCHEMA_VERSION,
    task_id: taskId,
    required: spec.required_permissions,
    support: emptyAxes(),
    directories: emptyAxes(),
    implicit: spec.implicit_permissions,
    scored_roots: spec.scored_roots,
    sensitive: spec.sensitive_permissions ?? emptyAxes(),
    network: emptyNetwork(),
    ephemeral: emptyAxes(),
    flaky: emptyAxes(),
    provenance: {
      source: 'imported-spec',
      image_digest: null,
      solve_sh_sha256: null,
      authbench_version: AUTHBENCH_VERSION,
      runs: 0,
      derivation_rules_version: DERIVATION_RULES_VERSION,
    },
  });
}

export interface SpecDisagreement {
  axis: Axis;
  /** `spec-only`: the spec requires it, the trace never needed it; `trace-only`: the reverse. */
  kind: 'spec-only' | 'trace-only';
  path: string;
}

/**
 * Where a task's hand-written required set and the derived gold disagree, as
 * a careful reader would judge it: entries compare after resolving symlinks in
 * the image (`/usr/local/bin/python3` is `/usr/bin/python3.13`), a pattern on
 * either side agrees with the entries it covers (`/app/repo/.git/**` with
 * `/app/repo/.git/index`), and a spec entry the gold grants as runtime
 * (implicit: the shells, the loader) is no disagreement. Pure: `realpath` is
 * the image's, before the run (undefined for paths it did not have).
 */
export function specDisagreements(
  spec: AxisLists,
  gold: Pick<GoldFile, 'required' | 'support' | 'implicit'>,
  realpath: (path: string) => string | undefined,
): SpecDisagreement[] {
  const out: SpecDisagreement[] = [];
  const forms = (entry: string): string[] => {
    const p = normalizePattern(entry);
    const real = isGlob(p) ? undefined : realpath(hasRecursiveTail(p) ? p.slice(0, -3) : p);
    if (real === undefined) return [p];
    const resolved = hasRecursiveTail(p) ? `${real === '/' ? '' : real}/**` : real;
    return resolved === p ? [p] : [p, resolved];
  };
  // Either side may be a pattern: they agree when one covers the other in some resolved form.
  const agree = (a: string, b: string) => forms(a).some((x) => forms(b).some((y) => covers(x, y) || covers(y, x)));
  for (const axis of AXES) {
    const traced = [...gold.required[axis], ...gold.support[axis]];
    for (const p of spec[axis]) {
      const runtime = gold.implicit[axis].some((i) => forms(p).some((f) => covers(normalizePattern(i), f)));
      if (!runtime && !traced.some((t) => agree(p, t))) out.push({ axis, kind: 'spec-only', path: p });
    }
    for (const t of gold.required[axis]) {
      if (!spec[axis].some((p) => agree(p, t))) out.push({ axis, kind: 'trace-only', path: t });
    }
  }
  return out;
}
