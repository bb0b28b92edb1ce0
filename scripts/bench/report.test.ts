import { describe, expect, it } from 'vitest';
import {
  BENCH_REPORT_VERSION,
  BenchReportSchema,
  fmtDelta,
  fmtMs,
  fmtRatio,
  evalPathTable,
  renderReport,
  rolloutRateTable,
  sessionVerdict,
  spread,
  textTable,
  type BenchReport,
} from './report.ts';
import { summarize } from './stats.ts';

const s = (ms: number): ReturnType<typeof summarize> => summarize([ms, ms, ms]);

function report(overrides: Partial<BenchReport['round_trip']> = {}): BenchReport {
  return BenchReportSchema.parse({
    version: BENCH_REPORT_VERSION,
    config: { reps: 15, warmup: 2, unpinned_reps: 8, round_trip_reps: 15, cpuset: '0' },
    host: { cpus: 2, loadavg: [1, 2, 3] },
    workloads: [
      {
        id: 'python-imports',
        label: 'python3 imports',
        cmd: ['python3'],
        pinned: { bare: s(100), launcher: s(101), 'launcher+strace': s(130) },
        unpinned: { bare: s(100), 'launcher+strace': s(470) },
        traced_target: 1.5,
      },
      {
        id: 'gcc',
        label: 'gcc',
        cmd: ['gcc'],
        pinned: { bare: s(200), launcher: s(202), 'launcher+strace': s(400) },
        unpinned: { bare: s(200), 'launcher+strace': s(1600) },
        traced_target: 1.5,
      },
      {
        id: 'find-usr',
        label: 'find',
        cmd: ['find'],
        pinned: { bare: s(50), launcher: s(51), 'launcher+strace': s(380) },
        unpinned: { bare: s(50), 'launcher+strace': s(5000) },
      },
    ],
    round_trip: {
      raw_exec: s(60),
      container_exec: s(62),
      session_run: s(6),
      session_run_traced: s(15),
      session_compile: s(2),
      session_listing: s(45),
      session_compile_after_listing: s(9),
      session_patch_compile: s(4),
      listing_entries: 31_000,
      docker_calls: { session_run: 0, session_run_traced: 0 },
      session_first_ms: 2000,
      ...overrides,
    },
  } satisfies BenchReport);
}

const line = (text: string, start: string): string => text.split('\n').find((l) => l.startsWith(start)) ?? '';

describe('renderReport', () => {
  const text = renderReport(report());

  it('prints ratios of medians with the informational verdicts', () => {
    expect(line(text, 'python3 imports')).toMatch(/1\.01×.*1\.30×\s+±0%\s+≤ 1\.5×\s+ok$/);
    expect(line(text, 'gcc')).toMatch(/2\.00×\s+±0%\s+≤ 1\.5×\s+over$/);
    expect(line(text, 'find')).toMatch(/7\.60×\s+±0%\s+–$/);
  });

  it('compares unpinned with pinned tracing', () => {
    const unpinned = text.split('unpinned container')[1] ?? '';
    expect(line(unpinned, 'find')).toMatch(/100\.0×\s+7\.60×$/);
  });

  it('judges harness overhead per command against a bare exec', () => {
    expect(line(text, 'Container.exec')).toMatch(/1\.03×\s+1\s+\+2\.00 ms\s+well under 60 ms\s+ok$/);
    expect(line(text, 'SandboxSession.run, launcher, no strace')).toMatch(/6\.00 ms\s+0\.10×\s+0\s+−54\.0 ms\s+< 0\.5× bare exec\s+well under$/);
    expect(line(text, 'SandboxSession.run, launcher + strace')).toMatch(/15\.0 ms\s+0\.25×\s+0\s+−45\.0 ms\s+< 0\.5× bare exec\s+well under$/);
    expect(line(text, '  of which: policy compile')).toMatch(/2\.00 ms\s+0\.0333×\s+0$/);
    expect(line(text, "agent's filesystem listing (31000 entries), parsed")).toMatch(/45\.0 ms\s+0\.75×\s+0$/);
    expect(line(text, '  then the first compile against it')).toMatch(/9\.00 ms\s+0\.15×\s+0$/);
    expect(line(text, 'a command created a file: snapshot patch + compile')).toMatch(/4\.00 ms\s+0\.0667×\s+0$/);
    expect(line(text, '    target:')).toMatch(/launcher \+ strace 15\.0 ms vs bare exec 60\.0 ms = 0\.25× \(< 0\.5×\): well under$/);
    expect(text).toContain('first SandboxSession.run of a session (agent start, Landlock ABI probe, listing, compile, traced true): 2000 ms');
  });

  it('the acceptance line follows the traced command, not the untraced one', () => {
    const t = renderReport(report({ session_run: s(6), session_run_traced: s(40), docker_calls: { session_run: 0, session_run_traced: 2 } }));
    expect(line(t, '    target:')).toMatch(/40\.0 ms vs bare exec 60\.0 ms = 0\.67× \(< 0\.5×\): over$/);
    expect(line(t, 'SandboxSession.run, launcher + strace')).toMatch(/0\.67×\s+2\s+−20\.0 ms\s+< 0\.5× bare exec\s+over$/);
    expect(line(t, 'SandboxSession.run, launcher, no strace')).toMatch(/well under$/);
  });

  it('has no exec-transport rows left', () => {
    expect(text).not.toMatch(/\[agent\]|\[exec\]|fell back/);
  });

  it('the verdict is strict at half an exec', () => {
    expect([sessionVerdict(0.49), sessionVerdict(0.5), sessionVerdict(2)]).toEqual(['well under', 'over', 'over']);
  });
});

describe('eval tracing, pinned and unpinned', () => {
  const evalRow = (id: string, label: string, ms: { untraced: number; traced: number; pinned: number; sessionTraced: number; sessionPinned: number }) => ({
    id,
    label,
    in_container: { untraced: s(ms.untraced), untraced_pinned: s(ms.untraced), traced: s(ms.traced), traced_pinned: s(ms.pinned) },
    session: { untraced: s(ms.untraced + 10), traced: s(ms.sessionTraced), traced_pinned: s(ms.sessionPinned) },
  });
  const rows = [
    evalRow('python-imports', 'python3 imports', { untraced: 100, traced: 160, pinned: 130, sessionTraced: 170, sessionPinned: 140 }),
    evalRow('find-usr', 'find', { untraced: 10, traced: 74, pinned: 31, sessionTraced: 90, sessionPinned: 45 }),
  ];

  it('prints traced ÷ untraced unpinned and pinned, the pinned ratio judged by the issue target, and the session end to end', () => {
    const t = evalPathTable(rows);
    expect(line(t, 'python3 imports')).toMatch(/100 ms\s+1\.60×\s+1\.30×\s+1\.30×\s+±0%\s+≤ 1\.35×\s+ok\s+110 ms\s+170 ms\s+140 ms\s+0\.82×\s+±0%$/);
    expect(line(t, 'find')).toMatch(/7\.40×\s+3\.10×\s+3\.10×\s+±0%\s+≤ 3×\s+over\s+/);
  });

  it('renders the sections only when measured', () => {
    const rates = [
      { concurrency: 1, mode: 'unpinned' as const, rollouts: 6, elapsed_ms: 12_000, per_minute: 30 },
      { concurrency: 1, mode: 'pinned' as const, rollouts: 6, elapsed_ms: 10_000, per_minute: 36 },
      { concurrency: 2, mode: 'unpinned' as const, rollouts: 6, elapsed_ms: 8_000, per_minute: 45 },
    ];
    expect(line(rolloutRateTable(rates), '1 ')).toMatch(/30\.0 \(6\)\s+36\.0 \(6\)\s+1\.20×$/);
    expect(line(rolloutRateTable(rates), '2 ')).toMatch(/45\.0 \(6\)\s+–\s+–$/);
    expect(renderReport(report())).not.toContain('(d) eval');
    const full = renderReport(BenchReportSchema.parse({ ...report(), eval_path: rows, eval_pin_cpu: 0, rollout_rates: rates }));
    expect(full).toContain("(d) eval's tracing");
    expect(full).toContain('(e) synthetic rollouts per minute');
  });
});

describe('formatting', () => {
  it('spread is half the widest interquartile range over its median', () => {
    expect(spread([summarize([80, 90, 100, 110, 120]), summarize([100, 100, 100])])).toBe('±10%');
    expect(spread([summarize([0])])).toBe('±0%');
  });

  it.each([
    [0.256, '0.26 ms'],
    [12.34, '12.3 ms'],
    [1234.5, '1235 ms'],
    [Number.NaN, '–'],
  ])('fmtMs(%d) = %s', (ms, expected) => expect(fmtMs(ms)).toBe(expected));

  it('formats deltas with a sign and ratios with ×', () => {
    expect(fmtDelta(-1.5)).toBe('−1.50 ms');
    expect(fmtDelta(240)).toBe('+240 ms');
    expect(fmtRatio(1.234)).toBe('1.23×');
    expect(fmtRatio(0.005)).toBe('0.0050×');
    expect(fmtRatio(Number.POSITIVE_INFINITY)).toBe('–');
  });

  it('aligns columns, numbers to the right', () => {
    const t = textTable([{ title: 'name' }, { title: 'n', right: true }], [['a', '1'], ['long', '100']]).split('\n');
    expect(t).toEqual(['name    n', '────  ───', 'a       1', 'long  100']);
  });
});
