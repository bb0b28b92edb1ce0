import { describe, expect, it } from 'vitest';
import { TRACE_EVENT_SCHEMA_VERSION, type TraceEvent } from '../trace/index.ts';
import { HostTraceRouter } from './host-trace.ts';

const LAUNCHER = '/opt/authbench/bin/ab-launch';
const base = { schema_version: TRACE_EVENT_SCHEMA_VERSION, ts: 0 } as const;
const fork = (pid: number, child: number): TraceEvent => ({ ...base, kind: 'process', op: 'fork', syscall: 'clone', pid, child, result: child });
const exec = (pid: number, path: string, result = 0): TraceEvent => ({ ...base, kind: 'exec', syscall: 'execve', pid, path, argv: [path], cwd: '/', result, denied: false });
const open = (pid: number, path: string): TraceEvent => ({ ...base, kind: 'file', op: 'read', syscall: 'openat', pid, path, result: 3, denied: false });
const paths = (events: readonly TraceEvent[]) => events.map((e) => `${e.pid ?? '-'} ${e.kind === 'file' || e.kind === 'exec' ? e.path : e.kind}`);

/** The agent (pid 10) forks a keeper (20), which forks the launcher (21), which execs the command. */
function launch(keeper: number, root: number, command: string): TraceEvent[] {
  return [fork(10, keeper), exec(keeper, LAUNCHER), fork(keeper, root), exec(root, LAUNCHER), open(root, '/etc/ld.so.cache'), exec(root, command)];
}

describe('HostTraceRouter', () => {
  it('gives a command its tree from the launcher its keeper started, without the launcher\'s setup, the agent\'s or the keeper\'s events', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    router.route([...launch(20, 21, '/bin/sh'), open(10, '/agent-only'), open(20, '/keeper-only'), fork(21, 22), open(22, '/data/in.csv'), fork(22, 23), open(23, '/tmp/grandchild'), open(99, '/validator')]);
    expect(paths(router.end())).toEqual(['21 /bin/sh', '21 process', '22 /data/in.csv', '22 process', '23 /tmp/grandchild']);
  });

  it('keeps a kept command\'s tree for its job across later takes and commands; a stopped one\'s pids mean nothing after', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    router.route([...launch(20, 21, '/bin/sh'), fork(21, 22)]);
    router.end(1);
    router.begin(30);
    // The service (22) works while the next command runs; the next command (31) is not the job's.
    router.route([open(22, '/var/log/service.log'), ...launch(30, 31, '/bin/ls'), open(31, '/srv')]);
    expect(paths(router.end())).toEqual(['31 /bin/ls', '31 /srv']);
    router.route([fork(22, 24), open(24, '/var/www/index.html'), open(31, '/after-end')]);
    expect(paths(router.stopJob(1))).toEqual(['22 /var/log/service.log', '22 process', '24 /var/www/index.html']);
    expect(router.jobs).toEqual([]);
  });

  it('drains a kept job (the persistent shell) call by call and keeps following it until its stop', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    router.route([...launch(20, 21, '/bin/bash'), open(21, '/first-call')]);
    expect(paths(router.end(7))).toEqual(['21 /bin/bash', '21 /first-call']);
    // A call forks a child of the shell; a command between calls runs under its own keeper.
    router.route([fork(21, 22), exec(22, '/bin/cat'), open(22, '/second-call')]);
    expect(paths(router.drainJob(7))).toEqual(['21 process', '22 /bin/cat', '22 /second-call']);
    expect(router.drainJob(7)).toEqual([]);
    router.begin(30);
    router.route([...launch(30, 31, '/bin/ls'), open(21, '/between-calls')]);
    expect(paths(router.end())).toEqual(['31 /bin/ls']);
    router.route([open(21, '/third-call')]);
    expect(paths(router.drainJob(7))).toEqual(['21 /between-calls', '21 /third-call']);
    expect(router.jobs).toEqual([7]);
    router.route([open(21, '/tail')]);
    expect(paths(router.stopJob(7))).toEqual(['21 /tail']);
    expect(router.drainJob(7)).toEqual([]);
  });

  it('hands a reused pid to whoever forked it now', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    router.route([...launch(20, 21, '/bin/sh'), fork(21, 22)]);
    router.end(1);
    // 22 died and the agent's fork got the number: not the job's.
    router.route([fork(10, 22), open(22, '/not-the-service')]);
    expect(router.stopJob(1)).toEqual([]);
  });

  it('needs the root to be the keeper\'s child: a launcher exec elsewhere (or a failed one) is not the command', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    router.route([fork(10, 40), exec(40, LAUNCHER), open(40, '/decoy'), fork(10, 20), fork(20, 21), exec(21, LAUNCHER, -2), exec(21, LAUNCHER), exec(21, '/bin/true')]);
    expect(paths(router.end())).toEqual(['21 /bin/true']);
  });

  it('keeps unparsed records without a pid with the running command, never hides them', () => {
    const router = new HostTraceRouter(LAUNCHER);
    router.begin(20);
    const broken: TraceEvent = { ...base, kind: 'unparsed', raw: 'x', reason: 'record without its end' };
    router.route([...launch(20, 21, '/bin/sh'), broken]);
    expect(router.end()).toContainEqual(broken);
  });
});
