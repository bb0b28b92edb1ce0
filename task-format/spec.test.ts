import { describe, expect, it } from 'vitest';
import { checkSpec, parseSpec } from './index.ts';

const FILE = 'tasks/t/tests/permission_eval_spec.json';

type Sets = { read: unknown[]; write: unknown[]; execute: unknown[] };
const sets = (read: unknown[] = [], write: unknown[] = [], execute: unknown[] = []): Sets => ({ read, write, execute });

function spec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    required_permissions: sets(['/app/in.txt'], ['/app/out/*.txt'], ['/usr/bin/python3']),
    scored_roots: sets(['/app'], ['/app'], ['/usr/bin', '/usr/local/bin']),
    implicit_permissions: sets(['/etc/ld.so.cache', '/usr/lib/**'], [], []),
    ...overrides,
  };
}

const fields = (value: unknown): (string | undefined)[] => checkSpec(value, FILE).problems.map((p) => p.field);

describe('checkSpec', () => {
  it('accepts a valid spec and returns it normalised', () => {
    const { spec: out, problems } = checkSpec(
      spec({ sensitive_permissions: sets(['/app//secret/'], [], []) }),
      FILE,
    );
    expect(problems).toEqual([]);
    expect(out?.sensitive_permissions?.read).toEqual(['/app/secret']);
    expect(out?.required_permissions.write).toEqual(['/app/out/*.txt']);
  });

  it('names the file in every problem', () => {
    const { problems } = checkSpec(spec({ extra: 1 }), FILE);
    expect(problems).toEqual([{ file: FILE, field: 'extra', message: 'unknown key', severity: 'error' }]);
  });

  it.each<[string, unknown, string[]]>([
    ['a missing key', { scored_roots: sets(), implicit_permissions: sets() }, ['required_permissions']],
    ['an extra axis', spec({ implicit_permissions: { ...sets(), network: [] } }), ['implicit_permissions.network']],
    ['a missing axis', spec({ scored_roots: { read: ['/app'], write: ['/app'] } }), ['scored_roots.execute']],
    ['a non-array axis', spec({ implicit_permissions: { ...sets(), read: '/etc' } }), ['implicit_permissions.read']],
    ['a non-string entry', spec({ implicit_permissions: sets([3]) }), ['implicit_permissions.read[0]']],
    ['an empty entry', spec({ implicit_permissions: sets([], ['']) }), ['implicit_permissions.write[0]']],
    ['a relative entry', spec({ implicit_permissions: sets([], [], ['python3']) }), ['implicit_permissions.execute[0]']],
    ['a mid-path **', spec({ implicit_permissions: sets(['/usr/**/lib']) }), ['implicit_permissions.read[0]']],
    ['an exact duplicate', spec({ implicit_permissions: sets(['/a', '/b', '/a']) }), ['implicit_permissions.read[2]']],
    ['a duplicate after normalisation', spec({ implicit_permissions: sets(['/a/b', '/a/./b/']) }), ['implicit_permissions.read[1]']],
    ['a glob scored root', spec({ scored_roots: sets(['/app/*'], ['/app'], ['/usr/bin']) }), ['scored_roots.read[0]']],
    ['a /** scored root', spec({ scored_roots: sets(['/app'], ['/app/**'], ['/usr/bin']) }), ['scored_roots.write[0]']],
    [
      'a required entry outside its roots',
      spec({ required_permissions: sets(['/app/in.txt'], ['/app/a', '/app/b', '/tmp/c'], []) }),
      ['required_permissions.write[2]'],
    ],
    [
      'a glob whose static prefix leaves the roots',
      spec({ required_permissions: sets(['/a*/x'], [], []) }),
      ['required_permissions.read[0]'],
    ],
    ['a prefix sibling of a root', spec({ required_permissions: sets(['/apple'], [], []) }), ['required_permissions.read[0]']],
    [
      'a sensitive entry outside its roots',
      spec({ sensitive_permissions: sets([], [], ['/bin/sh']) }),
      ['sensitive_permissions.execute[0]'],
    ],
    [
      'entries on an axis with no roots',
      spec({ scored_roots: sets([], ['/app'], ['/usr/bin']) }),
      ['required_permissions.read[0]'],
    ],
  ])('rejects %s', (_what, value, want) => {
    expect(fields(value)).toEqual(want);
  });

  it('does not check implicit entries against the scored roots', () => {
    expect(fields(spec({ implicit_permissions: sets(['/proc/**'], ['/dev/null'], ['/lib/ld-linux.so.2']) }))).toEqual([]);
  });

  it('reports every problem, not just the first', () => {
    expect(fields(spec({ implicit_permissions: sets(['rel', '/ok', '/ok'], ['']), extra: true }))).toEqual([
      'implicit_permissions.read[0]',
      'implicit_permissions.read[2]',
      'implicit_permissions.write[0]',
      'extra',
    ]);
  });
});

describe('parseSpec', () => {
  it('reports JSON syntax errors against the file', () => {
    const { spec: out, problems } = parseSpec('{"required_permissions": ', FILE);
    expect(out).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]?.file).toBe(FILE);
    expect(problems[0]?.message).toMatch(/^not valid JSON: /);
  });

  it('rejects a top-level array', () => {
    expect(parseSpec('[]', FILE).problems.map((p) => p.message)).toEqual([expect.stringMatching(/expected object/)]);
  });
});
