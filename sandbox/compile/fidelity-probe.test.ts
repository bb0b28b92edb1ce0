import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../paths/index.ts';
import type { Policy } from '../policy/index.ts';
import { compilePolicy } from './compile.ts';
import { judgeAttempt, kernelOutcome, parseProbeOutput, planProbeAttempts } from './fidelity-probe.ts';
import type { KernelOutcome, ProbeAttempt } from './fidelity-probe.ts';
import { kernelAllows, policyAllows } from './model.ts';

const snap = buildSnapshot([
  { path: '/w/a/f', type: 'file', mode: 0o755 },
  { path: '/w/a/b', type: 'dir' },
  { path: '/w/g', type: 'file', mode: 0o755 },
  { path: '/w/d', type: 'symlink', link: 'a' },
  { path: '/w/x', type: 'symlink', link: 'nowhere' },
]);
const NONE = { read: [], write: [], execute: [] };
const policy = (p: Partial<Policy>): Policy => ({ ...NONE, ...p });
const compile = (p: Policy) => compilePolicy(p, snap, { implicit: NONE, abi: 7 });
const ALLOWED: KernelOutcome = { kind: 'allowed' };
const DENIED: KernelOutcome = { kind: 'denied', errno: 'EACCES' };

describe('planProbeAttempts', () => {
  const plan = planProbeAttempts(snap, ['/w', '/w/a', '/w/a/f', '/w/d/f', '/w/d/new', '/w/a/new', '/w/a/b/n', '/w/d', '/w/x', '/w/c/y'], (p) => p === '/w/d/new');
  const ops = plan.map((a) => `${a.op} ${a.path}`);

  it('plans only operations that can happen on the snapshot', () => {
    expect(ops).not.toContain('write /w/a'); // a directory cannot be opened for writing
    expect(ops.some((o) => o.endsWith('/w/c/y'))).toBe(false); // its directory does not exist
    expect(ops).not.toContain('execute /w/x'); // dangling
    expect(ops).toContain('remove /w/x'); // the link itself can go
    expect(ops).toContain('chmod /w/d/f');
  });

  it('acts on each real name once: mkdir or create as asked, a removal once through all aliases', () => {
    expect(ops).toContain('mkdir /w/d/new');
    expect(ops).toContain('create /w/a/b/n');
    expect(ops).not.toContain('create /w/a/new'); // the same name as /w/d/new
    expect(ops.filter((o) => o === 'remove /w/a/f' || o === 'remove /w/d/f')).toHaveLength(1);
  });

  it('opens first, creates next, removes last and deepest first', () => {
    const phase = (a: ProbeAttempt): number => (a.op === 'remove' ? 2 : a.op === 'create' || a.op === 'mkdir' ? 1 : 0);
    expect(plan.map(phase)).toEqual([...plan.map(phase)].sort());
    const removals = plan.filter((a) => a.op === 'remove').map((a) => a.path);
    expect(removals.indexOf('/w/a/f')).toBeLessThan(removals.indexOf('/w/a'));
    expect(removals.indexOf('/w/a')).toBeLessThan(removals.indexOf('/w'));
  });
});

describe('kernelOutcome / parseProbeOutput', () => {
  it.each([
    [{ i: 0, ok: true }, 'allowed'],
    [{ i: 0, ok: false, errno: 'EACCES' }, 'denied'],
    [{ i: 0, ok: false, errno: 'EPERM' }, 'denied'],
    [{ i: 0, ok: false, errno: 'ENOTEMPTY' }, 'allowed'],
    [{ i: 0, ok: false, errno: 'ENOENT' }, 'failed'],
  ])('%j is %s', (line, kind) => expect(kernelOutcome(line).kind).toBe(kind));

  it('needs one line per attempt, in order', () => {
    expect(parseProbeOutput('{"i":0,"ok":true}\n{"i":1,"ok":false,"errno":"EACCES"}\n', 2)).toHaveLength(2);
    expect(() => parseProbeOutput('{"i":0,"ok":true}\n', 2)).toThrow(/1 results for 2/);
    expect(() => parseProbeOutput('{"i":1,"ok":true}\n', 1)).toThrow();
  });
});

describe('judgeAttempt', () => {
  const judge = (p: Policy, attempt: ProbeAttempt, outcome: KernelOutcome) => judgeAttempt(p, snap, compile(p), attempt, outcome).problems;

  it('accepts agreement', () => {
    expect(judge(policy({ read: ['/w/a/f'] }), { path: '/w/a/f', op: 'read' }, ALLOWED)).toEqual([]);
    expect(judge(policy({ read: ['/w/a/f'] }), { path: '/w/g', op: 'read' }, DENIED)).toEqual([]);
  });

  it('flags a kernel that differs from the model, and a denial nothing explains', () => {
    expect(judge(policy({ read: ['/w/a/f'] }), { path: '/w/a/f', op: 'read' }, DENIED)).toEqual(['model-mismatch', 'unexplained-denial']);
    expect(judge(policy({}), { path: '/w/g', op: 'read' }, ALLOWED)).toEqual(['model-mismatch', 'unexplained-grant']);
    expect(judge(policy({}), { path: '/w/g', op: 'read' }, { kind: 'failed', errno: 'ENOENT' })).toEqual(['probe-failed']);
  });

  it('accepts a grant beyond the policy when the report widens it', () => {
    // Removing /w/g needs remove_file on /w: every file beneath /w can be removed.
    const p = policy({ write: ['/w/g'] });
    const v = judgeAttempt(p, snap, compile(p), { path: '/w/a/f', op: 'remove' }, ALLOWED);
    expect(v).toMatchObject({ static: false, model: true, kernel: true, problems: [] });
    expect(v.explained.map((e) => `${e.entry} ${e.kind}`)).toEqual(['/w/g widened']);
  });

  it('accepts a create the report says cannot be granted', () => {
    const p = policy({ write: ['/w/*/new'] });
    const v = judgeAttempt(p, snap, compile(p), { path: '/w/a/new', op: 'create' }, DENIED);
    expect(v.problems).toEqual([]);
    expect(v.explained.map((e) => e.kind)).toEqual(['no-match', 'narrowed']);
  });

  it('judges chmod by the setattr grant', () => {
    expect(judge(policy({ write: ['/w/a/f'] }), { path: '/w/g', op: 'chmod' }, ALLOWED)).toEqual([]); // widened: setattr
    expect(judge(policy({ read: ['/w/a/f'] }), { path: '/w/g', op: 'chmod' }, DENIED)).toEqual([]);
    expect(judge(policy({ read: ['/w/a/f'] }), { path: '/w/g', op: 'chmod' }, ALLOWED)).toEqual(['model-mismatch', 'unexplained-grant']);
  });
});

describe('compiler regressions found against the kernel', () => {
  it('`/**` on a symlinked directory lets the link itself be removed (unlink needs remove_file, not remove_dir)', () => {
    const p = policy({ write: ['/w/d/**'] });
    expect(policyAllows(p, snap, '/w/d', 'remove')).toBe(true);
    expect(kernelAllows(compile(p).rules, snap, '/w/d', 'remove')).toBe(true);
  });

  it('`/**` on a dangling symlink still lets the link be removed, as the exact path does', () => {
    for (const entry of ['/w/x', '/w/x/**']) {
      const p = policy({ write: [entry] });
      expect(kernelAllows(compile(p).rules, snap, '/w/x', 'remove'), entry).toBe(true);
    }
  });

  // Known gap (reported): globs expand lexically, never behind a symlinked directory, while the
  // static decision matches the path as written. When expansion follows links, turn this into `it`.
  it.fails('a glob behind a symlinked directory grants what it statically allows', () => {
    const p = policy({ read: ['/w/d/*'] });
    expect(policyAllows(p, snap, '/w/d/f', 'read')).toBe(true);
    expect(kernelAllows(compile(p).rules, snap, '/w/d/f', 'read')).toBe(true);
  });
});
