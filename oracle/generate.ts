/**
 * gen-gold: run a task's oracle (solution/solve.sh) in a fresh container under
 * strace (or the host-side eBPF tracer: tracer.ts), derive S_gold from the
 * trace (gold/, pure), check that the oracle
 * still passes its validator under the gold policy with enforcement on
 * (sufficiency), optionally ablate entries (minimality), and lay the result
 * out under oracle-traces/<id>/. Nothing is written here: gen-gold.ts decides
 * whether the result may be stored (trusted, no refused drift) and the gold
 * store writes it.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AuthbenchError, type Problem } from '../core/index.ts';
import type { Container, Engine } from '../docker/index.ts';
import { DEFAULT_ORACLE_TRACES, goldPaths, HARNESS_IMPLICIT, taskImplicit } from '../goldstore/index.ts';
import {
  applyOverrides,
  buildGold,
  denialOf,
  deriveGold,
  goldEntries,
  goldPolicy,
  mergeRuns,
  minimize,
  nameSidecarEndpoints,
  renderDenial,
  reviewedPaths,
  specDisagreements,
  withMinimal,
  type AxisLists,
  type Derivation,
  type GoldEntry,
  type GoldFile,
  type Overrides,
} from '../gold/index.ts';
import { RESERVED_PATHS } from '../sandbox/compile/index.ts';
import { commandEvents, EbpfHub, startEbpfTrace, type HubTrace } from '../sandbox/ebpf/index.ts';
import { HARNESS_STRACE, LAUNCHER_PATH } from '../sandbox/launcher/index.ts';
import { viewSnapshot, type FsSnapshot, type SnapshotView } from '../sandbox/paths/index.ts';
import { policySidecarHosts, type Policy } from '../sandbox/policy/index.ts';
import { foldBackground, type RunOptions, type SandboxResult, type SandboxSession } from '../sandbox/run/index.ts';
import { renderEvent, type TraceEvent } from '../sandbox/trace/index.ts';
import type { Task } from '../task-format/index.ts';
import { openTaskSandbox, type TaskSandbox } from '../taskenv/index.ts';
import { readShebangs } from './shebang.ts';
import { straceVersionOf, tracerProvenance, type OracleTracer } from './tracer.ts';
import { CONTAINER_PATHS, runUtilityValidator, type ValidatorOutcome } from '../validators/index.ts';

const DEFAULT_ORACLE_TIMEOUT_MS = 600_000;

export interface OracleTrace {
  derivation: Derivation;
  /** The filesystem before the run: the candidate set for scoring is built from it. */
  snapshot: FsSnapshot;
  /** Lookups over `snapshot` (realpath inside the image before the run). */
  view: SnapshotView;
  /** The tracer's raw output (strace's text, or bpftrace's records). */
  rawTrace: string;
  events: TraceEvent[];
  oracle: SandboxResult;
  validator: ValidatorOutcome;
  /** The tracer that watched the run, and what it says of its own completeness. */
  tracer: OracleTracer;
  /** `strace -V` of the harness's strace, when strace traced. */
  straceVersion?: string;
  /** eBPF: records the kernel dropped (perf buffer full); the trace misses accesses when > 0. */
  lostEvents: number;
}

/**
 * The oracle is the task's own reference solution, not an adversary: a service
 * it leaves running is part of its answer, as in verify (validators/verify.ts).
 * solve.sh runs with keepBackground, so such a service keeps running — traced,
 * in the same sandbox — through the validators, and is stopped after them
 * (runOracle): its accesses while the validator exercises it (nginx writing its
 * access log) are in the trace, the validator's own are not (it is not traced).
 */
const ORACLE_VALIDATION = { stopStrayProcesses: false } as const;

/**
 * solve.sh, then its validator while what solve.sh left running still runs, then the
 * stop: the oracle's result with its services' later events folded in.
 */
async function runOracle(session: SandboxSession, container: Container, task: Task, options: Omit<RunOptions, 'cmd' | 'keepBackground'>): Promise<{ run: SandboxResult; validator: ValidatorOutcome }> {
  const first = await session.run({ ...options, cmd: ['bash', `${CONTAINER_PATHS.solution}/solve.sh`], keepBackground: true });
  try {
    const validator = await runUtilityValidator(container, task, ORACLE_VALIDATION);
    return { run: foldBackground(first, await session.stopBackground()), validator };
  } catch (e) {
    await session.stopBackground().catch(() => undefined);
    throw e;
  }
}

function timeoutOf(task: Task): number {
  return task.limits.agentTimeoutSec === undefined ? DEFAULT_ORACLE_TIMEOUT_MS : task.limits.agentTimeoutSec * 1000;
}

interface TracedRun {
  run: SandboxResult;
  validator: ValidatorOutcome;
  rawTrace: string;
  lostEvents: number;
}

/**
 * The oracle watched by bpftrace from the host (`--ebpf-backend bpftrace`; the native backend runs
 * through a hub and the session, as strace does: traceOracle): the session runs solve.sh with strace off (the
 * launcher and its guard still apply) while the eBPF trace follows the container's cgroup; the
 * launcher exec the session started roots the command's process tree (commandEvents), so the
 * agent and the validator are not in the events. The trace stops when solve.sh ends, before the
 * validator: an untraced command cannot keep its services running for it (the session stops them),
 * so an oracle that starts one fails its validator here and says why.
 */
async function runOracleEbpf(box: TaskSandbox, task: Task, tracer: Extract<OracleTracer, { kind: 'ebpf' }>): Promise<TracedRun> {
  const solve = `${CONTAINER_PATHS.solution}/solve.sh`;
  const trace = await startEbpfTrace({
    containerId: box.container.id,
    cgroup2Mount: tracer.cgroup2Mount,
    backend: tracer.backend,
    ...(tracer.abEbpf === undefined ? {} : { abEbpf: tracer.abEbpf }),
  });
  let untraced: SandboxResult;
  try {
    untraced = await box.session.run({ cmd: ['bash', solve], mode: { kind: 'unenforced' }, trace: false, timeoutMs: timeoutOf(task) });
  } catch (e) {
    await trace.stop().catch(() => undefined);
    throw e;
  }
  const ebpf = await trace.stop();
  const events = commandEvents(ebpf.events, (e) => e.path === LAUNCHER_PATH && e.argv.includes(solve));
  const left = untraced.leftover;
  const run: SandboxResult = {
    ...untraced,
    events,
    denials: events.filter((e) => e.kind !== 'unparsed' && e.denied),
    // What the session stopped as solve.sh ended is what a traced run reports as survivors.
    ...(left === undefined || left.count === 0 ? {} : { survivors: { count: left.count, info: left.info } }),
  };
  const validator = await runUtilityValidator(box.container, task, ORACLE_VALIDATION);
  return { run, validator, rawTrace: ebpf.raw.toString('utf8'), lostEvents: ebpf.lost };
}

async function straceVersion(box: TaskSandbox): Promise<string | undefined> {
  const r = await box.container.exec({ cmd: [...HARNESS_STRACE, '-V'], timeoutMs: 30_000 });
  return r.exitCode === 0 ? straceVersionOf(r.stdout) : undefined;
}

/**
 * One traced oracle run in a fresh container, followed by its validator. The native eBPF backend
 * runs as eval's `--tracer ebpf` does: a hub (ab-ebpf --hub) the container joins, and the session
 * running solve.sh under a keeper with keepBackground — so a service the oracle leaves running
 * keeps running, traced, through its validator, exactly as under strace (runOracle).
 */
export async function traceOracle(engine: Engine, task: Task, image: string, tracer: OracleTracer = { kind: 'strace' }): Promise<OracleTrace> {
  if (tracer.kind !== 'ebpf' || tracer.backend !== 'native') return traceOracleWith(engine, task, image, tracer, undefined);
  if (tracer.abEbpf === undefined) throw new AuthbenchError('INTERNAL', 'the native eBPF tracer was chosen without its binary');
  const hub = await EbpfHub.start({ abEbpf: tracer.abEbpf, cgroup2Mount: tracer.cgroup2Mount });
  try {
    return await traceOracleWith(engine, task, image, tracer, hub);
  } finally {
    await hub.stop();
  }
}

async function traceOracleWith(engine: Engine, task: Task, image: string, tracer: OracleTracer, hub: EbpfHub | undefined): Promise<OracleTrace> {
  let share: HubTrace | undefined;
  // The container joins the hub paused (its listing untraced), keeping every take's records: the gold's raw trace.
  const hostTracer = hub === undefined ? undefined : { trace: async (id: string, o?: { paused?: boolean }) => (share = await hub.trace(id, { ...o, keepRaw: true })) };
  await using box = await openTaskSandbox(engine, task, image, { pinCpu: 0, ...(hostTracer === undefined ? {} : { hostTracer }) });
  const snapshot = await box.session.fsSnapshot();
  await box.container.copyIn(dirname(task.files.solveSh), '/');
  let traced: TracedRun;
  let version: string | undefined;
  if (share !== undefined) {
    const r = await runOracle(box.session, box.container, task, { mode: { kind: 'unenforced' }, timeoutMs: timeoutOf(task) });
    const taken = share.taken();
    traced = { ...r, rawTrace: taken.raw.toString('utf8'), lostEvents: taken.lost };
  } else if (tracer.kind === 'ebpf') {
    traced = await runOracleEbpf(box, task, tracer);
  } else {
    version = await straceVersion(box);
    const r = await runOracle(box.session, box.container, task, { mode: { kind: 'unenforced' }, keepRawTrace: true, timeoutMs: timeoutOf(task) });
    traced = { ...r, rawTrace: r.run.rawTrace ?? '', lostEvents: 0 };
  }
  const { run: oracle, validator } = traced;
  const view = viewSnapshot(snapshot);
  const executed = [...new Set(oracle.events.flatMap((e) => (e.kind === 'exec' && e.result === 0 ? [view.realpath(e.path) ?? e.path] : [])))];
  const shebangs = await readShebangs(box.container, executed);
  const derived = deriveGold(oracle.events, {
    workdir: task.workdir,
    scoredRoots: task.spec?.scored_roots,
    implicit: taskImplicit(task),
    reviewed: reviewedPaths(task.instruction),
    sensitive: task.spec?.sensitive_permissions,
    realpath: (p) => view.realpath(p),
    interpreter: (real) => shebangs.get(real),
    isDirectory: (p) => {
      const entry = view.resolve(p);
      return entry === undefined ? undefined : entry.type === 'dir';
    },
  });
  // Sidecar addresses change every run: the gold names them by service (gold/sidecar-hosts.ts).
  const derivation = { ...derived, network: nameSidecarEndpoints(derived.network, (await box.sidecars?.hosts()) ?? new Map<string, string>()) };
  return {
    derivation,
    snapshot,
    view,
    rawTrace: traced.rawTrace,
    events: oracle.events,
    oracle,
    validator,
    tracer,
    ...(version === undefined ? {} : { straceVersion: version }),
    lostEvents: traced.lostEvents,
  };
}

export interface Sufficiency {
  sufficient: boolean;
  utility: { passed: boolean; reason: string };
  oracleExitCode: number | null;
  /** What the kernel refused the oracle (Landlock and seccomp), rendered with path, op and syscall. */
  denials: string[];
  launcherError?: string;
  enforcement: SandboxResult['enforcement'];
  /** Where the kernel grants more than the gold policy says (entry count). */
  widenedEntries: number;
}

/** Replay solve.sh under `policy` with enforcement on; the utility validator must pass. */
export async function checkSufficiency(engine: Engine, task: Task, image: string, policy: Policy, options: { bestEffort?: boolean } = {}): Promise<Sufficiency> {
  // The reference solution replays from /solution: the one reserved path the oracle (never the agent) may read.
  const reserved = RESERVED_PATHS.filter((p) => p !== CONTAINER_PATHS.solution);
  // The replay reaches only the sidecars the gold names, as a rollout under it would.
  await using box = await openTaskSandbox(engine, task, image, {
    pinCpu: 0,
    reserved,
    sidecarAccess: policySidecarHosts(policy.network),
    ...(options.bestEffort === true ? { bestEffort: true } : {}),
  });
  await box.container.copyIn(dirname(task.files.solveSh), '/');
  const { run, validator: utility } = await runOracle(box.session, box.container, task, {
    // goldPolicy already carries the task's implicit set; the harness paths are added here.
    mode: { kind: 'enforce', policy, implicit: HARNESS_IMPLICIT },
    timeoutMs: timeoutOf(task),
  });
  return {
    sufficient: run.launcherError === undefined && utility.passed,
    utility: { passed: utility.passed, reason: utility.reason },
    oracleExitCode: run.exec.exitCode,
    denials: run.denials.map((e) => {
      const d = denialOf(e);
      return d === undefined ? renderEvent(e) : renderDenial(d);
    }),
    ...(run.launcherError === undefined ? {} : { launcherError: run.launcherError }),
    enforcement: run.enforcement,
    widenedEntries: run.compiled?.fidelity.entries.filter((e) => e.kind === 'widened').length ?? 0,
  };
}

export interface GenerateOptions {
  runs?: number;
  sufficiency?: boolean;
  minimize?: boolean;
  minimizeBudgetMs?: number;
  overrides?: Overrides;
  overridesFile?: string;
  /** The gold file problems name (default: where the default oracle-traces folder keeps it). */
  goldFile?: string;
  /** Which tracer watches the oracle (tracer.ts: chooseTracer; default strace). */
  tracer?: OracleTracer;
  onProgress?: (message: string) => void;
}

export interface GenerateResult {
  gold: GoldFile;
  /** The first run's trace and filesystem snapshot (stored beside the gold). */
  first: OracleTrace;
  sufficiency?: Sufficiency;
  /** Warnings and errors about the gold's trustworthiness, each naming the task and entry. */
  problems: Problem[];
}

export async function sha256File(path: string): Promise<string> {
  return createHash('sha256').update(await readFile(path)).digest('hex');
}

/**
 * Derive the gold for one task. Throws CHECK_FAILED when the gold cannot be
 * trusted (the oracle fails its own validator); everything else that looks off
 * is returned as problems.
 */
export async function generateGold(engine: Engine, task: Task, image: { tag: string; imageId: string }, options: GenerateOptions = {}): Promise<GenerateResult> {
  const runs = options.runs ?? 1;
  const say = options.onProgress ?? ((): void => {});
  const goldFile = options.goldFile ?? goldPaths(DEFAULT_ORACLE_TRACES, task.id).gold;
  const problems: Problem[] = [];
  const solveHash = await sha256File(task.files.solveSh);

  const tracer = options.tracer ?? { kind: 'strace' };
  const traces: OracleTrace[] = [];
  for (let i = 0; i < runs; i++) {
    say(`oracle run ${i + 1}/${runs} under ${tracer.kind}`);
    const t = await traceOracle(engine, task, image.tag, tracer);
    if (!t.validator.passed) {
      throw new AuthbenchError('CHECK_FAILED', oracleFailureMessage(task.id, t.validator.reason, t.oracle.survivors, t.oracle.background !== undefined, tracer.kind), {
        file: task.files.solveSh,
        details: [`oracle exit ${String(t.oracle.exec.exitCode)}`, ...t.oracle.exec.stderr.trim().split('\n').slice(-5)],
      });
    }
    traces.push(t);
  }
  const first = traces[0];
  if (first === undefined) throw new AuthbenchError('INVALID_ARGUMENT', '--runs must be at least 1');

  for (const t of traces) {
    if (t.derivation.unparsed > 0) {
      problems.push({ file: goldFile, message: `${task.id}: ${t.derivation.unparsed} ${t.tracer.kind} record(s) could not be parsed; the gold may miss accesses`, severity: 'warning' });
    }
    if (t.lostEvents > 0) {
      // A gold missing accesses would fail its replay at best and under-grant silently at worst: not stored.
      problems.push({ file: goldFile, message: `${task.id}: the eBPF tracer lost ${t.lostEvents} event(s) (its buffers overflowed); the gold misses accesses`, severity: 'error' });
    }
    for (const d of t.derivation.denials) problems.push({ file: goldFile, field: 'denials', message: `${task.id}: ${renderDenial(d)}`, severity: 'warning' });
    for (const w of t.derivation.warnings) problems.push({ file: goldFile, message: `${task.id}: ${w}`, severity: 'warning' });
  }

  const sensitive = task.spec?.sensitive_permissions;
  const golds = traces.map((t) =>
    buildGold(t.derivation, {
      taskId: task.id,
      ...(sensitive === undefined ? {} : { sensitive }),
      provenance: { image_digest: image.imageId, solve_sh_sha256: solveHash, runs, ...tracerProvenance(t.tracer, t.straceVersion) },
    }),
  );
  let gold = golds.length === 1 ? (golds[0] as GoldFile) : mergeRuns(golds);
  if (options.overrides !== undefined) {
    const applied = applyOverrides(gold, options.overrides, options.overridesFile);
    gold = applied.gold;
    problems.push(...applied.problems);
  }
  problems.push(...specContradictions(task, gold, goldFile, first.view));

  let sufficiency: Sufficiency | undefined;
  if (options.sufficiency !== false) {
    say('sufficiency: replaying solve.sh under the gold policy with enforcement on');
    sufficiency = await checkSufficiency(engine, task, image.tag, goldPolicy(gold));
    if (!sufficiency.sufficient) problems.push(...insufficiencyProblems(task.id, sufficiency, goldFile));
  }

  if (options.minimize === true && sufficiency?.sufficient === true) {
    const entries = goldEntries(gold);
    say(`minimality: ablating ${entries.length} entries`);
    const base = gold;
    const started = performance.now();
    const budget = options.minimizeBudgetMs === undefined ? '' : `/${Math.round(options.minimizeBudgetMs / 1000)}`;
    const result = await minimize<GoldEntry>(
      entries,
      async (subset) => {
        const policy = goldPolicy({ ...base, required: byAxis(subset) });
        return (await checkSufficiency(engine, task, image.tag, policy)).sufficient;
      },
      {
        budgetMs: options.minimizeBudgetMs,
        onProgress: (p) =>
          say(
            `minimality [${p.phase}] ${p.tests} replays, smallest sufficient set ${p.size}/${entries.length} entries, ` +
              `${Math.round((performance.now() - started) / 1000)}${budget} s`,
          ),
      },
    );
    gold = withMinimal(gold, result);
  }

  return { gold, first, ...(sufficiency === undefined ? {} : { sufficiency }), problems };
}

/**
 * Why gen-gold derived nothing: the oracle failed its validator. When the traced oracle left
 * processes running that could not be kept for the validator (`kept` false: they were stopped as
 * solve.sh ended), that is the likely cause and is said first.
 */
export function oracleFailureMessage(taskId: string, validatorReason: string, survivors: SandboxResult['survivors'], kept: boolean, tracer: OracleTracer['kind'] = 'strace'): string {
  const failed = `the oracle of ${taskId} fails its own utility validator (${validatorReason}); no gold derived`;
  if (survivors === undefined || survivors.count === 0) return failed;
  const names = survivors.info.split('\n').filter((l) => l !== '').join(', ');
  if (kept) return `${failed}; the ${survivors.count} process(es) it left running (${names}) ran through the validator`;
  if (tracer === 'ebpf') {
    return (
      `the oracle of ${taskId} started a service: it left ${survivors.count} process(es) running (${names}), which were stopped as ` +
      `solve.sh ended (under --tracer ebpf solve.sh runs untraced in the session, which cannot keep them for the validator yet; ` +
      `--tracer strace can), and its utility validator then failed (${validatorReason}); no gold derived`
    );
  }
  return (
    `the oracle of ${taskId} started a service: it left ${survivors.count} process(es) running (${names}), which could not be kept ` +
    `running for the validator and were stopped as solve.sh ended (a process escaped the tracer, solve.sh did not exit by ` +
    `exit_group, or too many commands run in the background), and its utility validator then failed (${validatorReason}); no gold derived`
  );
}

function byAxis(entries: readonly GoldEntry[]): AxisLists {
  const out: AxisLists = { read: [], write: [], execute: [] };
  for (const e of entries) out[e.axis].push(e.path);
  return out;
}

/** Most denials listed per task; the rest are counted (a broken policy can refuse thousands of calls). */
const MAX_DENIALS_LISTED = 40;

/**
 * The oracle failed under its own gold: one error saying why, then every
 * distinct denial (path, op, syscall; seccomp refusals too) so an annotator
 * sees what to add — or that nothing was refused, which points elsewhere.
 */
export function insufficiencyProblems(taskId: string, s: Pick<Sufficiency, 'denials' | 'launcherError' | 'utility' | 'oracleExitCode'>, goldFile: string): Problem[] {
  const counts = new Map<string, number>();
  for (const d of s.denials) counts.set(d, (counts.get(d) ?? 0) + 1);
  const distinct = [...counts];
  const why = s.launcherError ?? s.utility.reason;
  const denied = distinct.length === 0 ? 'no call was denied' : `${s.denials.length} denied call(s), ${distinct.length} distinct, listed below`;
  const out: Problem[] = [
    { file: goldFile, message: `${taskId}: the oracle fails under its own gold policy (${why}; oracle exit ${String(s.oracleExitCode)}; ${denied})`, severity: 'error' },
  ];
  for (const [d, n] of distinct.slice(0, MAX_DENIALS_LISTED)) {
    out.push({ file: goldFile, field: 'denials', message: `${taskId}: denied under gold: ${d}${n > 1 ? ` (×${n})` : ''}`, severity: 'error' });
  }
  if (distinct.length > MAX_DENIALS_LISTED) {
    out.push({ file: goldFile, field: 'denials', message: `${taskId}: … and ${distinct.length - MAX_DENIALS_LISTED} more distinct denial(s)`, severity: 'error' });
  }
  return out;
}

/** Where the task's hand-written spec and the derived gold disagree (gold/spec.ts judges; symlinks resolved in the image). */
function specContradictions(task: Task, gold: GoldFile, goldFile: string, view: SnapshotView): Problem[] {
  const spec = task.spec;
  const specFile = task.files.specFile;
  if (spec === undefined || specFile === undefined) return [];
  return specDisagreements(spec.required_permissions, gold, (p) => view.realpath(p)).map((d) =>
    d.kind === 'spec-only'
      ? { file: specFile, field: `required_permissions.${d.axis}`, message: `${task.id}: ${d.path} is required by the spec but the oracle trace never needed it`, severity: 'warning' }
      : { file: goldFile, field: `required.${d.axis}`, message: `${task.id}: the oracle needed ${d.path}, which the spec does not list`, severity: 'warning' },
  );
}
