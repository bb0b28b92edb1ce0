import { describe, expect, it } from 'vitest';
import { pointLabels } from './plots.ts';

describe('pointLabels', () => {
  it('names every series at a shared position once and labels inward', () => {
    const labels = pointLabels([
      { series: 'a', x: 1, y: 0 },
      { series: 'b', x: 0.2, y: 1 },
      { series: 'c', x: 1, y: 0 },
      { series: 'd', x: 1, y: 0 },
      { series: 'e', x: null, y: null },
    ]);
    expect(labels.map((l) => l.label)).toEqual(['a, c, d', 'b', '', '', 'e']);
    expect(labels[0]).toMatchObject({ label_align: 'right', label_baseline: 'bottom' });
    expect(labels[1]).toMatchObject({ label_align: 'left', label_baseline: 'top' });
  });
});
