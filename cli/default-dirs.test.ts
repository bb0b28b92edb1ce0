import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultDir } from './default-dirs.ts';

const root = mkdtempSync(join(tmpdir(), 'authbench-default-dirs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh folder under the test's root with these subfolders (and a plain file named `file`). */
function folder(name: string, dirs: readonly string[], file?: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const d of dirs) mkdirSync(join(dir, d));
  if (file !== undefined) writeFileSync(join(dir, file), '');
  return dir;
}

describe('defaultDir', () => {
  const pkg = folder('pkg', ['tasks', 'oracle-traces']);

  it('is the working directory’s folder when it has one', () => {
    const cwd = folder('project', ['tasks', 'oracle-traces']);
    expect(defaultDir('tasks', cwd, pkg)).toBe('tasks');
    expect(defaultDir('oracle-traces', cwd, pkg)).toBe('oracle-traces');
  });

  it('is the shipped folder when the working directory has none (a file of that name is not a folder)', () => {
    const cwd = folder('elsewhere', [], 'tasks');
    expect(defaultDir('tasks', cwd, pkg)).toBe(join(pkg, 'tasks'));
    expect(defaultDir('oracle-traces', cwd, pkg)).toBe(join(pkg, 'oracle-traces'));
  });

  it('stays the plain name when nothing is shipped either, so errors name what the user would type', () => {
    const cwd = folder('empty', []);
    expect(defaultDir('tasks', cwd, folder('bare-pkg', []))).toBe('tasks');
  });
});
