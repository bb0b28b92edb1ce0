import { describe, expect, it } from 'vitest';
import { parseStrace, type TraceEvent } from '../trace/index.ts';
import { backgroundOf, foldBackground } from './background.ts';
import type { BackgroundResult, BackgroundStop, SandboxResult } from './session.ts';

const events = (text: string): TraceEvent[] => parseStrace(text, { cwd: '/' });

function result(extra: Partial<SandboxResult> = {}): SandboxResult {
  return {
    exec: { exitCode: 0, timedOut: false, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 5 },
    events: events('10 1.0 openat(AT_FDCWD, "/etc/nginx/nginx.conf", O_RDONLY) = 3\n'),
    denials: [],
    enforcement: { level: 'full', landlockAbi: 6, seccomp: true, bestEffort: false },
    rawTrace: 'fg\n',
    trace: { bytes: 100, truncated: false, droppedEvents: 0 },
    seccompDenials: 1,
    survivors: { count: 2, info: '41 nginx\n42 nginx' },
    ...extra,
  };
}

function job(id: number, extra: Partial<BackgroundResult> = {}): BackgroundResult {
  const later = events('42 2.0 openat(AT_FDCWD, "/var/log/nginx/access.log", O_WRONLY|O_CREAT|O_APPEND, 0644) = 5\n42 2.1 openat(AT_FDCWD, "/etc/shadow", O_RDONLY) = -1 EACCES (Permission denied)\n');
  return {
    job: id,
    events: later,
    denials: later.filter((e) => e.kind !== 'unparsed' && e.denied === true),
    trace: { bytes: 50, truncated: true, droppedEvents: 3 },
    seccompDenials: 2,
    stopped: { count: 2, info: '41 nginx\n42 nginx' },
    rawTrace: 'bg\n',
    ...extra,
  };
}

const stop = (...commands: BackgroundResult[]): BackgroundStop => ({ commands, leftover: { count: 0, info: '' } });
const paths = (r: SandboxResult): string[] => r.events.flatMap((e) => (e.kind === 'file' ? [e.path] : []));

describe('foldBackground', () => {
  it('appends the background command’s events, denials and trace to its own command’s', () => {
    const folded = foldBackground(result({ background: { job: 7 } }), stop(job(3), job(7)));
    expect(paths(folded)).toEqual(['/etc/nginx/nginx.conf', '/var/log/nginx/access.log', '/etc/shadow']);
    expect(folded.denials.map((e) => (e.kind === 'file' ? e.path : ''))).toEqual(['/etc/shadow']);
    expect(folded.rawTrace).toBe('fg\nbg\n');
    expect(folded.trace).toEqual({ bytes: 150, truncated: true, droppedEvents: 3 });
    expect(folded.seccompDenials).toBe(3);
    expect(folded.survivors).toEqual({ count: 2, info: '41 nginx\n42 nginx' });
  });

  it('leaves a command that kept nothing in the background, or whose part is missing, as it was', () => {
    const plain = result();
    expect(foldBackground(plain, stop(job(1)))).toBe(plain);
    const kept = result({ background: { job: 9 } });
    expect(foldBackground(kept, stop(job(1)))).toBe(kept);
    expect(backgroundOf(kept, stop(job(1), job(9)))?.job).toBe(9);
  });

  it('keeps no raw trace when the command kept none', () => {
    const { rawTrace: _dropped, ...withoutRaw } = result({ background: { job: 1 } });
    const folded = foldBackground(withoutRaw, stop(job(1)));
    expect(folded).not.toHaveProperty('rawTrace');
  });
});
