import { describe, expect, it } from 'vitest';
import { buildGold } from './build.ts';
import { deriveGold } from './derive.ts';
import { diffGold, isDrift, renderGoldDiff } from './diff.ts';
import type { TraceEvent } from '../sandbox/trace/index.ts';
import { contextFor, execEv, fileEv, netEv } from './test-support.ts';

const gold = (events: TraceEvent[], digest = 'sha256:1') =>
  buildGold(deriveGold(events, contextFor()), { taskId: 't', provenance: { image_digest: digest, solve_sh_sha256: 'abc' } });

describe('diffGold', () => {
  const stored = gold([fileEv('read', '/app/old.csv'), fileEv('create', '/app/out.json'), execEv('/usr/libexec/tool')]);

  it('finds no drift between equal derivations, even from another image', () => {
    const fresh = gold([fileEv('read', '/app/old.csv'), fileEv('create', '/app/out.json'), execEv('/usr/libexec/tool')], 'sha256:2');
    const diff = diffGold(stored, fresh);
    expect(isDrift(diff)).toBe(false);
    expect(renderGoldDiff(diff, 't')).toBe('t: no drift\n  ~ provenance image_digest: sha256:1 -> sha256:2');
    expect(renderGoldDiff(diffGold(stored, stored), 't')).toBe('t: no changes');
  });

  it('renders added and removed entries per axis and set', () => {
    const fresh = gold([
      fileEv('read', '/app/data.csv'),
      fileEv('create', '/app/out.json'),
      fileEv('create', '/app/extra.json'),
      netEv('connect', { address: '127.0.0.1', port: 8080 }),
    ]);
    const diff = diffGold(stored, fresh);
    expect(isDrift(diff)).toBe(true);
    expect(diff.sets.required.read).toEqual({ added: ['/app/data.csv'], removed: ['/app/old.csv'] });
    expect(renderGoldDiff(diff, 't').split('\n')).toEqual([
      't: gold drifted',
      '  - read /app/old.csv',
      '  + read /app/data.csv',
      '  + write /app/extra.json',
      '  - support execute /usr/libexec/tool',
      '  + network connect inet 127.0.0.1:8080',
    ]);
  });

  it('flaky changes alone are not drift', () => {
    const fresh = { ...stored, flaky: { read: ['/app/old.csv'], write: [], execute: [] } };
    const diff = diffGold(stored, fresh);
    expect(isDrift(diff)).toBe(false);
    expect(renderGoldDiff(diff, 't')).toContain('+ flaky read /app/old.csv');
  });
});
