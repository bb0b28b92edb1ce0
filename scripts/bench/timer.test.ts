import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TIMER_SOURCE, parseTimerOutput, timerArgv, type TimerSpec } from './timer.ts';

describe('parseTimerOutput', () => {
  it('turns nanoseconds into milliseconds per variant, reading the last line', () => {
    const out = 'noise\n{"ok": true, "durations_ns": {"bare": [1000000, 2500000], "launcher": [3000000]}}\n';
    expect(parseTimerOutput(out, 'w')).toEqual({ bare: [1, 2.5], launcher: [3] });
  });

  it('a failed run is an error naming the variant, exit code and stderr', () => {
    const out = JSON.stringify({ ok: false, variant: 'launcher', exit_code: 126, stderr: 'ab-launch: denied\n' });
    expect(() => parseTimerOutput(out, 'gcc')).toThrow(/gcc \(launcher\) exited 126/);
  });

  it.each([
    ['not json', /printed no JSON/],
    ['{"ok": true, "durations_ns": {"bare": [-1]}}', /malformed/],
    ['{"ok": "yes"}', /malformed/],
  ])('rejects %s', (out, message) => {
    expect(() => parseTimerOutput(out, 'w')).toThrow(message);
  });
});

describe('timerArgv', () => {
  it('passes the validated spec as one JSON argument', () => {
    const spec: TimerSpec = { cwd: '/tmp', stderr: '/tmp/e', warmup: 1, reps: 2, variants: { bare: ['true'] } };
    const argv = timerArgv('/opt/t.py', spec);
    expect(argv.slice(0, 2)).toEqual(['python3', '/opt/t.py']);
    expect(JSON.parse(argv[2] ?? '')).toEqual(spec);
    expect(() => timerArgv('/opt/t.py', { ...spec, reps: 0 })).toThrow();
  });
});

const python = spawnSync('python3', ['-c', 'import os; os.posix_spawnp; os.waitstatus_to_exitcode'], { encoding: 'utf8' });

describe.skipIf(python.status !== 0)('the timer script under the host python3', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authbench-bench-timer-'));
  const script = join(dir, 'timer.py');
  writeFileSync(script, TIMER_SOURCE);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (variants: Record<string, string[]>, reps = 3): string => {
    const argv = timerArgv(script, { cwd: dir, stderr: join(dir, 'stderr'), warmup: 1, reps, variants });
    const r = spawnSync(argv[0] ?? '', argv.slice(1), { encoding: 'utf8' });
    expect(r.status).toBe(0);
    return r.stdout;
  };

  it('records reps runs of every variant (warm-up dropped), each a positive duration', () => {
    const ms = parseTimerOutput(run({ a: ['true'], b: ['true'] }), 'w');
    expect(Object.keys(ms).sort()).toEqual(['a', 'b']);
    for (const sample of Object.values(ms)) {
      expect(sample).toHaveLength(3);
      for (const d of sample) expect(d).toBeGreaterThan(0);
    }
  });

  it('runs in the working directory the spec names', () => {
    const out = run({ here: ['test', '-f', 'timer.py'] }, 1);
    expect(JSON.parse(out)).toMatchObject({ ok: true });
  });

  it('keeps the command output off its own stdout', () => {
    const out = run({ talk: ['echo', 'hello from the workload'] }, 1);
    expect(out).not.toContain('hello from the workload');
  });

  it('spawns a pinned variant on its CPUs only, and the next one on the timer\'s own again', () => {
    const allowed = 'import os, sys; sys.exit(0 if os.sched_getaffinity(0) == {0} else 7)';
    // After a pinned run the timer is free again (on a one-CPU host there is nothing to tell apart).
    const everywhere = 'import os, sys; sys.exit(0 if os.sched_getaffinity(0) != {0} or os.cpu_count() == 1 else 8)';
    const argv = timerArgv(script, {
      cwd: dir,
      stderr: join(dir, 'stderr'),
      warmup: 0,
      reps: 2,
      variants: { pinned: ['python3', '-c', allowed], free: ['python3', '-c', everywhere] },
      affinity: { pinned: [0] },
    });
    const r = spawnSync(argv[0] ?? '', argv.slice(1), { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true });
  });

  it('reports a failing variant with its stderr', () => {
    const out = run({ ok: ['true'], broken: ['sh', '-c', 'echo oops >&2; exit 3'] });
    expect(() => parseTimerOutput(out, 'w')).toThrow(/w \(broken\) exited 3/);
    expect(JSON.parse(out)).toMatchObject({ ok: false, stderr: 'oops\n' });
  });
});
