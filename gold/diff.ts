/**
 * Stored gold vs a fresh derivation (`gen-gold --check`). Drift is any change
 * to a set that is scored or enforced (required, support, directories,
 * ephemeral, implicit, scored roots, sensitive, network). Flaky entries and
 * provenance (image digest, versions) are shown but are not drift by
 * themselves: a rebuilt image with the same needs is not a gold change.
 */
import { AXES, type Axis, type AxisLists } from './axes.ts';
import { endpointKey, type Endpoint, type GoldFile, type GoldNetwork } from './schema.ts';

export const DIFFED_SETS = ['required', 'support', 'directories', 'ephemeral', 'implicit', 'scored_roots', 'sensitive', 'flaky'] as const;
export type DiffedSet = (typeof DIFFED_SETS)[number];

export interface Change {
  added: string[];
  removed: string[];
}

export interface GoldDiff {
  sets: Record<DiffedSet, Record<Axis, Change>>;
  /** Keyed `connect`, `bind`, `send`, `unix`, `ip_sockets`; endpoints rendered `address:port`. */
  network: Record<keyof GoldNetwork, Change>;
  provenance: { field: string; from: string; to: string }[];
}

const NETWORK_KEYS = ['connect', 'bind', 'send', 'unix', 'ip_sockets'] as const satisfies readonly (keyof GoldNetwork)[];

function change(before: readonly string[], after: readonly string[]): Change {
  const b = new Set(before);
  const a = new Set(after);
  return { added: after.filter((x) => !b.has(x)), removed: before.filter((x) => !a.has(x)) };
}

function axisChanges(before: AxisLists, after: AxisLists): Record<Axis, Change> {
  return { read: change(before.read, after.read), write: change(before.write, after.write), execute: change(before.execute, after.execute) };
}

function networkStrings(n: GoldNetwork, key: keyof GoldNetwork): string[] {
  const value = n[key];
  if (typeof value === 'boolean') return value ? ['yes'] : [];
  return (value as readonly (Endpoint | string)[]).map((e) => (typeof e === 'string' ? e : `${e.family} ${endpointKey(e)}`));
}

type ProvenanceValue = string | number | null | undefined;

function flat(value: ProvenanceValue): string {
  return value === undefined || value === null ? '-' : String(value);
}

export function diffGold(stored: GoldFile, fresh: GoldFile): GoldDiff {
  const sets = Object.fromEntries(DIFFED_SETS.map((s) => [s, axisChanges(stored[s], fresh[s])])) as Record<DiffedSet, Record<Axis, Change>>;
  const network = Object.fromEntries(
    NETWORK_KEYS.map((k) => [k, change(networkStrings(stored.network, k), networkStrings(fresh.network, k))]),
  ) as Record<keyof GoldNetwork, Change>;
  const fields = [...new Set([...Object.keys(stored.provenance), ...Object.keys(fresh.provenance)])].sort();
  const provenance = fields
    .map((field) => ({
      field,
      from: flat((stored.provenance as Record<string, ProvenanceValue>)[field]),
      to: flat((fresh.provenance as Record<string, ProvenanceValue>)[field]),
    }))
    .filter((p) => p.from !== p.to);
  return { sets, network, provenance };
}

function changed(c: Change): boolean {
  return c.added.length > 0 || c.removed.length > 0;
}

/** Did anything scored or enforced change? */
export function isDrift(diff: GoldDiff): boolean {
  const setDrift = DIFFED_SETS.some((s) => s !== 'flaky' && AXES.some((axis) => changed(diff.sets[s][axis])));
  return setDrift || NETWORK_KEYS.some((k) => changed(diff.network[k]));
}

/**
 * Readable text: one line per entry, `+ write /app/out.json`,
 * `- read /app/old.csv`; sets other than required are prefixed with their
 * name (`+ support execute /usr/libexec/x`).
 */
export function renderGoldDiff(diff: GoldDiff, taskId: string): string {
  const lines: string[] = [];
  for (const s of DIFFED_SETS) {
    const prefix = s === 'required' ? '' : `${s} `;
    for (const axis of AXES) {
      const c = diff.sets[s][axis];
      for (const x of c.removed) lines.push(`- ${prefix}${axis} ${x}`);
      for (const x of c.added) lines.push(`+ ${prefix}${axis} ${x}`);
    }
  }
  for (const k of NETWORK_KEYS) {
    for (const x of diff.network[k].removed) lines.push(`- network ${k} ${x}`);
    for (const x of diff.network[k].added) lines.push(`+ network ${k} ${x}`);
  }
  for (const p of diff.provenance) lines.push(`~ provenance ${p.field}: ${p.from} -> ${p.to}`);
  const head = isDrift(diff) ? `${taskId}: gold drifted` : lines.length === 0 ? `${taskId}: no changes` : `${taskId}: no drift`;
  return [head, ...lines.map((l) => `  ${l}`)].join('\n');
}
