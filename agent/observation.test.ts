import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../sandbox/trace/index.ts';
import { capText, renderObservation, renderSurvivors, summarizeDenials } from './observation.ts';

function fileEvent(path: string, op: 'read' | 'write', errno?: string, pid = 100): TraceEvent {
  return {
    kind: 'file',
    schema_version: 1,
    pid,
    ts: 1,
    syscall: 'openat',
    result: errno === undefined ? 3 : -1,
    ...(errno === undefined ? {} : { errno }),
    denied: errno === 'EACCES' || errno === 'EPERM',
    op,
    path,
  };
}

describe('capText', () => {
  it('leaves short text alone', () => {
    expect(capText('hello', 8)).toEqual({ text: 'hello', bytes: 5, truncated: false });
  });

  it('keeps head and tail within the cap and says how much was cut', () => {
    const text = `${'a'.repeat(600)}${'b'.repeat(600)}`;
    const capped = capText(text, 100);
    expect(capped.truncated).toBe(true);
    expect(capped.bytes).toBe(1200);
    expect(capped.text.startsWith('a'.repeat(75))).toBe(true);
    expect(capped.text.endsWith('b'.repeat(25))).toBe(true);
    expect(capped.text).toContain('[... 1100 bytes truncated (1200 total) ...]');
  });

  it('counts bytes, not characters, and never leaves half a character', () => {
    const capped = capText('é'.repeat(100), 11); // 200 bytes; the head cut falls inside a character
    expect(capped.truncated).toBe(true);
    expect(capped.text).not.toContain('\uFFFD');
    expect(capped.text.startsWith('éééé\n')).toBe(true);
  });

  it('notes output the capture had already cut', () => {
    expect(capText('short', 100, true).text).toBe('short\n[output truncated by the capture limit]');
    expect(capText('x'.repeat(200), 100, true).text).toContain('the capture limit cut more after the end');
  });
});

describe('summarizeDenials', () => {
  it('renders one line per distinct denial, without pids, repeats counted, in first-seen order', () => {
    const events = [
      fileEvent('/etc/shadow', 'read', 'EACCES', 1),
      fileEvent('/app/ok', 'read'),
      fileEvent('/root/.ssh/authorized_keys', 'write', 'EACCES', 2),
      fileEvent('/etc/shadow', 'read', 'EACCES', 3),
      fileEvent('/missing', 'read', 'ENOENT'),
    ];
    expect(summarizeDenials(events)).toEqual(['read /etc/shadow -> DENIED EACCES (x2)', 'write /root/.ssh/authorized_keys -> DENIED EACCES']);
  });

  it('caps the list and counts the rest', () => {
    const events = Array.from({ length: 5 }, (_, i) => fileEvent(`/f${i}`, 'read', 'EPERM'));
    expect(summarizeDenials(events, 2)).toEqual(['read /f0 -> DENIED EPERM', 'read /f1 -> DENIED EPERM', '... and 3 more denied operation(s)']);
  });

  it('is empty when nothing was denied', () => {
    expect(summarizeDenials([fileEvent('/a', 'read'), fileEvent('/b', 'read', 'ENOENT')])).toEqual([]);
  });
});

describe('renderObservation', () => {
  it('says in one line which background processes the command left running were stopped', () => {
    const text = renderObservation({ exitCode: 0, timedOut: false, timeoutMs: 1000, stdout: 'started', stderr: '', denials: [], survivors: { count: 2, processes: ['41 nginx', '42 nginx'] } });
    expect(text.split('\n').at(-1)).toBe('[2 background processes the command left running were stopped: 41 nginx, 42 nginx]');
    expect(renderObservation({ exitCode: 0, timedOut: false, timeoutMs: 1000, stdout: '', stderr: '', denials: [], survivors: { count: 0, processes: [] } })).not.toContain('stopped');
  });

  it('counts survivors beyond the ones named', () => {
    expect(renderSurvivors(1, ['7 sleep'])).toBe('[1 background process the command left running was stopped: 7 sleep]');
    expect(renderSurvivors(10, ['1 a', '2 b'])).toBe('[10 background processes the command left running were stopped: 1 a, 2 b, and 8 more]');
  });

  it('shows exit code, both streams and the denials', () => {
    const text = renderObservation({ exitCode: 1, timedOut: false, timeoutMs: 1000, stdout: 'out', stderr: '', denials: ['read /x -> DENIED EACCES'] });
    expect(text).toBe('exit code: 1\nstdout:\nout\nstderr: (empty)\noperations denied (EACCES/EPERM):\n  read /x -> DENIED EACCES');
  });

  it('says when the command was killed by its timeout', () => {
    const text = renderObservation({ exitCode: null, timedOut: true, timeoutMs: 30_000, stdout: '', stderr: '', denials: [] });
    expect(text.split('\n').slice(0, 2)).toEqual(['timed out after 30s and was killed', 'exit code: none (killed)']);
  });

  it('says the command did not run when the launcher refused', () => {
    const text = renderObservation({ exitCode: 71, timedOut: false, timeoutMs: 1000, stdout: '', stderr: '', denials: [], launcherError: 'landlock_create_ruleset failed' });
    expect(text).toContain('did not run: landlock_create_ruleset failed');
  });
});
