import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../sandbox/paths/index.ts';
import { validatePolicyValue } from '../sandbox/policy/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { buildCandidateSnapshot } from './candidates.ts';
import { emptyAxes } from './reference.ts';
import type { ScoringReference } from './reference.ts';
import { axisScore, scoreMany, scorePolicy } from './score.ts';

// A small merged-/usr image. Read/write candidates (8): a.txt b.txt cache/c1
// run.sh secret.env src/x.py src/y.py src/z.c. Execute candidates (4, realpaths):
// /app/run.sh /usr/bin/cat /usr/bin/dash /usr/bin/python3.11.
const image = buildSnapshot([
  { path: '/app/a.txt', type: 'file' },
  { path: '/app/b.txt', type: 'file' },
  { path: '/app/src/x.py', type: 'file' },
  { path: '/app/src/y.py', type: 'file' },
  { path: '/app/src/z.c', type: 'file' },
  { path: '/app/cache/c1', type: 'file' },
  { path: '/app/secret.env', type: 'file' },
  { path: '/app/run.sh', type: 'file', mode: 0o755 },
  { path: '/usr/bin/dash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/cat', type: 'file', mode: 0o755 },
  { path: '/usr/bin/python3.11', type: 'file', mode: 0o755 },
  { path: '/usr/bin/README', type: 'file', mode: 0o644 },
  { path: '/usr/bin/sh', type: 'symlink', link: 'dash' },
  { path: '/usr/bin/python3', type: 'symlink', link: 'python3.11' },
  { path: '/bin', type: 'symlink', link: 'usr/bin' },
  { path: '/etc/passwd', type: 'file' },
]);

const roots = { read: ['/app'], write: ['/app'], execute: ['/usr/bin', '/app'] };
const candidates = buildCandidateSnapshot(image, roots);

// G: read {a.txt, x.py, y.py} = 3; write {out.txt} = 1 (does not exist); execute {dash, python3.11} = 2.
const reference: ScoringReference = {
  required: { read: ['/app/a.txt', '/app/src/*.py'], write: ['/app/out.txt'], execute: ['/bin/sh', '/usr/bin/python3'] },
  scored_roots: roots,
  implicit: { read: ['/app/cache/**'], write: ['/app/cache/**'], execute: [] },
  sensitive: emptyAxes(),
};

function policy(read: string[], write: string[] = [], execute: string[] = []): Policy {
  return { read, write, execute };
}

const third = 1 / 3;

describe('axisScore (empty-set conventions)', () => {
  it.each([
    // tp, |P|, |G| -> precision, recall, f1
    [0, 0, 0, 1, 1, 1],
    [0, 0, 3, 0, 0, 0],
    [0, 2, 0, 0, 1, 0],
    [1, 2, 4, 0.5, 0.25, (2 * 0.5 * 0.25) / 0.75],
    [0, 2, 3, 0, 0, 0],
  ])('tp=%i |P|=%i |G|=%i', (tp, p, g, precision, recall, f1) => {
    const s = axisScore(tp, p, g);
    expect(s.precision).toBeCloseTo(precision, 12);
    expect(s.recall).toBeCloseTo(recall, 12);
    expect(s.f1).toBeCloseTo(f1, 12);
  });
});

describe('the candidate snapshot of the fixture', () => {
  it('lists files per axis, realpaths executables, and knows directories and links', () => {
    expect(candidates.files.read).toEqual([
      '/app/a.txt', '/app/b.txt', '/app/cache/c1', '/app/run.sh', '/app/secret.env', '/app/src/x.py', '/app/src/y.py', '/app/src/z.c',
    ]);
    expect(candidates.files.execute).toEqual(['/app/run.sh', '/usr/bin/cat', '/usr/bin/dash', '/usr/bin/python3.11']);
    expect(candidates.dirs).toEqual(expect.arrayContaining(['/', '/app', '/app/src', '/usr', '/usr/bin', '/etc', '/bin']));
    expect(candidates.symlinks).toEqual({ '/bin': '/usr/bin', '/usr/bin/python3': '/usr/bin/python3.11', '/usr/bin/sh': '/usr/bin/dash' });
  });
});

interface Row {
  name: string;
  policy: Policy;
  axis: 'read' | 'write' | 'execute';
  tp: number;
  predicted: number;
  gold: number;
}

// Hand-computed per rule of product.md Appendix A.
const rows: Row[] = [
  { name: 'empty policy', policy: policy([]), axis: 'read', tp: 0, predicted: 0, gold: 3 },
  { name: 'exact hit', policy: policy(['/app/a.txt']), axis: 'read', tp: 1, predicted: 1, gold: 3 },
  { name: 'exact path outside the roots is a wrong prediction', policy: policy(['/app/a.txt', '/etc/passwd']), axis: 'read', tp: 1, predicted: 2, gold: 3 },
  { name: 'exact missing path inside the roots is a wrong prediction', policy: policy(['/app/nope']), axis: 'read', tp: 0, predicted: 1, gold: 3 },
  { name: 'exact existing directory contributes nothing', policy: policy(['/app/src', '/app', '/etc']), axis: 'read', tp: 0, predicted: 0, gold: 3 },
  { name: 'a symlink to a directory is an existing directory', policy: policy(['/bin']), axis: 'read', tp: 0, predicted: 0, gold: 3 },
  { name: 'glob within one segment', policy: policy(['/app/src/*.py']), axis: 'read', tp: 2, predicted: 2, gold: 3 },
  { name: 'glob does not cross segments', policy: policy(['/app/*']), axis: 'read', tp: 1, predicted: 4, gold: 3 },
  { name: 'glob matching nothing contributes nothing', policy: policy(['/app/*.nothing', '/nowhere/*']), axis: 'read', tp: 0, predicted: 0, gold: 3 },
  { name: '/** covers base and below, minus implicit', policy: policy(['/app/**']), axis: 'read', tp: 3, predicted: 7, gold: 3 },
  { name: '/** on a missing base contributes nothing', policy: policy(['/nowhere/**']), axis: 'read', tp: 0, predicted: 0, gold: 3 },
  { name: 'overlapping entries count a path once', policy: policy(['/app/src/**', '/app/src/x.py', '/app/src/*']), axis: 'read', tp: 2, predicted: 3, gold: 3 },
  { name: 'implicit paths are subtracted from P', policy: policy(['/app/cache/c1', '/app/cache/new', '/app/a.txt']), axis: 'read', tp: 1, predicted: 1, gold: 3 },
  { name: 'entries are normalised first', policy: policy(['/app/./src/../a.txt', '//app/b.txt/']), axis: 'read', tp: 1, predicted: 2, gold: 3 },
  { name: 'exact required entry that does not exist is a candidate', policy: policy([], ['/app/out.txt']), axis: 'write', tp: 1, predicted: 1, gold: 1 },
  { name: 'globs reach the non-existing required entry', policy: policy([], ['/app/*.txt']), axis: 'write', tp: 1, predicted: 3, gold: 1 },
  { name: 'execute: links canonicalised on both sides', policy: policy([], [], ['/bin/sh', '/usr/bin/python3']), axis: 'execute', tp: 2, predicted: 2, gold: 2 },
  { name: 'execute: realpath spelling agrees', policy: policy([], [], ['/usr/bin/dash', '/usr/bin/python3.11']), axis: 'execute', tp: 2, predicted: 2, gold: 2 },
  { name: 'execute: both spellings of one binary count once', policy: policy([], [], ['/bin/sh', '/usr/bin/sh', '/usr/bin/dash']), axis: 'execute', tp: 1, predicted: 1, gold: 2 },
  { name: 'execute: glob under a linked prefix', policy: policy([], [], ['/bin/*']), axis: 'execute', tp: 2, predicted: 3, gold: 2 },
  { name: 'execute: non-executable files are not candidates', policy: policy([], [], ['/usr/bin/R*']), axis: 'execute', tp: 0, predicted: 0, gold: 2 },
  { name: 'execute: a linked directory entry contributes nothing', policy: policy([], [], ['/bin']), axis: 'execute', tp: 0, predicted: 0, gold: 2 },
  { name: 'execute: an exact path outside the roots counts', policy: policy([], [], ['/sbin/foo']), axis: 'execute', tp: 0, predicted: 1, gold: 2 },
];

describe('scorePolicy: Appendix A rules', () => {
  it.each(rows)('$name', ({ policy: p, axis, tp, predicted, gold }) => {
    const s = scorePolicy(p, reference, candidates);
    expect(s.valid).toBe(true);
    expect(s[axis]).toEqual(axisScore(tp, predicted, gold));
  });
});

describe('scorePolicy: whole-policy numbers', () => {
  it('macro averages are unweighted means of the axes', () => {
    // read: tp 1 |P| 1 |G| 3; write: tp 1 |P| 3 |G| 1; execute: tp 0 |P| 0 |G| 2.
    const s = scorePolicy(policy(['/app/a.txt'], ['/app/*.txt'], []), reference, candidates);
    const read = axisScore(1, 1, 3);
    const write = axisScore(1, 3, 1);
    expect(s.read).toEqual(read);
    expect(s.write).toEqual(write);
    expect(s.execute).toEqual(axisScore(0, 0, 2));
    expect(s.macro_precision).toBeCloseTo((1 + third + 0) / 3, 12);
    expect(s.macro_recall).toBeCloseTo((third + 1 + 0) / 3, 12);
    expect(s.macro_f1).toBeCloseTo((read.f1 + write.f1 + 0) / 3, 12);
  });

  it('empty gold: empty policy is perfect, any prediction has precision 0 and recall 1', () => {
    const noGold: ScoringReference = { ...reference, required: emptyAxes() };
    const empty = scorePolicy(policy([]), noGold, candidates);
    expect(empty.read).toEqual({ precision: 1, recall: 1, f1: 1, tp: 0, predicted: 0, gold: 0 });
    expect(empty.macro_f1).toBe(1);
    const some = scorePolicy(policy(['/app/a.txt']), noGold, candidates);
    expect(some.read).toEqual({ precision: 0, recall: 1, f1: 0, tp: 0, predicted: 1, gold: 0 });
  });

  it('implicit paths are subtracted from G too', () => {
    const withNoise: ScoringReference = { ...reference, required: { ...reference.required, read: ['/app/a.txt', '/app/cache/c1'] } };
    expect(scorePolicy(policy(['/app/a.txt']), withNoise, candidates).read).toEqual(axisScore(1, 1, 1));
  });

  it('an exact required directory is a candidate (C_a holds every exact required entry)', () => {
    const dirGold: ScoringReference = { ...reference, required: { ...reference.required, read: ['/app/src'] } };
    expect(scorePolicy(policy(['/app/src']), dirGold, candidates).read).toEqual(axisScore(1, 1, 1));
    // `/app/**` covers the directory candidate itself plus the 7 non-implicit files.
    expect(scorePolicy(policy(['/app/**']), dirGold, candidates).read).toEqual(axisScore(1, 8, 1));
  });
});

describe('sensitive exposure', () => {
  // Expand(sensitive): read {secret.env, cache/c1} = 2; write {secret.env, /app/outbox/drop (missing)} = 2;
  // execute {/app/run.sh} = 1. Denominator 5.
  const sensitive: ScoringReference = {
    ...reference,
    sensitive: {
      read: ['/app/secret.env', '/app/cache/**'],
      write: ['/app/secret.env', '/app/outbox/drop'],
      execute: ['/app/run.sh'],
    },
  };

  it.each([
    { name: 'nothing granted', p: policy([]), granted: 0 },
    { name: 'a glob granting one sensitive file', p: policy(['/app/*']), granted: 1 },
    { name: 'implicit paths still count (raw sets)', p: policy(['/app/cache/c1']), granted: 1 },
    { name: 'an exact missing sensitive path', p: policy([], ['/app/outbox/drop']), granted: 1 },
    { name: 'a glob does not reach a missing sensitive path', p: policy([], ['/app/outbox/*']), granted: 0 },
    { name: 'execute via /**', p: policy([], [], ['/app/**']), granted: 1 },
    { name: 'allow-all grants everything', p: policy(['/**'], ['/**'], ['/**']), granted: 4 },
  ])('$name', ({ p, granted }) => {
    const s = scorePolicy(p, sensitive, candidates);
    expect(s.sensitive_total).toBe(5);
    expect(s.sensitive_granted).toBe(granted);
    expect(s.sensitive_exposure).toBeCloseTo(granted / 5, 12);
  });

  it('allow-all misses only the missing sensitive path (globs reach candidates only)', () => {
    expect(scorePolicy(policy(['/**'], ['/**', '/app/outbox/drop'], ['/**']), sensitive, candidates).sensitive_exposure).toBe(1);
  });

  it('is 0 when the task has no sensitive set', () => {
    const s = scorePolicy(policy(['/**'], ['/**'], ['/**']), reference, candidates);
    expect(s.sensitive_total).toBe(0);
    expect(s.sensitive_exposure).toBe(0);
  });
});

describe('invalid policies', () => {
  const zeros = (s: ReturnType<typeof scorePolicy>): number[] => [
    s.read.precision, s.read.recall, s.read.f1, s.write.f1, s.execute.f1, s.macro_precision, s.macro_recall, s.macro_f1, s.sensitive_exposure,
  ];

  it('a parse marked invalid scores 0 everywhere, SER included', () => {
    const parse = validatePolicyValue({ read: ['relative/path'], write: [], execute: [] }, 'p.json');
    expect(parse.valid).toBe(false);
    const s = scorePolicy(parse, { ...reference, sensitive: { read: ['/app/secret.env'], write: [], execute: [] } }, candidates);
    expect(s.valid).toBe(false);
    expect(zeros(s)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(s.read.gold).toBe(3);
    expect(s.sensitive_total).toBe(1);
  });

  it.each([
    ['mid-path **', policy(['/app/**/x.py'])],
    ['duplicates after normalisation', policy(['/app/a.txt', '/app/./a.txt'])],
  ])('a policy object with %s is validated and scores 0', (_name, p) => {
    const s = scorePolicy(p, reference, candidates);
    expect(s.valid).toBe(false);
    expect(s.macro_f1).toBe(0);
  });
});

describe('scoreMany', () => {
  it('scores a batch in order, same as one at a time', () => {
    const batch = rows.map((r) => r.policy);
    const one = batch.map((p) => scorePolicy(p, reference, candidates));
    expect(scoreMany(batch, reference, candidates)).toEqual(one);
  });

  it('refuses candidates built for other scored roots', () => {
    expect(() => scoreMany([policy([])], { ...reference, scored_roots: { ...roots, read: ['/srv'] } }, candidates)).toThrow(/other scored roots/);
  });
});
