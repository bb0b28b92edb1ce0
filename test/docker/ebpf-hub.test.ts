/**
 * The eBPF hub (sandbox/ebpf/hub.ts): one ab-ebpf for many containers, as
 * eval's `--tracer ebpf` runs it. Each container's trace holds its own
 * events only, however their commands interleave; a take returns what was
 * written since the previous one, a call in flight across a take included;
 * a container traced after another closed starts at once (no reattaching);
 * the hub's trace of an oracle agrees with strace's as the single-container
 * tracer's does (ebpf.test.ts); and a hub that dies fails its traces as the
 * tracer's failure, never as an empty trace. Skipped, with the probe's
 * reason, where eBPF cannot run.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, type Container, type DockerEngine } from '../../docker/index.ts';
import { commandEvents, compareTraces, EbpfHub, ensureEbpfTracer, gatherEbpfFacts, judgeEbpf, TRACER_NICE } from '../../sandbox/ebpf/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import type { TraceEvent } from '../../sandbox/trace/index.ts';
import { discoverTasks, loadTask } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox } from '../../taskenv/index.ts';
import { CONTAINER_PATHS } from '../../validators/index.ts';

const engine: DockerEngine = await connectDocker();
const verdict = judgeEbpf(await gatherEbpfFacts(), 'native');
const reason = verdict.available ? '' : ` (skipped: ${verdict.reason})`;
const abEbpf = verdict.available ? (await ensureEbpfTracer(engine)).path : undefined;

function filePaths(events: readonly TraceEvent[]): string[] {
  return events.flatMap((e) => (e.kind === 'file' ? [e.path] : []));
}

describe(`eBPF hub: many containers, one tracer${reason}`, () => {
  let hub: EbpfHub | undefined;
  const containers: Container[] = [];

  beforeAll(async () => {
    if (!verdict.available || abEbpf === undefined) return;
    hub = await EbpfHub.start({ abEbpf, cgroup2Mount: verdict.cgroup2Mount });
  }, 120_000);
  afterAll(async () => {
    await hub?.stop();
    await Promise.all(containers.map((c) => c.remove()));
  });

  async function box(): Promise<Container> {
    const c = await engine.startContainer({ image: BASE_IMAGE_REF, network: 'none' });
    containers.push(c);
    return c;
  }

  it.skipIf(!verdict.available)('reads its rings at a raised priority, so a saturated machine does not starve it into dropping records', () => {
    if (hub === undefined || hub.pid === undefined) throw new Error('unreachable: skipped');
    // /proc/<pid>/stat: the 19th field is the nice value (fields counted after the parenthesised name).
    const stat = readFileSync(`/proc/${hub.pid}/stat`, 'utf8');
    const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    expect(hub.readerNice).toBe(TRACER_NICE);
    expect(nice).toBe(TRACER_NICE);
    expect(TRACER_NICE).toBeLessThan(0);
  });

  it.skipIf(!verdict.available)("loaded with the resolved-path walk (real_path of opens): this kernel takes it, and eval would warn if not", () => {
    if (hub === undefined) throw new Error('unreachable: skipped');
    expect(hub.resolvesPaths).toBe(true);
  });

  it.skipIf(!verdict.available)(
    'keeps each container\'s events apart, take by take, while both run at once',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const [a, b] = await Promise.all([box(), box()]);
      const [ta, tb] = await Promise.all([hub.trace(a.id), hub.trace(b.id)]);
      expect(ta.cgroupId).not.toBe(tb.cgroupId);
      const burst = (tag: string) => `for i in $(seq 1 40); do : > /tmp/${tag}-$i; done`;
      await Promise.all([a.exec({ cmd: ['sh', '-c', burst('first-a')], timeoutMs: 30_000 }), b.exec({ cmd: ['sh', '-c', burst('first-b')], timeoutMs: 30_000 })]);
      const [a1, b1] = await Promise.all([ta.take(), tb.take()]);
      await a.exec({ cmd: ['sh', '-c', burst('second-a')], timeoutMs: 30_000 });
      const a2 = await ta.take();
      const [aEnd, bEnd] = await Promise.all([ta.close(), tb.close()]);

      const created = (events: readonly TraceEvent[], tag: string) => filePaths(events).filter((p) => p.startsWith(`/tmp/${tag}-`)).length;
      expect(created(a1.events, 'first-a')).toBe(40);
      expect(created(b1.events, 'first-b')).toBe(40);
      expect(filePaths(a1.events).some((p) => p.includes('-b-'))).toBe(false);
      expect(filePaths(b1.events).some((p) => p.includes('-a-'))).toBe(false);
      // The second take has the second command only, and b saw none of it.
      expect(created(a2.events, 'second-a')).toBe(40);
      expect(created(a2.events, 'first-a')).toBe(0);
      expect(filePaths([...bEnd.events, ...b1.events]).some((p) => p.includes('second'))).toBe(false);
      expect(aEnd.lost + a1.lost + a2.lost).toBe(0);
      expect(bEnd.lost + b1.lost).toBe(0);
      expect(hub.open).toBe(0);
    },
    120_000,
  );

  it.skipIf(!verdict.available)(
    'a call in flight at a take comes back whole in the next one; a closed container is traced no more',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const c = await box();
      const t = await hub.trace(c.id);
      // cat's open of a FIFO blocks in the kernel until the writer opens it, a second later: the
      // take in between sees its entry, the next one its return.
      const running = c.exec({ cmd: ['sh', '-c', 'mkfifo /tmp/fifo; (sleep 1; echo hi > /tmp/fifo) & cat /tmp/fifo'], timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 300));
      const early = await t.take();
      const ran = await running;
      const late = await t.take();
      const closed = await t.close();
      expect(ran.stdout).toBe('hi\n');
      const all = [...early.events, ...late.events, ...closed.events];
      const catOpen = all.filter((e) => e.kind === 'file' && e.path === '/tmp/fifo' && e.op === 'read');
      expect(catOpen, JSON.stringify(all.filter((e) => e.kind !== 'file' || e.path === '/tmp/fifo'))).toHaveLength(1);
      expect(catOpen[0]?.kind === 'file' && catOpen[0].result).toBeGreaterThanOrEqual(0);
      expect(all.filter((e) => e.kind === 'unparsed')).toEqual([]);
      // After close the container's events go nowhere; a new trace of it starts empty.
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/untraced'], timeoutMs: 30_000 });
      const again = await hub.trace(c.id);
      const none = await again.close();
      expect(filePaths(none.events)).not.toContain('/tmp/untraced');
    },
    120_000,
  );

  it.skipIf(!verdict.available)(
    'traces nothing while paused, and everything again once resumed',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const c = await box();
      const t = await hub.trace(c.id, { paused: true });
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/before-resume'], timeoutMs: 30_000 });
      await t.resume();
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/while-traced'], timeoutMs: 30_000 });
      const first = await t.take();
      await t.pause();
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/while-paused'], timeoutMs: 30_000 });
      await t.resume();
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/traced-again'], timeoutMs: 30_000 });
      // A take that pauses (the session's, after a command that left nothing running) has it all, and stops.
      const pausing = await t.take({ pause: true });
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/after-pausing-take'], timeoutMs: 30_000 });
      await t.resume();
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/resumed-last'], timeoutMs: 30_000 });
      const rest = await t.close();
      expect(filePaths(first.events)).toContain('/tmp/while-traced');
      expect(filePaths(pausing.events)).toContain('/tmp/traced-again');
      const all = filePaths([...first.events, ...pausing.events, ...rest.events]);
      expect(all).not.toContain('/tmp/before-resume');
      expect(all).not.toContain('/tmp/while-paused');
      expect(all).not.toContain('/tmp/after-pausing-take');
      expect(filePaths(rest.events)).toContain('/tmp/resumed-last');
      expect(first.lost + pausing.lost + rest.lost).toBe(0);
    },
    120_000,
  );

  it.skipIf(!verdict.available)(
    'reports pids as the container numbers them (as strace in it and the session agent do), forks included',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const c = await box();
      const t = await hub.trace(c.id);
      const ran = await c.exec({ cmd: ['sh', '-c', 'echo $$; (echo $$ $(cat /proc/self/stat | cut -d" " -f4) > /dev/null; sh -c \'echo $$; : > /tmp/child-mark\')'], timeoutMs: 30_000 });
      const { events } = await t.close();
      const [shellPid, childPid] = ran.stdout.trim().split('\n').map(Number);
      expect(shellPid).toBeGreaterThan(0);
      expect(shellPid).toBeLessThan(4_194_304);
      const mark = events.find((e) => e.kind === 'file' && e.path === '/tmp/child-mark');
      expect(mark?.pid, ran.stdout).toBe(childPid);
      // The child's fork chain leads back to the shell the exec started, in the same numbering.
      const parentOf = new Map(events.flatMap((e) => (e.kind === 'process' && e.op === 'fork' && e.child !== undefined && e.pid !== undefined ? [[e.child, e.pid] as const] : [])));
      let p: number | undefined = childPid;
      const chain: number[] = [];
      while (p !== undefined && chain.length < 10) {
        chain.push(p);
        p = parentOf.get(p);
      }
      expect(chain, JSON.stringify([...parentOf])).toContain(shellPid);
    },
    120_000,
  );

  it.skipIf(!verdict.available)(
    'traces log-triage\'s oracle as strace does (≥ 99% of gold-relevant events)',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const task = await loadTask((await discoverTasks('tasks')).find((d) => d.endsWith('log-triage')) ?? 'tasks/log-triage');
      const image = await buildTaskImage(engine, task);
      await using sandbox = await openTaskSandbox(engine, task, image.tag, { pinCpu: 0 });
      await sandbox.container.copyIn(dirname(task.files.solveSh), '/');
      const solve = `${CONTAINER_PATHS.solution}/solve.sh`;
      const t = await hub.trace(sandbox.container.id);
      const run = await sandbox.session.run({ cmd: ['bash', solve], mode: { kind: 'unenforced' }, timeoutMs: 300_000 });
      const traced = await t.close();
      const own = commandEvents(traced.events, (e) => e.path === LAUNCHER_PATH && e.argv.includes(solve));
      const agreement = compareTraces(run.events, own);
      const report = [`agreement ${(agreement.rate * 100).toFixed(2)}% (strace ${agreement.totalA}, hub ${agreement.totalB})`, ...agreement.differences.map((d) => `  strace ×${d.a} hub ×${d.b}  ${d.example}`)].join('\n');
      expect(run.exec.exitCode, report).toBe(0);
      expect(traced.lost, report).toBe(0);
      expect(agreement.totalA, report).toBeGreaterThan(10);
      expect(agreement.rate, report).toBeGreaterThanOrEqual(0.99);
    },
    300_000,
  );

  it.skipIf(!verdict.available)(
    'counts what the ring buffer dropped per container: a flood fills its own ring, and its neighbour\'s trace stays whole',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const pid = hub.pid;
      if (pid === undefined) throw new Error('no hub pid');
      const [flood, quiet] = await Promise.all([box(), box()]);
      const [tf, tq] = await Promise.all([hub.trace(flood.id), hub.trace(quiet.id)]);
      // With the reader stopped, ~20,000 opens of a 2 KB path (about 40 MB of records) overflow
      // the flood's 8 MB ring; then the quiet container writes a few records, into a ring of its
      // own (with one ring for both, they would find it full and be lost).
      process.kill(pid, 'SIGSTOP');
      try {
        const long = `/tmp/${'./'.repeat(1000)}f`;
        await flood.exec({ cmd: ['sh', '-c', `i=0; while [ $i -lt 20000 ]; do : > ${long}; i=$((i+1)); done`], timeoutMs: 120_000 });
        await quiet.exec({ cmd: ['sh', '-c', ': > /tmp/quiet'], timeoutMs: 30_000 });
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const [f, q] = await Promise.all([tf.take(), tq.take()]);
      const [fEnd, qEnd] = await Promise.all([tf.close(), tq.close()]);
      expect(f.lost + fEnd.lost).toBeGreaterThan(0);
      expect(q.lost + qEnd.lost).toBe(0);
      expect(filePaths(q.events)).toContain('/tmp/quiet');
    },
    240_000,
  );

  it.skipIf(!verdict.available)(
    'holds no more than its cap of a container\'s records between takes: the rest is counted as lost',
    async () => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      await using small = await EbpfHub.start({ abEbpf, cgroup2Mount: verdict.cgroup2Mount, shareCapBytes: 64 * 1024 });
      const c = await box();
      const t = await small.trace(c.id);
      await c.exec({ cmd: ['sh', '-c', `i=0; while [ $i -lt 2000 ]; do : > /tmp/${'./'.repeat(100)}f; i=$((i+1)); done`], timeoutMs: 60_000 });
      const flooded = await t.take();
      expect(flooded.lost).toBeGreaterThan(0);
      expect(flooded.bytes).toBeLessThanOrEqual(64 * 1024);
      // The next take starts afresh.
      await c.exec({ cmd: ['sh', '-c', ': > /tmp/after-flood'], timeoutMs: 30_000 });
      const after = await t.close();
      expect(after.lost).toBe(0);
      expect(filePaths(after.events)).toContain('/tmp/after-flood');
    },
    120_000,
  );

  it.skipIf(!verdict.available)(
    'answers another container\'s commands while one floods, and each of its takes is whole: the flood fills only its own ring',
    async () => {
      if (hub === undefined || !verdict.available) throw new Error('unreachable: skipped');
      const [flood, quiet] = await Promise.all([box(), box()]);
      const tf = await hub.trace(flood.id);
      const tq = await hub.trace(quiet.id, { paused: true });
      // Two python loops of failing stats and opens (the syscall-flood scenario's): more records
      // than the reader drains, so the ring buffer stays full while it lasts.
      const py = 'import os\nwhile True:\n    try: os.stat("/nonexistent")\n    except OSError: pass\n    try: open("/nonexistent")\n    except OSError: pass\n';
      const loops = `for k in 1 2; do (python3 -c '${py}' >/dev/null 2>&1 &); done; sleep 1`;
      expect((await flood.exec({ cmd: ['sh', '-c', loops], timeoutMs: 30_000 })).exitCode).toBe(0);
      try {
        let whole = 0;
        for (let i = 0; i < 25; i++) {
          await tq.resume();
          await quiet.exec({ cmd: ['sh', '-c', `: > /tmp/quiet-${i}`], timeoutMs: 30_000 });
          const taken = await tq.take({ pause: true });
          // Each container writes to a ring buffer of its own (fewer than AB_RINGS are traced):
          // the flood fills its own ring, never the quiet one's, so every quiet take is whole.
          expect(taken.lost, `take ${i}`).toBe(0);
          if (filePaths(taken.events).includes(`/tmp/quiet-${i}`)) whole++;
        }
        process.stderr.write(`[ebpf-hub.test] ${whole} of 25 takes beside the flood were whole\n`);
        expect(whole).toBe(25);
        // The flood's own trace says it is incomplete.
        expect((await tf.take()).lost).toBeGreaterThan(0);
      } finally {
        await flood.exec({ cmd: ['sh', '-c', 'kill -9 -1'], timeoutMs: 30_000 }).catch(() => undefined);
      }
      await Promise.all([tf.close(), tq.close()]);
    },
    180_000,
  );

  it.skipIf(!verdict.available)(
    'a hub that dies fails its open traces as the tracer\'s failure',
    async () => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      const doomed = await EbpfHub.start({ abEbpf, cgroup2Mount: verdict.cgroup2Mount });
      const c = await box();
      const t = await doomed.trace(c.id);
      doomed.kill();
      const failure = await t.take().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(AuthbenchError);
      expect((failure as AuthbenchError).code).toBe('TRACER_UNAVAILABLE');
      await expect(doomed.trace(c.id)).rejects.toThrow(/eBPF hub/);
      await doomed.stop();
    },
    120_000,
  );
});
