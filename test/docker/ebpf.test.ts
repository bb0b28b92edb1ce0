/**
 * The eBPF tracer against strace, on the starter tasks' oracles: one run of
 * solve.sh, traced by both at once (strace through the session as gen-gold
 * runs it, the eBPF tracer — its native backend; the full tier also
 * bpftrace — on the container's cgroup from the host), so the two see
 * the very same syscalls and any difference is the tracer's (but strace's
 * reads fault the tracee's pages in, which hides what eBPF alone misses there:
 * ebpf-gold.test.ts runs each tracer on its own). Agreement over
 * gold-relevant events must be ≥ 99%; every difference is printed. Skipped,
 * with the probe's reason, where eBPF cannot run (not root, no bpftrace, no
 * tracefs or BTF, Docker in a VM). The ci tier runs the fastest starter
 * tasks; the full tier all of them and one scenario per suite family (its
 * `-cln-0`, the plainest oracle of the family). Then the native backend
 * gives an open through a symlink (to a directory, read through; to a file,
 * written) the same real_path as strace, and reports a path longer than
 * bpftrace's 199 bytes whole.
 */
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sendmmsgLines } from '../../adversarial/datagrams.ts';
import { ENV, readEnv } from '../../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, type DockerEngine } from '../../docker/index.ts';
import {
  commandEvents,
  compareTraces,
  ensureEbpfTracer,
  gatherEbpfFacts,
  judgeEbpf,
  startEbpfTrace,
  type Agreement,
  type EbpfBackend,
  type EbpfFacts,
} from '../../sandbox/ebpf/index.ts';
import { LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import type { TraceEvent } from '../../sandbox/trace/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox } from '../../taskenv/index.ts';
import { CONTAINER_PATHS } from '../../validators/index.ts';
import { FULL_TIER } from './tier.ts';

/** Fast oracles (a few seconds each) for the ci tier; the full tier runs every starter task. */
const CI_TASKS = ['log-triage', 'ini-config-repair', 'backup-script-fix'];
const MIN_AGREEMENT = 0.99;

const engine: DockerEngine = await connectDocker();
// Docker Desktop and rootless engines are refused by what the engine says of itself.
const info = (await engine.docker.info()) as { OperatingSystem?: string; SecurityOptions?: string[] };
const facts: EbpfFacts = await gatherEbpfFacts({
  engine: {
    ...(info.OperatingSystem === undefined ? {} : { operatingSystem: info.OperatingSystem }),
    ...(info.SecurityOptions === undefined ? {} : { securityOptions: info.SecurityOptions }),
    ...(readEnv(ENV.DOCKER_HOST) === undefined ? {} : { host: readEnv(ENV.DOCKER_HOST) ?? '' }),
  },
});
const verdict = judgeEbpf(facts, 'native');
const reason = verdict.available ? '' : ` (skipped: ${verdict.reason})`;
const abEbpf = verdict.available ? (await ensureEbpfTracer(engine)).path : undefined;
/** The full tier compares bpftrace too, where it can run. */
const bpftraceVerdict = judgeEbpf(facts, 'bpftrace');
const backends: EbpfBackend[] = FULL_TIER && bpftraceVerdict.available ? ['native', 'bpftrace'] : ['native'];
const starter: Task[] = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const suiteFamilies: Task[] = FULL_TIER
  ? await Promise.all((await discoverTasks('tasks/suite')).filter((dir) => dir.endsWith('-cln-0')).map((dir) => loadTask(dir)))
  : [];
const tasks = FULL_TIER ? [...starter, ...suiteFamilies] : starter.filter((t) => CI_TASKS.includes(t.id));

async function traceBoth(task: Task, backend: EbpfBackend): Promise<{ agreement: Agreement; ebpfUnparsed: string[]; lost: number; exitCode: number | null }> {
  if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
  const image = await buildTaskImage(engine, task);
  await using box = await openTaskSandbox(engine, task, image.tag, { pinCpu: 0 });
  await box.container.copyIn(dirname(task.files.solveSh), '/');
  const solve = `${CONTAINER_PATHS.solution}/solve.sh`;
  const trace = await startEbpfTrace({ containerId: box.container.id, cgroup2Mount: verdict.cgroup2Mount, backend, abEbpf });
  const run = await box.session.run({ cmd: ['bash', solve], mode: { kind: 'unenforced' }, timeoutMs: 300_000 });
  const ebpf = await trace.stop();
  // The launcher exec the session started for solve.sh roots the command's tree (strace's own events are above it).
  const own = commandEvents(ebpf.events, (e) => e.path === LAUNCHER_PATH && e.argv.includes(solve));
  return {
    agreement: compareTraces(run.events, own),
    ebpfUnparsed: own.filter((e) => e.kind === 'unparsed').map((e) => (e.kind === 'unparsed' ? `${e.reason}: ${e.raw}` : '')),
    lost: ebpf.lost,
    exitCode: run.exec.exitCode,
  };
}

describe(`eBPF tracer vs strace on the starter oracles (and the suite families, full tier)${reason}`, () => {
  it.skipIf(!verdict.available).each(backends.flatMap((b) => tasks.map((t) => [t.id, b, t] as const)))(
    '%s (%s): ≥ 99% of gold-relevant events agree',
    async (_id, backend, task) => {
      const r = await traceBoth(task, backend);
      const report = [
        `${task.id} (${backend}): agreement ${(r.agreement.rate * 100).toFixed(2)}% (${r.agreement.matched} matched; strace ${r.agreement.totalA}, ebpf ${r.agreement.totalB}; lost ${r.lost})`,
        ...r.agreement.differences.map((d) => `  strace ×${d.a} ebpf ×${d.b}  ${d.example}`),
        ...r.ebpfUnparsed.map((u) => `  ebpf unparsed: ${u}`),
      ].join('\n');
      console.log(report);
      expect(r.exitCode, report).toBe(0);
      expect(r.lost, report).toBe(0);
      // A non-trivial oracle: an empty trace on both sides would agree perfectly.
      expect(r.agreement.totalA, report).toBeGreaterThan(10);
      expect(r.agreement.rate, report).toBeGreaterThanOrEqual(MIN_AGREEMENT);
    },
    300_000,
  );

  it.skipIf(!verdict.available)(
    'native: an open through a symlink carries the same real_path as strace\'s (a directory link read through, a file link written)',
    async () => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      const task = starter.find((t) => t.id === 'log-triage');
      if (task === undefined) throw new Error('the starter task log-triage is missing');
      const image = await buildTaskImage(engine, task);
      await using box = await openTaskSandbox(engine, task, image.tag, { pinCpu: 0 });
      const script = [
        'mkdir -p /tmp/x /app/logs && echo data > /app/logs/app.log',
        'ln -s /app/logs /tmp/x/logs && cat /tmp/x/logs/app.log > /dev/null',
        'ln -s /app/logs/target.txt /tmp/x/out && echo hi > /tmp/x/out',
      ].join(' && ');
      const trace = await startEbpfTrace({ containerId: box.container.id, cgroup2Mount: verdict.cgroup2Mount, abEbpf });
      const run = await box.session.run({ cmd: ['sh', '-c', script], mode: { kind: 'unenforced' }, timeoutMs: 60_000 });
      const ebpf = await trace.stop();
      expect(run.exec.exitCode).toBe(0);
      expect(ebpf.lost).toBe(0);
      expect(ebpf.stderr).not.toContain('resolved paths are not recorded');
      const own = commandEvents(ebpf.events, (e) => e.path === LAUNCHER_PATH && e.argv.includes(script));
      const through = (events: readonly TraceEvent[]) =>
        events.flatMap((e) => (e.kind === 'file' && e.path.startsWith('/tmp/x/') && e.syscall.startsWith('open') ? [`${e.op} ${e.path} -> ${e.real_path ?? '(none)'} ${e.errno ?? 'ok'}`] : []));
      const expected = ['read /tmp/x/logs/app.log -> /app/logs/app.log ok', 'truncate /tmp/x/out -> /app/logs/target.txt ok'];
      expect(through(run.events)).toEqual(expected);
      expect(through(own)).toEqual(expected);
      // And every open both saw resolves alike (the loader's /lib -> /usr/lib ones included).
      const resolved = (events: readonly TraceEvent[]) =>
        events.flatMap((e) => (e.kind === 'file' && e.syscall.startsWith('open') && e.result !== -1 && e.real_path !== undefined ? [`${e.path} -> ${e.real_path}`] : [])).sort();
      expect(resolved(own)).toEqual(resolved(run.events));
    },
    180_000,
  );

  it.skipIf(!verdict.available)(
    'native: a path longer than bpftrace\'s 199 bytes comes through whole',
    async () => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      await using container = await engine.startContainer({ image: BASE_IMAGE_REF, network: 'none' });
      const dir = `/tmp/${'d'.repeat(150)}/${'e'.repeat(150)}`;
      const trace = await startEbpfTrace({ containerId: container.id, cgroup2Mount: verdict.cgroup2Mount, abEbpf });
      const run = await container.exec({ cmd: ['sh', '-c', `mkdir -p ${dir} && touch ${dir}/f`], timeoutMs: 30_000 });
      const result = await trace.stop();
      expect(run.exitCode).toBe(0);
      expect(result.lost).toBe(0);
      const paths = result.events.flatMap((e) => (e.kind === 'file' ? [e.path] : []));
      expect(paths).toContain(`${dir}/f`);
      expect(result.events.filter((e) => e.kind === 'unparsed' && e.reason.includes('cut'))).toEqual([]);
    },
    120_000,
  );

  // bpftrace (full tier: it takes ~20 s to attach) prints the same destination from its own program.
  it.skipIf(!verdict.available).each(backends)(
    '%s: a datagram sendmsg or sendmmsg addresses itself is a send to that destination (a connected socket\'s is none)',
    async (backend) => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      await using container = await engine.startContainer({ image: BASE_IMAGE_REF, network: 'none' });
      const script = [
        'import socket',
        's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
        's.sendmsg([b"canary"], [], 0, ("127.0.0.1", 9999))',
        'c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
        'c.connect(("127.0.0.2", 9998))',
        'c.sendmsg([b"canary"])',
        // A batch: two messages to two destinations in one sendmmsg.
        ...sendmmsgLines('s', 'b"canary"', [
          ['127.0.0.3', 9997],
          ['127.0.0.4', 9996],
        ]),
      ].join('\n');
      const trace = await startEbpfTrace({ containerId: container.id, cgroup2Mount: verdict.cgroup2Mount, backend, abEbpf });
      const run = await container.exec({ cmd: ['python3', '-c', script], timeoutMs: 30_000 });
      const result = await trace.stop();
      expect(run.stdout).toContain('batch-sent 2');
      expect(result.lost).toBe(0);
      const sends = result.events.flatMap((e) => (e.kind === 'network' && (e.op === 'sendto' || e.op === 'connect') ? [`${e.syscall} ${e.op} ${e.address}:${e.port}`] : []));
      expect(sends).toEqual(['sendmsg sendto 127.0.0.1:9999', 'connect connect 127.0.0.2:9998', 'sendmmsg sendto 127.0.0.3:9997', 'sendmmsg sendto 127.0.0.4:9996']);
    },
    120_000,
  );

  it.skipIf(!verdict.available).each(backends)(
    '%s: a fileless exec (memfd_create, then execveat of its fd) has the memfd as its path, as strace gives it',
    async (backend) => {
      if (!verdict.available || abEbpf === undefined) throw new Error('unreachable: skipped');
      await using container = await engine.startContainer({ image: BASE_IMAGE_REF, network: 'none' });
      // os.execve with an fd is fexecve: execveat(fd, "", AT_EMPTY_PATH).
      const script = ['import os', 'fd = os.memfd_create("payload", 0)', 'os.write(fd, open("/bin/true", "rb").read())', 'os.execve(fd, ["payload"], {})'].join('\n');
      const trace = await startEbpfTrace({ containerId: container.id, cgroup2Mount: verdict.cgroup2Mount, backend, abEbpf });
      const run = await container.exec({ cmd: ['python3', '-c', script], timeoutMs: 30_000 });
      const result = await trace.stop();
      expect(run.exitCode).toBe(0);
      expect(result.lost).toBe(0);
      expect(result.events).toContainEqual(expect.objectContaining({ kind: 'file', op: 'memfd', path: 'memfd:payload', result: expect.any(Number) }));
      expect(result.events).toContainEqual(expect.objectContaining({ kind: 'exec', syscall: 'execveat', path: '/memfd:payload', argv: ['payload'], result: 0 }));
    },
    120_000,
  );
});
