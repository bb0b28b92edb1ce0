/**
 * Overhead benchmark (`make bench`): what the sandbox costs per command.
 *   (a) launcher (Landlock + seccomp) vs bare exec, (b) the harness's strace
 *       (through its own loader) + launcher vs bare — timed inside one
 *       container with the harness mounted, pinned to a CPU, and traced again
 *       unpinned;
 *   (c) the per-command round trip from the host: SandboxSession.run of `true`
 *       under the launcher through the session's in-container agent, with and
 *       without strace, against a bare dockerode exec of `true` in the same
 *       run; beside them the host-side compile and the agent's filesystem
 *       listing;
 *   (d) eval's path (SandboxSession.run), traced ÷ untraced per workload, the
 *       session unpinned vs pinning command and tracer to a CPU (eval
 *       --cpu-pinning), and (e) synthetic rollouts/min at -n 1, 2 and 4,
 *       pinned vs not (scripts/bench/eval-path.ts);
 * then static-scoring throughput (scripts/bench-score.ts) and (f) scale-out: rollouts/min of one
 * job as one process, two shards and two engines (scripts/bench-scale.ts; needs root); and the
 * per-rollout phases ÷ the container floor of real scripted/oracle rollouts (scripts/bench/phases.ts), and real
 * rollouts/min at -n 1, 2, 4 with their ratio and the projected `make reproduce` (scripts/bench/concurrency.ts).
 * Prints ratios beside informational targets and always exits 0 unless
 * something broke: it is a benchmark, not a test.
 *
 *   npx node scripts/bench.ts [--reps N] [--quick] [--json] [--skip-score] [--skip-eval] [--skip-scale] [--skip-phases] [--skip-ebpf] [--skip-rates]
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AuthbenchError } from '../core/index.ts';
import { BASE_IMAGE_REF, connectDocker, ensureBaseImages, type Container, type DockerEngine } from '../docker/index.ts';
import type { EvalTracer } from '../evaluation/index.ts';
import { engineFacts, gatherEbpfFacts, judgeEbpf } from '../sandbox/ebpf/index.ts';
import { ensureHarness } from '../sandbox/launcher/index.ts';
import { measureWorkload, prepareBenchContainer, startHarnessContainer } from './bench/in-container.ts';
import { BENCH_REPORT_VERSION, BenchReportSchema, renderReport, type BenchReport, type WorkloadResult } from './bench/report.ts';
import { measureRoundTrips } from './bench/round-trip.ts';
import { measureEvalPath, measureRolloutRates } from './bench/eval-path.ts';
import { measurePhases, renderPhases } from './bench/phases.ts';
import { measureConcurrency, renderConcurrency, renderTracerComparison } from './bench/concurrency.ts';
import { MachineScalingProbe, renderMachineScaling } from './bench/machine-scaling.ts';
import { measureEbpfOverhead, renderEbpfBench, type EbpfBench } from './bench/ebpf.ts';
import { plan, type Plan } from './bench/plan.ts';
import type { Summary } from './bench/stats.ts';
import { WORKLOADS, gccDockerfile, type Variant } from './bench/workloads.ts';

const PINNED_CPU = '0';
const LABELS = { 'authbench.kind-detail': 'bench' } as const;
const USAGE = 'usage: npx node scripts/bench.ts [--reps N] [--quick] [--json] [--skip-score] [--skip-eval] [--skip-scale] [--skip-phases] [--skip-ebpf] [--skip-rates] [--rates-tracer strace|ebpf|both]';
/** The starter task whose oracle rollouts the phases section times, and how many (--quick: fewer). */
const PHASES_TASK = 'log-triage';
const PHASES_ROLLOUTS = { full: 20, quick: 6 } as const;
/** Real rollouts/min at -n 1, 2, 4 (scripts/bench/concurrency.ts): starter tasks, rollouts per job, rounds. */
const RATE_TASKS = ['log-triage', 'csv-sales-report', 'ini-config-repair'] as const;
const RATE_PLAN = { full: { perJob: 18, rounds: 3 }, quick: { perJob: 6, rounds: 1 } } as const;
/** Concurrencies (e) compares: -n 2 fills a 2-core machine, -n 4 oversubscribes it (slots share CPUs). */
const ROLLOUT_CONCURRENCIES = [1, 2, 4] as const;
/** The machine-alone loop beside the rates (scripts/bench/machine-scaling.ts): imports per process per round. */
const MACHINE_REPEATS = { full: 12, quick: 6 } as const;

const started = performance.now();
const progress = (line: string): void => {
  process.stderr.write(`bench [${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

async function gccImage(engine: DockerEngine): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'authbench-bench-'));
  try {
    await writeFile(join(dir, 'Dockerfile'), gccDockerfile(BASE_IMAGE_REF));
    const built = await engine.buildImage({ repository: 'authbench/bench-gcc', kind: 'builder-image', contextDir: dir });
    return built.tag;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new AuthbenchError('INTERNAL', `bench: no ${what}`);
  return value;
}

async function measureWorkloads(pinned: Container, unpinned: Container, p: Plan): Promise<WorkloadResult[]> {
  const out: WorkloadResult[] = [];
  const all: readonly Variant[] = ['bare', 'launcher', 'launcher+strace'];
  for (const w of WORKLOADS) {
    progress(`${w.label}: pinned to CPU ${PINNED_CPU}`);
    const a = await measureWorkload(pinned, w, all, p.pinned);
    progress(`${w.label}: unpinned`);
    const b = await measureWorkload(unpinned, w, ['bare', 'launcher+strace'], p.unpinned);
    const get = (s: Partial<Record<Variant, Summary>>, v: Variant): Summary => need(s[v], `${v} result for ${w.id}`);
    out.push({
      id: w.id,
      label: w.label,
      cmd: [...w.cmd],
      pinned: { bare: get(a, 'bare'), launcher: get(a, 'launcher'), 'launcher+strace': get(a, 'launcher+strace') },
      unpinned: { bare: get(b, 'bare'), 'launcher+strace': get(b, 'launcher+strace') },
      ...(w.tracedTarget === undefined ? {} : { traced_target: w.tracedTarget }),
    });
  }
  return out;
}

function runScoreBench(json: boolean): NonNullable<BenchReport['score']> {
  const script = fileURLToPath(new URL('./bench-score.ts', import.meta.url));
  if (!json) {
    process.stdout.write('\nstatic-scoring throughput (scripts/bench-score.ts)\n');
    const r = spawnSync(process.execPath, [script], { stdio: 'inherit' });
    return { exit_code: r.status, output: [] };
  }
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return { exit_code: r.status, output: r.stdout.split('\n').filter((l) => l !== '') };
}

/** (f): its own process (it starts a second dockerd and real evals); --quick and --json passed on. */
function runScaleBench(json: boolean, quick: boolean): unknown {
  const script = fileURLToPath(new URL('./bench-scale.ts', import.meta.url));
  const args = [script, ...(quick ? ['--quick'] : []), ...(json ? ['--json'] : [])];
  if (!json) {
    spawnSync(process.execPath, args, { stdio: 'inherit' });
    return undefined;
  }
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    return JSON.parse(r.stdout) as unknown;
  } catch {
    return { exit_code: r.status, output: r.stdout.split('\n').filter((l) => l !== '') };
  }
}

/** The rates section's tracers: `both` falls back to strace alone where eBPF is unavailable, and says why. */
async function tracersFor(engine: DockerEngine, choice: 'strace' | 'ebpf' | 'both'): Promise<EvalTracer[]> {
  if (choice !== 'both') return [choice];
  const verdict = judgeEbpf(await gatherEbpfFacts({ engine: await engineFacts(engine) }));
  if (verdict.available) return ['strace', 'ebpf'];
  process.stderr.write(`bench: rollouts/min under strace only: eBPF is unavailable here (${verdict.reason})\n`);
  return ['strace'];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      reps: { type: 'string', default: '15' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'skip-score': { type: 'boolean', default: false },
      'skip-eval': { type: 'boolean', default: false },
      'skip-scale': { type: 'boolean', default: false },
      'skip-phases': { type: 'boolean', default: false },
      'skip-ebpf': { type: 'boolean', default: false },
      'skip-rates': { type: 'boolean', default: false },
      'rates-tracer': { type: 'string', default: 'both' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n  --reps N      recorded runs per measurement (default 15)\n  --quick       CI-sized: 5 runs, fewer warm-ups\n  --json        machine-readable results on stdout\n  --skip-score  do not run scripts/bench-score.ts\n  --skip-eval   do not run (d) eval's path and (e) rollouts/min\n  --skip-scale  do not run (f) one shard vs two shards vs two engines (scripts/bench-scale.ts)\n  --skip-phases do not time real rollouts' phases against the container floor\n  --skip-ebpf   do not time the eBPF tracer beside strace (scripts/bench/ebpf.ts)\n  --skip-rates  do not time real rollouts/min at -n 1, 2, 4 and the projected make reproduce (scripts/bench/concurrency.ts), nor the machine alone at 1, 2, 4 python processes at once (scripts/bench/machine-scaling.ts)\n  --rates-tracer strace|ebpf|both  what traces those rollouts (eval --tracer); both (the default) runs each in every round, side by side, or strace alone where eBPF is unavailable (the reason is printed)\n`);
    return;
  }
  const reps = Number(values.reps);
  if (!Number.isInteger(reps) || reps < 1) throw new AuthbenchError('INVALID_ARGUMENT', `--reps must be a positive integer, got ${values.reps}`, { hint: USAGE });
  const ratesTracer = values['rates-tracer'];
  if (ratesTracer !== 'strace' && ratesTracer !== 'ebpf' && ratesTracer !== 'both') throw new AuthbenchError('INVALID_ARGUMENT', `--rates-tracer must be strace, ebpf or both, got ${ratesTracer}`, { hint: USAGE });
  const p = plan(reps, values.quick);
  const startLoad = loadavg();

  const engine = await connectDocker();
  progress('base image, gcc image and harness volume');
  await ensureBaseImages(engine, { onProgress: progress });
  const image = await gccImage(engine);
  await ensureHarness(engine, { onProgress: progress });

  const containers: Container[] = [];
  let report: BenchReport;
  let ebpf: EbpfBench | undefined;
  try {
    const pinned = await startHarnessContainer(engine, image, { network: 'none', cpusetCpus: PINNED_CPU, labels: LABELS });
    containers.push(pinned);
    const unpinned = await startHarnessContainer(engine, image, { network: 'none', labels: LABELS });
    containers.push(unpinned);
    await prepareBenchContainer(pinned);
    await prepareBenchContainer(unpinned);

    const workloads = await measureWorkloads(pinned, unpinned, p);
    // The eBPF tracer beside strace, traced ÷ untraced in the unpinned container (scripts/bench/ebpf.ts).
    ebpf = values['skip-ebpf'] ? undefined : await measureEbpfOverhead(unpinned, WORKLOADS.filter((w) => w.id !== 'true'), p.unpinned, progress);
    progress('host round trips');
    const rt = await measureRoundTrips(pinned, p.roundTrip, { pinCpu: Number(PINNED_CPU) });
    // The two bench containers stay idle from here on: (d) and (e) start their own, task-like.
    const evalWorkloads = WORKLOADS.filter((w) => w.id !== 'true');
    const evalPath = values['skip-eval'] ? undefined : await measureEvalPath(engine, image, evalWorkloads, p.evalPath, { pinCpu: Number(PINNED_CPU), labels: LABELS, onProgress: progress });
    const rolloutRates = values['skip-eval']
      ? undefined
      : await measureRolloutRates(engine, image, evalWorkloads, { concurrencies: ROLLOUT_CONCURRENCIES, count: p.rollouts, cpus: cpus().length, labels: LABELS, onProgress: progress });
    report = BenchReportSchema.parse({
      version: BENCH_REPORT_VERSION,
      config: {
        reps: p.pinned.reps,
        warmup: p.pinned.warmup,
        unpinned_reps: p.unpinned.reps,
        round_trip_reps: p.roundTrip.reps,
        cpuset: PINNED_CPU,
      },
      host: { cpus: cpus().length, loadavg: startLoad },
      workloads,
      round_trip: {
        raw_exec: rt.rawExec,
        container_exec: rt.containerExec,
        session_run: rt.session,
        session_run_traced: rt.sessionTraced,
        session_compile: rt.compile,
        session_listing: rt.listing,
        session_compile_after_listing: rt.compileAfterListing,
        session_patch_compile: rt.patchCompile,
        listing_entries: rt.listingEntries,
        docker_calls: { session_run: rt.dockerCalls.session, session_run_traced: rt.dockerCalls.traced },
        session_first_ms: rt.sessionFirstMs,
      },
      ...(evalPath === undefined ? {} : { eval_path: evalPath, eval_pin_cpu: Number(PINNED_CPU) }),
      ...(rolloutRates === undefined ? {} : { rollout_rates: rolloutRates }),
    } satisfies BenchReport);
  } finally {
    for (const c of containers) await c.remove();
  }

  const phases = values['skip-phases'] ? undefined : await measurePhases(engine, { task: PHASES_TASK, rollouts: values.quick ? PHASES_ROLLOUTS.quick : PHASES_ROLLOUTS.full, onProgress: progress });
  const rateTracers = values['skip-rates'] ? [] : await tracersFor(engine, ratesTracer);
  // Beside the rates, round by round: what the machine gives the same number of bare python processes at once.
  await using probe = values['skip-rates'] ? undefined : await MachineScalingProbe.start(engine, { most: Math.max(...ROLLOUT_CONCURRENCIES), repeats: values.quick ? MACHINE_REPEATS.quick : MACHINE_REPEATS.full, labels: LABELS });
  const rates = values['skip-rates']
    ? undefined
    : await measureConcurrency(engine, {
        tasks: RATE_TASKS,
        concurrencies: ROLLOUT_CONCURRENCIES,
        ...(values.quick ? RATE_PLAN.quick : RATE_PLAN.full),
        load: loadavg(),
        cpus: cpus().length,
        tracers: rateTracers,
        onProgress: progress,
        ...(probe === undefined
          ? {}
          : {
              beside: (round: number, n: number) => {
                progress(`machine alone: round ${round + 1}, ${n} at once`);
                return probe.measure(round, n);
              },
            }),
      });
  const machine = probe?.result();
  progress('done');
  if (!values.json) process.stdout.write(renderReport(report));
  if (!values.json && phases !== undefined) process.stdout.write(`\n${renderPhases(phases)}`);
  if (!values.json && rates !== undefined) process.stdout.write(`\n${rates.map(renderConcurrency).join('\n')}\n${renderTracerComparison(rates)}`);
  if (!values.json && machine !== undefined) {
    const scaling = (rates ?? []).flatMap((r) => r.rows.filter((row) => row.concurrency > 1).map((row) => ({ tracer: r.tracer ?? 'strace', concurrency: row.concurrency, ratio: row.ratio })));
    process.stdout.write(`\n${renderMachineScaling(machine, scaling)}`);
  }
  if (!values.json && ebpf !== undefined) process.stdout.write(renderEbpfBench(ebpf));
  const score = values['skip-score'] ? undefined : runScoreBench(values.json);
  const scale = values['skip-scale'] ? undefined : runScaleBench(values.json, values.quick);
  if (values.json) process.stdout.write(`${JSON.stringify({ ...report, ...(phases === undefined ? {} : { phases }), ...(rates === undefined ? {} : { rollout_concurrency: rates }), ...(machine === undefined ? {} : { machine_scaling: machine }), ...(ebpf === undefined ? {} : { ebpf }), ...(score === undefined ? {} : { score }), ...(scale === undefined ? {} : { scale }) }, null, 2)}\n`);
}

try {
  await main();
} catch (e) {
  const err = e instanceof AuthbenchError ? e : undefined;
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  for (const d of err?.details ?? []) process.stderr.write(`  ${d}\n`);
  if (err?.hint !== undefined) process.stderr.write(`  hint: ${err.hint}\n`);
  process.exitCode = 1;
}
