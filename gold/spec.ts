/**
 * Gold ↔ AuthBench `tests/permission_eval_spec.json`. Export keeps what the
 * spec can say — required, scored roots, implicit, sensitive — and drops the
 * rest (support, directories, ephemeral, network, flaky), which AuthBench's
 * format has no place for. Import gives a starting gold for tasks that ship a
 * hand-written spec; its provenance says so.
 */
import { AUTHBENCH_VERSION, AuthbenchError, formatProblem } from '../core/index.ts';
import { checkSpec, type PermissionEvalSpec } from '../task-format/index.ts';
import { AXES, canonicalAxes, emptyAxes } from './axes.ts';
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
