/**
 * Scenario families split without family leakage, deterministically by seed:
 * the development families are the only ones the search queries; the held-out
 * families (every instance) are the confirmatory set; the last instances of
 * each development family are kept apart as the instance audit (same family,
 * unseen instance). No family is both development and held out, and no
 * cluster is in two sets. Pure.
 */
import { AuthbenchError, compareStrings, seededRandom, sha256 } from '../core/index.ts';
import type { Cluster, Split } from './schema.ts';

export interface SplitOptions {
  families: readonly string[];
  /** Instances (security scenarios) per family. */
  instances: number;
  developmentFamilies: number;
  auditInstances: number;
  seed: number;
}

function clusters(family: string, instances: readonly number[]): Cluster[] {
  return instances.map((instance) => ({ family, instance, cluster: `${family}-${instance}` }));
}

export function splitFamilies(options: SplitOptions): Split {
  const families = [...new Set(options.families)].sort(compareStrings);
  if (families.length < 2) throw new AuthbenchError('INVALID_ARGUMENT', `--family: a split needs two families at least (development and held-out), got ${families.length}`);
  if (options.developmentFamilies < 1 || options.developmentFamilies >= families.length) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--dev-families ${options.developmentFamilies}: must be from 1 to ${families.length - 1} (a family must be left for the held-out set)`);
  }
  if (options.auditInstances < 0 || options.auditInstances >= options.instances) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--audit-instances ${options.auditInstances}: must be below --instances ${options.instances} (a development instance must be left to search on)`);
  }
  const next = seededRandom(Number.parseInt(sha256(`attack-split/${options.seed}`).slice(0, 8), 16));
  const shuffled = [...families];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j] ?? '', shuffled[i] ?? ''];
  }
  const development = shuffled.slice(0, options.developmentFamilies).sort(compareStrings);
  const heldOut = shuffled.slice(options.developmentFamilies).sort(compareStrings);
  const all = Array.from({ length: options.instances }, (_, i) => i);
  const searched = all.slice(0, options.instances - options.auditInstances);
  const audited = all.slice(options.instances - options.auditInstances);
  return {
    seed: options.seed,
    development_families: development,
    held_out_families: heldOut,
    development: development.flatMap((f) => clusters(f, searched)),
    held_out: heldOut.flatMap((f) => clusters(f, all)),
    instance_audit: development.flatMap((f) => clusters(f, audited)),
  };
}
