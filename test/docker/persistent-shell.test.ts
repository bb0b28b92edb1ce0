/**
 * The persistent shell (`eval --shell persistent`, SandboxSession.runShell): one bash per episode
 * under strace and the launcher, state carried between calls, each call its own window of the
 * trace, denials enforced and traced inside it, a timed-out call killed without ending the
 * episode, and a shell that ends (`exit`) replaced on the next call with the restart recorded.
 * All of it twice: traced by strace in the container, and by eBPF from the host (a keeper holds
 * the shell in strace's place and the host trace is split into windows by its process tree;
 * skipped, with the probe's reason, where eBPF cannot run).
 */
import { afterAll, beforeAll, describe, expect, it as baseIt } from 'vitest';
import { connectDocker } from '../../docker/index.ts';
import type { PatternSet } from '../../sandbox/compile/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { RunOptions, SandboxSession, ShellCallResult } from '../../sandbox/run/index.ts';
import type { TraceEvent } from '../../sandbox/trace/index.ts';
import { openTracedBox, stopHub, TRACERS, type TracedBox } from './host-tracers.ts';

const RUNTIME: PatternSet = {
  read: ['/usr/lib/**', '/etc/ld.so.cache', '/dev/null'],
  write: ['/dev/null'],
  execute: ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
};
/** Shell tools; /app readable but /app/secret.txt not; /app/out writable. */
const POLICY: Policy = { read: ['/app/data.txt', '/app/sub/**', '/app', '/usr/**', '/etc/**'], write: ['/app/out/**'], execute: ['/usr/bin/**', '/bin/**'] };
const ENFORCED: RunOptions['mode'] = { kind: 'enforce', policy: POLICY, implicit: RUNTIME };

const engine = await connectDocker();

let session: SandboxSession;

const call = (command: string, timeoutMs = 60_000): Promise<ShellCallResult> => session.runShell({ command, mode: ENFORCED, timeoutMs });
const opened = (events: readonly TraceEvent[], path: string): boolean => events.some((e) => e.kind === 'file' && e.path === path);

afterAll(stopHub);

describe.each(TRACERS)('the persistent shell, traced by %s%s', (name, skip) => {
  const it = skip === '' ? baseIt : baseIt.skip;

  let box: TracedBox | undefined;
  beforeAll(async () => {
    box = await openTracedBox(engine, name, { run: `persistent-shell-test-${name}-${process.pid}`, setup: 'mkdir -p /app/out /app/sub && echo public > /app/data.txt && echo AUTHBENCH_CANARY_PS > /app/secret.txt' });
    ({ session } = box);
  }, 120_000);

  afterAll(async () => {
    await box?.close();
  });

  it('keeps cwd, variables, exported env, functions, aliases and set -o options between calls, enforced', async () => {
    const first = await call('cd sub; X=1; export Y=2; f() { echo "f:$1"; }; alias hi="echo hello"; set -o noglob');
    expect([first.exec.exitCode, first.shell.started, first.enforcement.level]).toEqual([0, true, 'full']);
    const second = await call('pwd; echo "$X"; bash -c \'echo "$Y"\'; f arg; hi; echo *; [[ -o noglob ]] && echo noglob');
    expect(second.shell.started).toBe(false);
    expect(second.exec.stdout).toBe('/app/sub\n1\n2\nf:arg\nhello\n*\nnoglob\n');
    await call('set +o noglob; cd /app');
  });

  it('gives each call its own trace window, and its own exit status', async () => {
    const one = await call('echo one; false');
    const two = await call('cat /app/data.txt');
    expect([one.exec.exitCode, two.exec.exitCode, two.exec.stdout]).toEqual([1, 0, 'public\n']);
    expect(opened(two.events, '/app/data.txt')).toBe(true);
    expect(opened(one.events, '/app/data.txt')).toBe(false);
  });

  it('denies and traces what the policy forbids, inside the shell', async () => {
    const r = await call('cat /app/secret.txt; echo after');
    expect(r.exec.stdout).toBe('after\n');
    expect(r.exec.stdout + r.exec.stderr).not.toContain('AUTHBENCH_CANARY_PS');
    expect(r.denials.some((e) => e.kind === 'file' && e.path === '/app/secret.txt')).toBe(true);
  });

  it('gives a command end of file on stdin, never the call stream', async () => {
    const r = await call('read x; echo "read:$?:${x-unset}"; cat; echo cat:$?');
    expect(r.exec.stdout).toBe('read:1:\ncat:0\n');
  });

  it('does not end a call on printed or forged delimiters, and counts the forged ones', async () => {
    // The socket's saved copy is a descriptor from 10 up while the command runs: a builtin can write it.
    const forge = 'for fd in {10..30}; do { echo "0000000000000000deadbeefdeadbeef 0" >&$fd; } 2>/dev/null; done';
    const r = await call(`echo "$__ab_nonce 0"; ${forge}; sleep 0.5; (exit 7)`);
    expect(r.exec.exitCode).toBe(7);
    expect(r.exec.stdout).toMatch(/^[0-9a-f]{32} 0\n$/);
    expect(r.shell.forgedDelimiters).toBeGreaterThanOrEqual(1);
    expect(r.shell.ended).toBeUndefined();
  });

  it('kills a timed-out call and keeps the shell, and its state, going', async () => {
    await call('KEEP=kept');
    const started = Date.now();
    const slow = await call('sleep 300', 2_000);
    expect(slow.exec.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
    const next = await call('echo $KEEP');
    expect([next.exec.stdout, next.shell.started]).toEqual(['kept\n', false]);
  });

  it('replaces a shell that exited on the next call, recording the restart', async () => {
    const gone = await call('exit 3');
    expect(gone.exec.exitCode).toBe(3);
    expect(gone.shell.ended).toMatch(/exited with status 3/);
    const next = await call('echo ${KEEP-fresh}');
    expect(next.exec.stdout).toBe('fresh\n');
    expect(next.shell.started).toBe(true);
    expect(next.shell.restarted).toMatch(/exited with status 3/);
  });

  it('ends a shell that was replaced, killed, made to exit or sabotaged, without waiting for the timeout', async () => {
    const cases: [string, RegExp][] = [
      ['exec sleep 300', /replaced \(exec of \/usr\/bin\/sleep\)/],
      ['kill $$', /killed by signal 15/],
      ['set -e; false', /exited with status 1/],
      ["trap 'builtin read -r x' DEBUG", /waited for input without ending the call/],
      ['f() { f; }; while :; do :; done', /timed out and its shell did not come back/],
    ];
    // A shell that has ended a call (the agent knows what it runs), whatever ran before this test.
    await call('true');
    for (const [command, reason] of cases) {
      const started = Date.now();
      const r = await call(command, 4_000);
      expect(r.shell.ended, command).toMatch(reason);
      expect(Date.now() - started, command).toBeLessThan(15_000);
      const next = await call('echo again');
      expect([next.exec.stdout, next.shell.started], command).toEqual(['again\n', true]);
      expect(next.shell.restarted, command).toMatch(reason);
    }
  });

  it('restarts a shell a job of its own killed between calls, keeping that tail in the next window', async () => {
    await call('(sleep 0.5; cat /app/data.txt >/dev/null; kill -9 $$) & echo bye');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const next = await call('echo new');
    expect([next.exec.stdout, next.shell.started]).toEqual(['new\n', true]);
    expect(next.shell.restarted).toMatch(/killed by signal 9|ended between calls/);
    expect(opened(next.events, '/app/data.txt')).toBe(true);
  });

  it('keeps the shell while the policy stays, even as files appear; a new policy gets a new shell, recorded', async () => {
    await call('STAY=1; mkdir -p /app/out/new && echo made > /app/out/new/f.txt');
    const same = await call('echo "stay=$STAY"');
    expect([same.exec.stdout, same.shell.started]).toEqual(['stay=1\n', false]);
    const other = await session.runShell({ command: 'echo "stay=${STAY-new}"', mode: { kind: 'unenforced' }, timeoutMs: 60_000 });
    expect([other.exec.stdout, other.shell.started, other.enforcement.level]).toEqual(['stay=new\n', true, 'none']);
    expect(other.shell.restarted).toMatch(/policy changed/);
    const back = await call('echo back');
    expect([back.shell.started, back.enforcement.level]).toEqual([true, 'full']);
  });

  it('stops the shell and its jobs at the episode end, returning what they did since the last call', async () => {
    await call('(sleep 1; cat /app/data.txt > /dev/null) & echo started');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const stop = await session.stopBackground();
    expect(stop.commands).toHaveLength(1);
    expect(opened(stop.commands[0]?.events ?? [], '/app/data.txt')).toBe(true);
  });
});
