/**
 * Counterfactual runs: what a command a defense stopped (blocked or held) would have done, so
 * the stop can be judged — a stopped command whose effects the ledger authorizes was a false
 * positive. When a model turn that stopped a command ends (before the next model call), the
 * rollout's container is committed (taskenv/copy.ts); after the episode, each stopped command
 * runs in its own fresh container of its turn's copy (no network, no sidecars), traced and
 * enforced under the ledger, with the timeout it would have had, and that container is removed;
 * the copies go when the runs are done (or the rollout ends otherwise).
 *
 * Why a commit per turn and not one at the episode's end: the end state holds what the agent did
 * after the stop (it may have done the work another way, or removed what the command needed), and
 * a commit is cheap (about 60–80 ms for a task container on the 2-core CI machine, measured by
 * test/docker/counterfactual.test.ts; the container is paused meanwhile). Turns that stopped
 * nothing cost nothing. The runs wait until after the episode so the agent's clock never pays
 * for them. A turn with several calls is copied at its end: a stopped call sees what its
 * later siblings in the same turn did.
 *
 * What never happens: the agent never sees a counterfactual (its observation said "blocked"),
 * the real container is never changed (a commit only reads it), and a copy's effects are never
 * the rollout's — measurement judges them for the false-positive rates only (containment/walk.ts
 * adds no commit, process or taint for them). Failures of a copy are recorded on the proposal
 * (`error`) and leave it unjudged; they never fail the rollout.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Engine, Container } from '../docker/index.ts';
import {
  commandTimeout,
  EPISODE_DEFAULTS,
  materializeArgv,
  shellArgv,
  ConfirmingShellArgsSchema,
  writeSubtreeRoots,
  type Counterfactual,
  type Episode,
  type Proposal,
  type ShellArgs,
  type Step,
} from '../agent/index.ts';
import { attemptedEffects, judgeAttempted, type Effect } from '../containment/index.ts';
import { taskImplicit } from '../goldstore/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import type { EbpfHub } from '../sandbox/ebpf/index.ts';
import type { Task } from '../task-format/index.ts';
import { commitTaskContainer, guardTaskStorage, openCopySandbox, type ContainerCopy } from '../taskenv/index.ts';

/** Wall time all of a rollout's counterfactual commands may take together; each gets at most what is left. */
export const COUNTERFACTUAL_BUDGET_MS = 300_000;

/** Where a proposal is in an episode. */
export interface ProposalAt {
  step: number;
  index: number;
}

export interface StoppedProposal extends ProposalAt {
  args: ShellArgs;
}

/** The valid shell proposals of one step a defense blocked or held (never run), in order. Pure. */
export function stoppedIn(step: Pick<Step, 'proposals'>, stepIndex: number): StoppedProposal[] {
  const out: StoppedProposal[] = [];
  for (const [index, p] of step.proposals.entries()) {
    if (!p.valid || p.decision === undefined || p.decision.action === 'allow' || p.result !== undefined) continue;
    const args = ConfirmingShellArgsSchema.safeParse(p.args);
    if (args.success) out.push({ step: stepIndex, index, args: args.data });
  }
  return out;
}

/** One line per effect, for the record. Pure. */
export function describeEffect(effect: Effect): string {
  return effect.kind === 'network' ? `${effect.op} ${effect.address}:${effect.port ?? '?'}` : `${effect.op} ${effect.path}${effect.path2 === undefined ? '' : ` → ${effect.path2}`}`;
}

/** A command that gave no verdict. Pure. */
export function failedCounterfactual(error: string, at: { timeoutMs: number; snapshotMs: number }, durationMs = 0): Counterfactual {
  const timeoutMs = at.timeoutMs;
  return {
    state: 'turn_end',
    snapshot_ms: at.snapshotMs,
    policy: 'ledger',
    exit_code: null,
    timed_out: false,
    timeout_ms: Math.max(1, Math.round(timeoutMs)),
    duration_ms: durationMs,
    events: [],
    authorized: null,
    attempted_effects: 0,
    unauthorized: [],
    error,
  };
}

/** The episode with each counterfactual on its proposal. Pure. */
export function attachCounterfactuals(episode: Episode, runs: ReadonlyMap<string, Counterfactual>): Episode {
  if (runs.size === 0) return episode;
  return {
    ...episode,
    steps: episode.steps.map((s, step) => ({
      ...s,
      proposals: s.proposals.map((p, index): Proposal => {
        const cf = runs.get(proposalKey({ step, index }));
        return cf === undefined ? p : { ...p, counterfactual: cf };
      }),
    })),
  };
}

export function proposalKey(at: ProposalAt): string {
  return `${at.step}:${at.index}`;
}

export interface RecorderOptions {
  engine: Engine;
  /** The rollout's container. */
  container: Container;
  task: Task;
  /** Stopped proposals copied per rollout, at most (0: none). */
  max: number;
  runId?: string;
  /** `eval --tracer ebpf`: the job's hub, which each copy joins so its run is traced as the rollout's were. */
  hostTracer?: EbpfHub;
  /**
   * Where this container's episode starts in the rollout's record: episode 2 of a two-episode memory
   * rollout (evaluation/episodes.ts) has its own container and recorder, and its steps follow episode 1's.
   */
  stepOffset?: number;
}

export interface CounterfactualRuns {
  /** By proposalKey. */
  runs: Map<string, Counterfactual>;
  /** The runs after the episode (the commits are the episode's). */
  totalMs: number;
}

interface Snapshot {
  stopped: StoppedProposal[];
  copy?: ContainerCopy;
  error?: string;
  ms: number;
}

/**
 * Copies the rollout's container at each turn that stopped a command (`afterStep`, the episode's
 * onStep), then runs the stopped commands in them (`run`). Dispose removes every copy left.
 */
export class CounterfactualRecorder implements AsyncDisposable {
  private readonly options: RecorderOptions;
  private readonly snapshots: Snapshot[] = [];
  private steps = 0;
  private copied = 0;

  constructor(options: RecorderOptions) {
    this.options = options;
    this.steps = options.stepOffset ?? 0;
  }

  /** Stopped proposals copied so far. */
  get pending(): number {
    return this.copied;
  }

  /** After each model turn, in order: a turn that stopped a command gets the container committed as it is now. */
  async afterStep(step: Pick<Step, 'proposals'>): Promise<void> {
    const stepIndex = this.steps++;
    const stopped = stoppedIn(step, stepIndex).slice(0, Math.max(0, this.options.max - this.copied));
    if (stopped.length === 0) return;
    this.copied += stopped.length;
    const started = performance.now();
    try {
      const copy = await commitTaskContainer(this.options.engine, this.options.container, this.options.task, this.options.runId);
      this.snapshots.push({ stopped, copy, ms: performance.now() - started });
    } catch (e) {
      if (!(e instanceof AuthbenchError)) throw e;
      this.snapshots.push({ stopped, error: `the rollout's container could not be copied: ${message(e)}`, ms: performance.now() - started });
    }
  }

  /** Each stopped command in its turn's copy, judged against the ledger; each copy removed once its commands ran. */
  async run(ledger: Policy, scratchRoots: readonly string[], budgetMs = COUNTERFACTUAL_BUDGET_MS): Promise<CounterfactualRuns> {
    const started = performance.now();
    const deadline = started + budgetMs;
    const runs = new Map<string, Counterfactual>();
    while (this.snapshots.length > 0) {
      const snapshot = this.snapshots.shift();
      if (snapshot === undefined) break;
      try {
        for (const s of snapshot.stopped) {
          const remaining = deadline - performance.now();
          const timeoutMs = commandTimeout(s.args, EPISODE_DEFAULTS, Math.max(1, remaining));
          const at = { timeoutMs, snapshotMs: snapshot.ms };
          const cf =
            snapshot.copy === undefined
              ? failedCounterfactual(snapshot.error ?? 'no copy', at)
              : remaining <= 0
                ? failedCounterfactual('the counterfactual time budget was spent', at)
                : await runOne({ ...this.options, ledger, scratchRoots }, snapshot.copy.image, s.args, at);
          runs.set(proposalKey(s), cf);
        }
      } finally {
        await snapshot.copy?.[Symbol.asyncDispose]().catch(() => undefined);
      }
    }
    return { runs, totalMs: performance.now() - started };
  }

  /** The runs of several recorders (one per episode container), in order, sharing one time budget. */
  static async runAll(recorders: readonly (CounterfactualRecorder | undefined)[], ledger: Policy, scratchRoots: readonly string[], budgetMs = COUNTERFACTUAL_BUDGET_MS): Promise<CounterfactualRuns> {
    const runs = new Map<string, Counterfactual>();
    let totalMs = 0;
    for (const r of recorders) {
      if (r === undefined || r.pending === 0) continue;
      const done = await r.run(ledger, scratchRoots, budgetMs - totalMs);
      for (const [k, v] of done.runs) runs.set(k, v);
      totalMs += done.totalMs;
    }
    return { runs, totalMs };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const left = this.snapshots.splice(0);
    for (const s of left) await s.copy?.[Symbol.asyncDispose]().catch(() => undefined);
  }
}

interface RunInput extends RecorderOptions {
  ledger: Policy;
  scratchRoots: readonly string[];
}

async function runOne(input: RunInput, image: string, args: ShellArgs, at: { timeoutMs: number; snapshotMs: number }): Promise<Counterfactual> {
  const timeoutMs = at.timeoutMs;
  const started = performance.now();
  const implicit = taskImplicit(input.task);
  try {
    await using box = await openCopySandbox(input.engine, input.task, image, input.runId, input.hostTracer);
    // The stopped command may be the one that fills the disk: the copy has the task's storage limit too.
    await using storage = await guardTaskStorage(box, input.task);
    // As the episode's setup: missing write-subtree bases made first, so grants are not widened to their parents.
    const roots = writeSubtreeRoots(input.ledger, implicit);
    if (roots.length > 0) await box.session.run({ cmd: materializeArgv(roots), mode: { kind: 'unenforced' }, trace: false, timeoutMs: 30_000 });
    const run = await box.session.run({ cmd: shellArgv(args), mode: { kind: 'enforce', policy: input.ledger, implicit }, trace: true, timeoutMs, outputCapBytes: 64 * 1024 });
    await storage.stop();
    const durationMs = performance.now() - started;
    if (run.launcherError !== undefined) return { ...failedCounterfactual(`the launcher refused it: ${run.launcherError}`, at, durationMs), launcher_error: run.launcherError };
    const attempted = attemptedEffects(run.events, input.scratchRoots);
    const judged = judgeAttempted(attempted, input.ledger, input.scratchRoots);
    return {
      state: 'turn_end',
      snapshot_ms: at.snapshotMs,
      policy: 'ledger',
      exit_code: run.exec.timedOut ? null : run.exec.exitCode,
      timed_out: run.exec.timedOut && run.cut !== true,
      ...(run.cut === true ? { storage_cut: true as const } : {}),
      timeout_ms: timeoutMs,
      duration_ms: durationMs,
      events: run.events,
      authorized: judged.authorized,
      attempted_effects: attempted.length,
      unauthorized: judged.unauthorized.map(describeEffect),
    };
  } catch (e) {
    // The infrastructure's (Docker, the copy's sandbox, a command that broke it): recorded, the rollout goes on. Anything else is a bug.
    const cause = primary(e);
    if (!(cause instanceof AuthbenchError)) throw e;
    return failedCounterfactual(`the copy failed: ${message(cause)}`, at, performance.now() - started);
  }
}

/** The body's error under what a failed disposal added (`await using`). */
function primary(e: unknown): unknown {
  let inner = e;
  while (inner instanceof SuppressedError) inner = inner.suppressed;
  return inner;
}

function message(e: unknown): string {
  return e instanceof AuthbenchError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}
