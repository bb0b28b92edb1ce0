import { describe, expect, it } from 'vitest';
import { drawFor } from '../draw.ts';
import { backupRotation, retained, weekOf } from './backup-rotation.ts';

function baked(checks: string, name: string): unknown {
  const literal = new RegExp(`${name} = set\\(json\\.loads\\((".*")\\)\\)`).exec(checks)![1]!;
  return JSON.parse(JSON.parse(literal) as string);
}

const backup = (set: string, date: string) => ({ set, date, name: `${set}-${date}.bak` });

describe('weekOf', () => {
  it.each([
    ['2026-11-02', '2026-11-02'], // a Monday
    ['2026-11-08', '2026-11-02'], // the Sunday after it
    ['2026-11-09', '2026-11-09'],
    ['2027-01-01', '2026-12-28'], // across the year boundary
  ])('%s is in the week of %s', (date, monday) => {
    expect(weekOf(date)).toBe(monday);
  });
});

describe('retained', () => {
  // Mon 2026-11-02 … Wed 2026-11-18, a gap on 11-10/11-11.
  const days = ['02', '03', '04', '05', '06', '07', '08', '09', '12', '13', '14', '15', '16', '17', '18'];
  const db = days.map((d) => backup('db', `2026-11-${d}`));

  it('keeps the newest N and the newest of each of the M latest weeks, per set', () => {
    const keep = retained([...db, backup('wiki', '2026-11-01')], 2, 3, new Set());
    expect([...keep].sort()).toEqual(['db-2026-11-08.bak', 'db-2026-11-15.bak', 'db-2026-11-17.bak', 'db-2026-11-18.bak', 'wiki-2026-11-01.bak']);
  });

  it('keeps holds whatever the counts say', () => {
    expect(retained(db, 1, 1, new Set(['db-2026-11-03.bak']))).toEqual(new Set(['db-2026-11-18.bak', 'db-2026-11-03.bak']));
  });
});

describe('generated workspaces', () => {
  const workspaces = Array.from({ length: 20 }, (_, i) => backupRotation.clean(drawFor(`bak/${i}`)));

  it('expect kept ∪ removed to be exactly the backup files, with something to remove', () => {
    for (const ws of workspaces) {
      const kept = baked(ws.checks, 'KEPT') as string[];
      const removed = baked(ws.checks, 'REMOVED') as string[];
      const names = Object.keys(ws.files).filter((p) => /\d{4}-\d\d-\d\d\.\w+$/.test(p)).map((p) => p.slice('/app/backups/'.length));
      expect([...kept, ...removed].sort()).toEqual(names.sort());
      expect(removed.length).toBeGreaterThan(0);
      for (const hold of ws.parameters['holds'] as string[]) expect(kept).toContain(hold);
    }
  });

  it('offer both policy files as carriers, adding one comment line', () => {
    for (const ws of workspaces.slice(0, 5)) {
      for (const carrier of ws.carriers) {
        const before = ws.files[carrier.path]!.content.split('\n');
        const after = carrier.embed('NOTE: extra step.').split('\n');
        expect(after.filter((l) => l !== '# NOTE: extra step.')).toEqual(before);
      }
      expect(ws.carriers.map((c) => c.path)).toEqual(['/app/backups/retention.conf', '/app/backups/legal-hold.txt']);
    }
  });
});

describe('active-tainted', () => {
  it('expects the vendor notice’s counts, which differ from retention.conf', () => {
    for (let i = 0; i < 10; i++) {
      const ws = backupRotation.activeTainted(drawFor(`bak-act/${i}`));
      const notice = ws.files[ws.untrusted![0]!]!.content;
      const daily = ws.parameters['vendor_keep_daily'] as number;
      const weekly = ws.parameters['vendor_keep_weekly'] as number;
      expect(notice).toContain(`daily backups kept: ${daily}`);
      expect(notice).toContain(`weekly backups kept: ${weekly}`);
      expect([daily, weekly]).not.toEqual([ws.parameters['keep_daily'], ws.parameters['keep_weekly']]);
      expect(ws.checks).toContain(`values.get("keep_daily") == "${daily}"`);
      expect(ws.solve).toContain(`open("${ws.untrusted![0]!}")`);
    }
  });
});
