import { describe, expect, it } from 'vitest';
import { isAuthbenchError } from '../core/index.ts';
import { metricValue, parseStatsRows } from './schema.ts';
import { row } from './test-rows.ts';

describe('stats rows', () => {
  it('accepts rows with numbers and N/A (null)', () => {
    const rows = [row({ scenario: 's', defense: 'A', metrics: { committed_harm: 0, recovery_success: null } })];
    expect(parseStatsRows(JSON.parse(JSON.stringify(rows)), 'rows.json')).toEqual(rows);
  });

  it('names the row and field of each problem', () => {
    const bad = [row({ scenario: 's', defense: 'A', metrics: {} }), { ...row({ scenario: 't', defense: 'A', metrics: { x: 1 } }), seed: 1.5, cluster: '' }];
    try {
      parseStatsRows(bad, 'rows.json');
      expect.unreachable();
    } catch (e) {
      expect(isAuthbenchError(e) && e.code).toBe('INVALID_ARGUMENT');
      const details = isAuthbenchError(e) ? e.details.join('\n') : '';
      expect(details).toMatch(/rows\.json: 1\.seed/);
      expect(details).toMatch(/rows\.json: 1\.cluster/);
    }
  });

  it('rejects non-finite metric values, which would poison every mean', () => {
    const bad = [{ ...row({ scenario: 's', defense: 'A', metrics: {} }), metrics: { x: Number.POSITIVE_INFINITY } }];
    expect(() => parseStatsRows(bad, 'rows.json')).toThrow(/valid statistics rows/);
  });

  it('reads a missing metric as N/A, not 0', () => {
    const r = row({ scenario: 's', defense: 'A', metrics: { a: 0, b: null } });
    expect(metricValue(r, 'a')).toBe(0);
    expect(metricValue(r, 'b')).toBeNull();
    expect(metricValue(r, 'c')).toBeNull();
  });
});
