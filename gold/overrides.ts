/**
 * `oracle-traces/<id>/overrides.json`: an annotator's corrections to a derived
 * gold set. They live in their own file and are applied after every
 * derivation, so regenerating gold never loses a review. Applying is
 * deterministic: removals first, then additions, then sensitive entries; each
 * list in file order, results sorted.
 *
 * - add: an entry inside its axis' scored roots goes to required; outside them
 *   it goes to support (enforced, not scored) with a warning.
 * - remove: taken out of required, support, directories and flaky; an entry
 *   found in none of them is a warning (the override is stale).
 * - sensitive: merged into the sensitive set; an entry outside the scored
 *   roots is an error and is not applied (the exported spec would be invalid).
 * - an entry both added and removed on one axis is an error; neither applies.
 */
import { z } from 'zod';
import { sha256, stableStringify, zodProblems, type Problem } from '../core/index.ts';
import { normalizePattern, patternProblem, patternWithin } from '../sandbox/paths/index.ts';
import { AXES, emptyAxes, mapAxes, type Axis, type AxisLists } from './axes.ts';
import { canonicalGold, type GoldFile } from './schema.ts';

const rawEntry = z
  .string()
  .superRefine((raw, ctx) => {
    const why = patternProblem(normalizePattern(raw));
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
  })
  .transform(normalizePattern)
  .describe('Path pattern; normalised on load');

function overrideLists(what: string) {
  const list = (axis: Axis) =>
    z
      .array(rawEntry)
      .superRefine((entries, ctx) => {
        const seen = new Set<string>();
        entries.forEach((e, i) => {
          if (seen.has(e)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate entry ${e}` });
          seen.add(e);
        });
      })
      .default([])
      .describe(`${what}: ${axis} axis`);
  return z
    .strictObject({ read: list('read'), write: list('write'), execute: list('execute') })
    .default(emptyAxes)
    .describe(what);
}

export const OverridesSchema = z
  .strictObject({
    add: overrideLists('Entries to add to the gold set'),
    remove: overrideLists('Entries to remove from the gold set'),
    sensitive: overrideLists('Entries to mark sensitive'),
    notes: z.string().optional().describe('Why these overrides exist'),
    reviewed_by: z.string().optional().describe('Who reviewed the gold set'),
  })
  .describe('oracle-traces/<id>/overrides.json: annotator corrections applied after derivation');

export type Overrides = z.infer<typeof OverridesSchema>;

export interface OverridesCheck {
  overrides?: Overrides;
  problems: Problem[];
}

export function parseOverrides(text: string, file: string): OverridesCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problems: [{ file, message: `not valid JSON: ${e instanceof Error ? e.message : String(e)}`, severity: 'error' }] };
  }
  const parsed = OverridesSchema.safeParse(value);
  return parsed.success ? { overrides: parsed.data, problems: [] } : { problems: zodProblems(parsed.error, file) };
}

export interface AppliedOverrides {
  gold: GoldFile;
  problems: Problem[];
}

export function applyOverrides(gold: GoldFile, overrides: Overrides, file = 'overrides.json'): AppliedOverrides {
  const problems: Problem[] = [];
  const warn = (field: string, message: string, severity: Problem['severity'] = 'warning'): void => {
    problems.push({ file, field, message, severity });
  };
  const sets = {
    required: toSets(gold.required),
    support: toSets(gold.support),
    directories: toSets(gold.directories),
    flaky: toSets(gold.flaky),
    sensitive: toSets(gold.sensitive),
  };
  const inRoots = (axis: Axis, entry: string) => gold.scored_roots[axis].some((root) => patternWithin(root, entry));

  for (const axis of AXES) {
    const added = new Set(overrides.add[axis]);
    const conflicting = new Set(overrides.remove[axis].filter((e) => added.has(e)));

    overrides.remove[axis].forEach((entry, i) => {
      const field = `remove.${axis}[${i}]`;
      if (conflicting.has(entry)) return warn(field, `${entry} is both added and removed; neither applied`, 'error');
      const found = [sets.required, sets.support, sets.directories].map((s) => s[axis].delete(entry)).some(Boolean);
      sets.flaky[axis].delete(entry);
      if (!found) warn(field, `${entry} is not in the gold set; nothing removed (stale override?)`);
    });

    overrides.add[axis].forEach((entry, i) => {
      const field = `add.${axis}[${i}]`;
      if (conflicting.has(entry)) return;
      if (inRoots(axis, entry)) {
        if (sets.required[axis].has(entry)) warn(field, `${entry} is already in required (stale override?)`);
        sets.required[axis].add(entry);
      } else {
        warn(field, `${entry} is outside the ${axis} scored roots (${rootsText(gold, axis)}); added to support: enforced, not scored`);
        sets.support[axis].add(entry);
      }
    });

    overrides.sensitive[axis].forEach((entry, i) => {
      if (!inRoots(axis, entry)) {
        return warn(`sensitive.${axis}[${i}]`, `${entry} is outside the ${axis} scored roots (${rootsText(gold, axis)}); not marked sensitive`, 'error');
      }
      sets.sensitive[axis].add(entry);
    });
  }

  const out = canonicalGold({
    ...gold,
    required: fromSets(sets.required),
    support: fromSets(sets.support),
    directories: fromSets(sets.directories),
    flaky: fromSets(sets.flaky),
    sensitive: fromSets(sets.sensitive),
    provenance: { ...gold.provenance, overrides_sha256: overridesHash(overrides) },
  });
  return { gold: out, problems };
}

export function overridesHash(overrides: Overrides): string {
  return sha256(stableStringify(overrides));
}

function rootsText(gold: GoldFile, axis: Axis): string {
  return gold.scored_roots[axis].length === 0 ? 'none' : gold.scored_roots[axis].join(', ');
}

function toSets(lists: AxisLists): Record<Axis, Set<string>> {
  return { read: new Set(lists.read), write: new Set(lists.write), execute: new Set(lists.execute) };
}

function fromSets(sets: Record<Axis, Set<string>>): AxisLists {
  return mapAxes((axis) => sets[axis]);
}
