/**
 * Small helpers over per-axis path lists. Every list gold writes is sorted by
 * UTF-16 code unit order (never locale order, which differs between machines)
 * and deduplicated, so equal sets serialise to equal bytes.
 */
import { compareStrings } from '../core/index.ts';
import { AXES, type Axis } from '../task-format/index.ts';

export { AXES, type Axis };

export interface AxisLists {
  read: string[];
  write: string[];
  execute: string[];
}

export function sortUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareStrings);
}

export function emptyAxes(): AxisLists {
  return { read: [], write: [], execute: [] };
}

export function mapAxes(f: (axis: Axis) => Iterable<string>): AxisLists {
  return { read: sortUnique(f('read')), write: sortUnique(f('write')), execute: sortUnique(f('execute')) };
}

export function unionAxes(...sets: readonly AxisLists[]): AxisLists {
  return mapAxes((axis) => sets.flatMap((s) => s[axis]));
}

/** Entries of `a` not in `b`, per axis. */
export function subtractAxes(a: AxisLists, b: AxisLists): AxisLists {
  return mapAxes((axis) => {
    const drop = new Set(b[axis]);
    return a[axis].filter((x) => !drop.has(x));
  });
}

export function axesSize(sets: AxisLists): number {
  return sets.read.length + sets.write.length + sets.execute.length;
}

/** Sorted, deduplicated copy (normalises hand-built or merged values). */
export function canonicalAxes(sets: AxisLists): AxisLists {
  return mapAxes((axis) => sets[axis]);
}
