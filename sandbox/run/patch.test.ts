import { describe, expect, it } from 'vitest';
import { buildSnapshot, viewSnapshot } from '../paths/index.ts';
import { parseStrace, type TraceEvent } from '../trace/index.ts';
import { applyFileEvents } from './patch.ts';

const base = buildSnapshot([
  { path: '/app', type: 'dir' },
  { path: '/app/a.txt', type: 'file' },
  { path: '/app/sub', type: 'dir' },
  { path: '/app/sub/x', type: 'file' },
  { path: '/data', type: 'dir' },
  { path: '/app/link', type: 'symlink', link: '/data' },
]);

function events(lines: string): TraceEvent[] {
  return parseStrace(lines, { cwd: '/app' });
}

const paths = (s: ReturnType<typeof applyFileEvents>): string[] => s.entries.map((e) => e.path);

describe('applyFileEvents', () => {
  it('adds created files and directories and drops removed ones', () => {
    const ev = events(
      [
        '100 1.0 openat(AT_FDCWD</app>, "new.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</app/new.txt>',
        '100 1.1 mkdir("/app/out", 0755) = 0',
        '100 1.2 unlink("/app/a.txt") = 0',
        '100 1.3 unlink("/app/missing") = -1 ENOENT (No such file or directory)',
      ].join('\n'),
    );
    const after = applyFileEvents(base, ev);
    expect(paths(after)).toContain('/app/new.txt');
    expect(paths(after)).toContain('/app/out');
    expect(after.entries.find((e) => e.path === '/app/out')?.type).toBe('dir');
    expect(paths(after)).not.toContain('/app/a.txt');
    expect(paths(after)).not.toContain('/app/missing');
  });

  it('moves a renamed directory with everything below it', () => {
    const after = applyFileEvents(base, events('100 1.0 rename("/app/sub", "/app/moved") = 0'));
    expect(paths(after)).toEqual(expect.arrayContaining(['/app/moved', '/app/moved/x']));
    expect(paths(after)).not.toContain('/app/sub/x');
  });

  it('places entries created through a symlinked directory where the kernel put them', () => {
    const after = applyFileEvents(base, events('100 1.0 openat(AT_FDCWD</app>, "/app/link/f", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3</data/f>'));
    expect(paths(after)).toContain('/data/f');
    expect(viewSnapshot(after).realpath('/app/link/f')).toBe('/data/f');
  });

  it('records new symlinks with their resolved target', () => {
    const after = applyFileEvents(base, events('100 1.0 symlink("/app/sub/x", "/app/lx") = 0'));
    expect(after.entries.find((e) => e.path === '/app/lx')).toMatchObject({ type: 'symlink', target: '/app/sub/x' });
  });

  it('returns the same snapshot when nothing changed the tree', () => {
    const ev = events('100 1.0 openat(AT_FDCWD</app>, "a.txt", O_RDONLY) = 3</app/a.txt>');
    expect(applyFileEvents(base, ev)).toBe(base);
  });
});
