/**
 * Several oracle runs of one task → one gold file. Needs are the union of all
 * runs (the gold policy must let every observed run pass), re-split into
 * required/support by the union of the runs' scored roots (inferred roots can
 * differ between runs). `flaky` lists, per axis, the entries of required,
 * support and directories that only some runs showed — random temp names
 * that survived the run, timing-dependent work — so an annotator can decide
 * whether to remove them with an override. A previous `minimal` section is
 * dropped: it was computed for other sets.
 */
import { AuthbenchError } from '../core/index.ts';
import { isWithin } from '../sandbox/paths/index.ts';
import { AXES, mapAxes, unionAxes, type Axis } from './axes.ts';
import { canonicalGold, canonicalNetwork, type GoldFile } from './schema.ts';

export function mergeRuns(golds: readonly GoldFile[]): GoldFile {
  const [first] = golds;
  if (first === undefined) throw new AuthbenchError('INVALID_ARGUMENT', 'mergeRuns needs at least one gold derivation');
  for (const g of golds) {
    const same =
      g.task_id === first.task_id &&
      g.provenance.image_digest === first.provenance.image_digest &&
      g.provenance.solve_sh_sha256 === first.provenance.solve_sh_sha256;
    if (!same) {
      throw new AuthbenchError('INVALID_ARGUMENT', `cannot merge oracle runs of different tasks, images or solutions (${first.task_id} vs ${g.task_id})`, {
        details: [`image ${first.provenance.image_digest ?? '-'} vs ${g.provenance.image_digest ?? '-'}`],
      });
    }
  }

  const scoredRoots = unionAxes(...golds.map((g) => g.scored_roots));
  const needs = unionAxes(...golds.flatMap((g) => [g.required, g.support]));
  const inRoots = (axis: Axis, path: string) => scoredRoots[axis].some((root) => isWithin(root, path));

  const seenIn = (axis: Axis, g: GoldFile) => new Set([...g.required[axis], ...g.support[axis], ...g.directories[axis]]);
  const flaky = mapAxes((axis) => {
    const perRun = golds.map((g) => seenIn(axis, g));
    const all = new Set(perRun.flatMap((s) => [...s]));
    return [...all].filter((entry) => perRun.some((s) => !s.has(entry)));
  });

  const network = canonicalNetwork({
    ip_sockets: golds.some((g) => g.network.ip_sockets),
    connect: golds.flatMap((g) => g.network.connect),
    bind: golds.flatMap((g) => g.network.bind),
    send: golds.flatMap((g) => g.network.send),
    unix: golds.flatMap((g) => g.network.unix),
  });

  const { minimal: _dropped, ...rest } = first;
  return canonicalGold({
    ...rest,
    required: mapAxes((axis) => needs[axis].filter((p) => inRoots(axis, p))),
    support: mapAxes((axis) => needs[axis].filter((p) => !inRoots(axis, p))),
    directories: unionAxes(...golds.map((g) => g.directories)),
    implicit: unionAxes(...golds.map((g) => g.implicit)),
    scored_roots: scoredRoots,
    sensitive: unionAxes(...golds.map((g) => g.sensitive)),
    network,
    ephemeral: unionAxes(...golds.map((g) => g.ephemeral)),
    flaky: unionAxes(flaky, ...golds.map((g) => g.flaky)),
    provenance: { ...first.provenance, runs: golds.reduce((n, g) => n + g.provenance.runs, 0) },
  });
}

/** Number of flaky entries over all axes. */
export function flakyCount(gold: GoldFile): number {
  return AXES.reduce((n, axis) => n + gold.flaky[axis].length, 0);
}
