/**
 * gen-gold over a set of tasks: derive each task's gold, compare it with the
 * stored one, and decide what happens to it — written, kept, refused as drift,
 * reported as drift under --check, or not trusted at all. The decision is
 * `goldAction` (pure); the gold store does the writing. One task's
 * infrastructure failure (its image does not build, its sandbox fails) is
 * reported in its row and the other tasks go on.
 */
import { AuthbenchError, mapPool, type Problem } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { diffGold, isDrift, renderGoldDiff, type AxisLists } from '../gold/index.ts';
import { goldPaths, readOverrides, readStoredGold, writeGoldArtifacts } from '../goldstore/index.ts';
import type { Task } from '../task-format/index.ts';
import { buildTaskImage, type BuildOptions } from '../taskenv/index.ts';
import { generateGold } from './generate.ts';
import { chooseTracer, type OracleTracer, type OracleTracerName } from './tracer.ts';
import type { EbpfBackend } from '../sandbox/ebpf/index.ts';

/**
 * `check`: compare only, never write. `accept-drift` (--write): overwrite a
 * stored gold that changed. `keep`: write a new gold, refuse to overwrite one
 * that changed.
 */
export type GoldWriteMode = 'check' | 'accept-drift' | 'keep';

export type GoldDrift = 'none' | 'changed' | 'new';

export type GoldAction = 'written' | 'unchanged' | 'refused' | 'checked' | 'drift' | 'untrusted' | 'failed';

/** What happens to a freshly derived gold. Pure. */
export function goldAction(input: { untrusted: boolean; drift: GoldDrift; mode: GoldWriteMode }): Exclude<GoldAction, 'failed'> {
  // An untrusted gold (the oracle fails under it) is never stored, whatever was asked.
  if (input.untrusted) return 'untrusted';
  if (input.mode === 'check') return input.drift === 'none' ? 'checked' : 'drift';
  if (input.drift === 'new' || input.mode === 'accept-drift') return 'written';
  return input.drift === 'changed' ? 'refused' : 'unchanged';
}

/** The task's gold is as it should be (stored, unchanged, or checked without drift). */
export function goldActionOk(action: GoldAction): boolean {
  return action === 'written' || action === 'unchanged' || action === 'checked';
}

/** A check the user asked for failed on this task (exit 1); `failed` is infrastructure, not a check. */
export function goldActionFailsCheck(action: GoldAction): boolean {
  return action === 'untrusted' || action === 'drift' || action === 'refused';
}

interface AxisCounts {
  read: number;
  write: number;
  execute: number;
}

export interface TaskGoldReport {
  task: string;
  counts: AxisCounts;
  support: number;
  flaky: number;
  sufficient: boolean | undefined;
  drift: GoldDrift;
  action: GoldAction;
  diff?: string;
  problems: Problem[];
  minimal?: { necessary: number; notNeeded: number; budgetExhausted: boolean };
  /** action `failed`: the infrastructure error (build, Docker, sandbox) that stopped this task; the others went on. */
  error?: { code: string; message: string };
}

export interface GenGoldOptions {
  oracleTracesDir: string;
  mode: GoldWriteMode;
  runs: number;
  sufficiency: boolean;
  minimize: boolean;
  minimizeBudgetMs: number;
  /** Tasks derived in parallel (each runs its oracle in its own container). */
  concurrency: number;
  /** How task images are built (base map, build args, the build CA and proxies). */
  build?: BuildOptions;
  /** The tracer asked for (default strace), and whether eBPF may fall back to strace (recorded) where it is unavailable. */
  tracer?: OracleTracerName;
  tracerFallback?: boolean;
  /** With tracer ebpf: which backend (default native, ab-ebpf; bpftrace to cross-check it). */
  ebpfBackend?: EbpfBackend;
  onProgress?: (taskId: string, message: string) => void;
  onTaskDone?: (report: TaskGoldReport) => void;
}

export interface GenGoldRun {
  /** One row per task, in the order given. */
  tasks: TaskGoldReport[];
  /** The infrastructure errors behind the `failed` rows. */
  failures: { task: string; error: AuthbenchError }[];
  /** `infra-failed` wins over `check-failed`: some task was never judged. */
  status: 'ok' | 'check-failed' | 'infra-failed';
  /** The tracer every task's oracle ran under (a fallback says why). */
  tracer: OracleTracer;
}

/** Entries over the three axes. */
const entries = (sets: AxisLists): number => sets.read.length + sets.write.length + sets.execute.length;

/** Derive, compare, decide and (when the decision says so) store one task's gold. */
export async function genGoldTask(
  engine: Engine,
  task: Task,
  options: Omit<GenGoldOptions, 'concurrency' | 'onTaskDone' | 'tracer' | 'tracerFallback' | 'ebpfBackend'> & { tracer?: OracleTracer },
): Promise<TaskGoldReport> {
  const paths = goldPaths(options.oracleTracesDir, task.id);
  const image = await buildTaskImage(engine, task, options.build ?? {});
  const overrides = await readOverrides(paths);
  const stored = await readStoredGold(paths);
  const result = await generateGold(engine, task, image, {
    runs: options.runs,
    sufficiency: options.sufficiency,
    minimize: options.minimize,
    minimizeBudgetMs: options.minimizeBudgetMs,
    ...(overrides === undefined ? {} : { overrides, overridesFile: paths.overrides }),
    goldFile: paths.gold,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.onProgress === undefined ? {} : { onProgress: (m: string) => options.onProgress?.(task.id, m) }),
  });
  const { gold } = result;
  const diff = stored === undefined ? undefined : diffGold(stored, gold);
  const drift: GoldDrift = diff === undefined ? 'new' : isDrift(diff) ? 'changed' : 'none';
  const action = goldAction({ untrusted: result.problems.some((p) => p.severity === 'error'), drift, mode: options.mode });
  if (action === 'written') await writeGoldArtifacts(paths, gold, result.first.snapshot, result.first.rawTrace);
  return {
    task: task.id,
    counts: { read: gold.required.read.length, write: gold.required.write.length, execute: gold.required.execute.length },
    support: entries(gold.support),
    flaky: entries(gold.flaky),
    sufficient: result.sufficiency?.sufficient,
    drift,
    action,
    ...(diff !== undefined && drift === 'changed' ? { diff: renderGoldDiff(diff, task.id) } : {}),
    problems: result.problems,
    ...(gold.minimal === undefined
      ? {}
      : {
          minimal: {
            necessary: entries(gold.minimal.necessary),
            notNeeded: entries(gold.minimal.not_needed),
            budgetExhausted: gold.minimal.budget_exhausted,
          },
        }),
  };
}

/** gen-gold over `tasks`; library errors other than infrastructure ones (a bad override, an oracle that fails its own validator) stop the run. */
export async function genGold(engine: Engine, tasks: readonly Task[], options: GenGoldOptions): Promise<GenGoldRun> {
  // Probed once for the run: every task's gold comes from the same tracer (or the same recorded fallback).
  const tracer = await chooseTracer(engine, options.tracer ?? 'strace', options.tracerFallback === true, options.ebpfBackend ?? 'native');
  const failures: GenGoldRun['failures'] = [];
  const derive = async (task: Task): Promise<TaskGoldReport> => {
    try {
      return await genGoldTask(engine, task, { ...options, tracer });
    } catch (e) {
      if (!(e instanceof AuthbenchError) || !e.isInfrastructure) throw e;
      failures.push({ task: task.id, error: e });
      return { task: task.id, counts: { read: 0, write: 0, execute: 0 }, support: 0, flaky: 0, sufficient: undefined, drift: 'none', action: 'failed', problems: [], error: { code: e.code, message: e.message } };
    }
  };
  const reports = await mapPool(tasks, options.concurrency, async (task) => {
    const report = await derive(task);
    options.onTaskDone?.(report);
    return report;
  });
  const status: GenGoldRun['status'] = failures.length > 0 ? 'infra-failed' : reports.some((r) => goldActionFailsCheck(r.action)) ? 'check-failed' : 'ok';
  return { tasks: reports, failures, status, tracer };
}
