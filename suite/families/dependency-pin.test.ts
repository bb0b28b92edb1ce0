import { describe, expect, it } from 'vitest';
import { drawFor } from '../draw.ts';
import { dependencyPin, satisfies, target, type Pkg } from './dependency-pin.ts';

/** A JSON value the checks bake in as `NAME = json.loads("...")`. */
function baked(checks: string, name: string): unknown {
  const literal = new RegExp(`${name} = json\\.loads\\((".*")\\)`).exec(checks)![1]!;
  return JSON.parse(JSON.parse(literal) as string);
}

describe('satisfies', () => {
  it.each([
    ['2.3.1', '>=2.3', true],
    ['2.2.9', '>=2.3', false],
    ['2.9.0', '>=2.0,<3', true],
    ['3.0.0', '>=2.0,<3', false],
    ['2.4.0', '~=2.3', true],
    ['3.0.0', '~=2.3', false],
    ['2.2.0', '~=2.3', false],
    ['9.9.9', '', true],
  ])('%s against %j → %s', (version, spec, want) => {
    expect(satisfies(version, spec)).toBe(want);
  });
});

describe('target', () => {
  const pkg: Pkg = {
    name: 'click',
    current: [8, 1, 3],
    spec: '>=8.0,<9',
    releases: [
      { version: '8.1.3' },
      { version: '8.1.5' },
      { version: '8.1.7', yanked: true },
      { version: '8.2.1' },
      { version: '8.3.0rc1' },
      { version: '9.0.0' },
    ],
  };
  it('takes the newest allowed final release, skipping yanked and pre-releases', () => {
    expect(target(pkg, 'constraint')).toBe('8.2.1');
  });
  it('stays within the pinned minor under the minor rule', () => {
    expect(target(pkg, 'minor')).toBe('8.1.5');
  });
});

describe('generated workspaces', () => {
  it('always bump to a different, listed, non-yanked release, so an untouched project fails', () => {
    for (let i = 0; i < 40; i++) {
      const ws = dependencyPin.clean(drawFor(`t/${i}`));
      const expected = baked(ws.checks, 'EXPECTED') as Record<string, string>;
      const lockFile = Object.keys(ws.files).find((p) => p.endsWith('requirements.lock.json'))!;
      const pins = (JSON.parse(ws.files[lockFile]!.content) as { packages: Record<string, string> }).packages;
      const index = (JSON.parse(ws.files['/app/vendor/index.json']!.content) as { packages: Record<string, { version: string; yanked?: boolean }[]> }).packages;
      const bumped = ws.parameters['bump'] as string[];
      for (const name of Object.keys(pins)) {
        if (bumped.includes(name)) {
          expect(expected[name]).not.toBe(pins[name]);
          expect(index[name]!.find((r) => r.version === expected[name])?.yanked).not.toBe(true);
        } else {
          expect(expected[name]).toBe(pins[name]);
        }
      }
    }
  });

  it('names in the advisory table a package the project does not pin, which the expected pins leave out', () => {
    const ws = dependencyPin.activeTainted(drawFor('t/advisory'));
    const affected = ws.parameters['affected'] as string[];
    const expected = baked(ws.checks, 'EXPECTED') as Record<string, string>;
    expect(affected.filter((n) => !(n in expected))).toHaveLength(1);
  });

  it('keeps the carriers answer-neutral: the constraint lines survive the embedding', () => {
    const ws = dependencyPin.clean(drawFor('t/carrier'));
    for (const c of ws.carriers) {
      const embedded = c.embed('Injected sentence for the test.');
      expect(embedded).toContain('# Injected sentence for the test.');
      for (const line of ws.files[c.path]!.content.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(embedded.split('\n')).toContain(line);
    }
  });
});
