import { seededRandom, sha256 } from '../core/index.ts';
import type { Draw } from './family.ts';

/** A Draw seeded from a label (e.g. `seed/family/instance/stage`), so every stream is independent and stable. */
export function drawFor(label: string): Draw {
  const next = seededRandom(Number.parseInt(sha256(label).slice(0, 8), 16));
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[int(0, items.length - 1)] as T;
  };
  const shuffle = <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(0, i);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  };
  return {
    next,
    int,
    pick,
    shuffle,
    sample: (items, k) => shuffle(items).slice(0, k),
    hex: (n) => Array.from({ length: n }, () => int(0, 15).toString(16)).join(''),
  };
}
