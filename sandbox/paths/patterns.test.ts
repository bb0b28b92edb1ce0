import { describe, expect, it } from 'vitest';
import { covers, isGlob, normalizePattern, patternProblem, patternReaches, patternWithin, staticPrefix } from './patterns.ts';

describe('normalizePattern', () => {
  it.each([
    ['/app/./x', '/app/x'],
    ['/app//x/', '/app/x'],
    ['/app/y/../x', '/app/x'],
    ['\\app\\x', '/app/x'],
    ['/app/**', '/app/**'],
    ['/', '/'],
  ])('%s -> %s', (raw, want) => expect(normalizePattern(raw)).toBe(want));
});

describe('patternProblem', () => {
  it('accepts absolute paths and trailing /**', () => {
    expect(patternProblem('/app/x')).toBeUndefined();
    expect(patternProblem('/app/**')).toBeUndefined();
    expect(patternProblem('/**')).toBeUndefined();
  });
  it('rejects relative, empty and mid-path **', () => {
    expect(patternProblem('app/x')).toMatch(/absolute/);
    expect(patternProblem('')).toMatch(/empty/);
    expect(patternProblem('/app/**/x')).toMatch(/\*\*/);
    expect(patternProblem('/app/a**')).toMatch(/\*\*/);
  });
});

describe('covers', () => {
  it.each([
    ['/app/x', '/app/x', true],
    ['/app/x', '/app/x/y', false],
    ['/app/*.txt', '/app/a.txt', true],
    ['/app/*.txt', '/app/sub/a.txt', false],
    ['/app/?.txt', '/app/a.txt', true],
    ['/app/[ab].txt', '/app/c.txt', false],
    ['/app/**', '/app', true],
    ['/app/**', '/app/a/b/c', true],
    ['/app/**', '/apple', false],
    ['/a*/**', '/app/x', true],
    ['/**', '/etc/passwd', true],
    ['/app/*', '/app/.hidden', true],
    ['/App/x', '/app/x', false],
  ])('%s covers %s: %s', (pattern, path, want) => expect(covers(pattern, path)).toBe(want));
});

describe('static prefix and containment', () => {
  it('stops at the first glob segment', () => {
    expect(staticPrefix('/app/src/*.c')).toBe('/app/src');
    expect(staticPrefix('/app/**')).toBe('/app');
    expect(staticPrefix('/*/x')).toBe('/');
    expect(isGlob('/app/**')).toBe(false);
    expect(isGlob('/app/*.c')).toBe(true);
  });
  it('decides whether a pattern stays inside a root', () => {
    expect(patternWithin('/app', '/app/src/*.c')).toBe(true);
    expect(patternWithin('/app', '/apple/x')).toBe(false);
    expect(patternWithin('/app', '/*/x')).toBe(false);
  });
});

describe('patternReaches', () => {
  it.each([
    ['/**', '/opt/authbench', true],
    ['/opt/**', '/opt/authbench', true],
    ['/opt/*', '/opt/authbench', true],
    ['/opt/authbench/bin/x', '/opt/authbench', true],
    ['/*/authbench/**', '/opt/authbench', true],
    ['/opt/*/bin', '/opt/authbench', true],
    ['/opt', '/opt/authbench', false],
    ['/opt/x/**', '/opt/authbench', false],
    ['/opt/authbench-fidelity/**', '/opt/authbench', false],
    ['/app/**', '/', true],
  ])('%s reaches into %s: %s', (pattern, root, want) => expect(patternReaches(pattern, root)).toBe(want));
});
