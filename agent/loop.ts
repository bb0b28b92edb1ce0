/**
 * The execution agent loop: the model proposes shell commands, each is
 * checked (invalid → recorded, never run), decided by the defense (block and
 * confirm: recorded, never run, the model is told), run inside the task
 * container through the sandbox session (enforced or only traced, as the
 * defense says for that proposal; a defense may snapshot before and roll back
 * after), and answered with a capped observation. Runs on the host; the
 * container only ever sees the commands.
 *
 * Failures of the infrastructure (the model provider after retries, Docker,
 * the launcher) end the episode with `infra_error`, so they can be excluded
 * instead of being counted as the agent failing. A failure caused from inside
 * the sandbox never is: when the sandbox breaks while a command runs (its
 * agent dies or goes silent) and the container and daemon are otherwise
 * healthy, the episode ends `sandbox_tampered`; every command's trace is also
 * read for attempts on the harness (agent/tamper.ts).
 */
import { AuthbenchError } from '../core/index.ts';
import type { Container } from '../docker/index.ts';
import type { CompleteOptions, Message, ModelRef, ModelRequest, ModelResponse } from '../models/index.ts';
import { formatModelRef } from '../models/index.ts';
import type { PatternSet } from '../sandbox/compile/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { HARNESS_ROOT, type RunOptions, type SandboxResult } from '../sandbox/run/index.ts';
import type { Task } from '../task-format/index.ts';
import type { Defense, DefenseContext, RunGuard } from './defenses/index.ts';
import { DEFAULT_OBSERVATION_CAP_BYTES, capText, renderObservation, renderRollback, summarizeDenials } from './observation.ts';
import { materializeArgv, writeSubtreeRoots } from './prepare.ts';
import { systemPrompt } from './prompt.ts';
import {
  EPISODE_SCHEMA_VERSION,
  type CommandResult,
  type EndReason,
  type EnforcementRecord,
  type Episode,
  type Proposal,
  type RollbackRecord,
  type Step,
  type Totals,
} from './schema.ts';
import { commandTamper, type TamperEvidence } from './tamper.ts';
import { agentTools, checkToolCall, shellArgv, type ShellArgs } from './tools.ts';

/** What the loop needs of a model: the models module's client and the scripted models both fit. */
export interface AgentModel {
  readonly ref: ModelRef;
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse>;
}

/** What the loop needs of a sandbox session (a SandboxSession, or a recording fake in unit tests). */
export interface CommandRunner {
  run(options: RunOptions): Promise<SandboxResult>;
  /** Forget the cached filesystem listing (a defense changed the container behind the session's back). */
  invalidateSnapshot?(): void;
  /** The harness's processes (agent, pid 1, idle process): a command acting on them is tampering. */
  harnessPids?(): Promise<readonly number[]>;
}

/**
 * Whether the container and the daemon are healthy, asked when the sandbox broke during a
 * command: `undefined` if so (then the command broke it), else what is wrong (infrastructure).
 */
export type HealthProbe = () => Promise<string | undefined>;

export const EPISODE_DEFAULTS = {
  maxTurns: 30,
  commandTimeoutMs: 120_000,
  /** Ceiling on what a model may ask for with timeout_sec. */
  maxCommandTimeoutMs: 600_000,
  /** When the task sets no agent timeout. */
  episodeTimeoutMs: 1_800_000,
  /** What the exec capture keeps per stream before the observation cap. */
  captureCapBytes: 1024 * 1024,
  /** Trace events kept over a whole episode; beyond them it ends `trace_limit` (host memory stays bounded). */
  traceEventBudget: 400_000,
} as const;

const NO_IMPLICIT: PatternSet = { read: [], write: [], execute: [] };

export interface EpisodeOptions {
  task: Task;
  session: CommandRunner;
  /** Handed to defenses that act on the container itself (snapshots, rollback). */
  container?: Container;
  model: AgentModel;
  defense: Defense;
  /** Required by defenses that enforce or show a policy. */
  policy?: Policy;
  /** Runtime grants added to the policy when enforcing (see oracle's taskImplicit). */
  implicit?: PatternSet;
  maxTurns?: number;
  commandTimeoutMs?: number;
  maxCommandTimeoutMs?: number;
  /** Default: the task's agent timeout, else EPISODE_DEFAULTS.episodeTimeoutMs. */
  episodeTimeoutMs?: number;
  observationCapBytes?: number;
  /** Passed through to every model request. */
  request?: Pick<ModelRequest, 'maxOutputTokens' | 'temperature' | 'seed'>;
  /**
   * When enforcing, create missing write-subtree directories first so the
   * kernel's grants are not widened to their parents (see prepare.ts). Default true.
   */
  materializeWriteRoots?: boolean;
  /** Called after each step is complete (progress, streaming the trace). */
  onStep?: (step: Step) => void | Promise<void>;
  /** Classifies a sandbox that broke mid-command (default: always the infrastructure's fault). */
  health?: HealthProbe;
  /** Trace events kept over the episode (default EPISODE_DEFAULTS.traceEventBudget). */
  traceEventBudget?: number;
  /** Injected clock (ms). */
  now?: () => number;
}

type Ending = { reason: EndReason; infra?: NonNullable<Episode['infra_error']>; tamper?: TamperEvidence };

function infraFrom(e: unknown, source: 'model' | 'sandbox'): Ending | undefined {
  if (!(e instanceof AuthbenchError) || !e.isInfrastructure) return undefined;
  const reason = (e as { reason?: unknown }).reason;
  return {
    reason: 'infra_error',
    infra: { source, code: e.code, message: e.message, ...(typeof reason === 'string' ? { reason } : {}) },
  };
}

function enforcementOf(r: SandboxResult): EnforcementRecord {
  const e = r.enforcement;
  return { level: e.level, landlock_abi: e.landlockAbi, seccomp: e.seccomp, best_effort: e.bestEffort };
}

const LEVEL_RANK: Record<EnforcementRecord['level'], number> = { none: 0, partial: 1, full: 2 };

/** The weakest enforcement any executed command ran under. */
export function weakestEnforcement(results: readonly CommandResult[]): EnforcementRecord | null {
  let weakest: EnforcementRecord | null = null;
  for (const r of results) {
    if (weakest === null || LEVEL_RANK[r.enforcement.level] < LEVEL_RANK[weakest.level]) weakest = r.enforcement;
  }
  return weakest;
}

function sumOrNull(values: readonly (number | null)[]): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

export function episodeTotals(steps: readonly Step[], durationMs: number): Totals {
  const proposals = steps.flatMap((s) => s.proposals);
  const calls = steps.map((s) => s.model_call);
  return {
    turns: steps.length,
    proposals: proposals.length,
    valid_proposals: proposals.filter((p) => p.valid).length,
    invalid_proposals: proposals.filter((p) => !p.valid).length,
    blocked: proposals.filter((p) => p.decision?.action === 'block').length,
    held: proposals.filter((p) => p.decision?.action === 'confirm').length,
    rolled_back: proposals.filter((p) => p.rollback?.restored === true).length,
    executed: proposals.filter((p) => p.result !== undefined).length,
    denials: proposals.reduce((n, p) => n + (p.result?.denial_count ?? 0), 0),
    input_tokens: sumOrNull(calls.map((c) => c.usage.input_tokens)),
    output_tokens: sumOrNull(calls.map((c) => c.usage.output_tokens)),
    cost_usd: sumOrNull(calls.map((c) => c.cost_usd)),
    model_latency_ms: calls.reduce((n, c) => n + c.latency_ms, 0),
    duration_ms: durationMs,
  };
}

function commandResult(r: SandboxResult, timeoutMs: number, capBytes: number): CommandResult {
  const stdout = capText(r.exec.stdout, capBytes, r.exec.stdoutTruncated);
  const stderr = capText(r.exec.stderr, capBytes, r.exec.stderrTruncated);
  const widened = r.compiled?.fidelity.entries.filter((e) => e.kind === 'widened').length;
  return {
    exit_code: r.exec.exitCode,
    timed_out: r.exec.timedOut,
    timeout_ms: timeoutMs,
    duration_ms: r.exec.durationMs,
    stdout: stdout.text,
    stderr: stderr.text,
    stdout_bytes: stdout.bytes,
    stderr_bytes: stderr.bytes,
    denials: summarizeDenials(r.denials),
    denial_count: r.denials.length,
    event_count: r.events.length,
    enforcement: enforcementOf(r),
    ...(widened === undefined ? {} : { widened_entries: widened }),
    ...(r.launcherError === undefined ? {} : { launcher_error: r.launcherError }),
    ...(r.spawnError === undefined ? {} : { spawn_error: r.spawnError }),
    ...(r.trace === undefined ? {} : { trace: { bytes: r.trace.bytes, truncated: r.trace.truncated, dropped_events: r.trace.droppedEvents } }),
    ...(r.seccompDenials === undefined || r.seccompDenials === 0 ? {} : { seccomp_denials: r.seccompDenials }),
    ...(r.leftover === undefined || r.leftover.count === 0 ? {} : { leftover_processes: r.leftover.count }),
  };
}

/** Why a valid, allowed proposal made after the episode's end never ran. */
function skippedBecause(reason: EndReason): NonNullable<Proposal['skipped']> {
  return reason === 'infra_error' || reason === 'sandbox_tampered' || reason === 'trace_limit' ? reason : 'episode_timeout';
}

/**
 * A sandbox that broke while a command ran: the command's doing when the container and the
 * daemon are otherwise healthy, the infrastructure's when they are not.
 */
async function brokenSandbox(e: AuthbenchError, health: HealthProbe | undefined, commandId: string): Promise<Ending> {
  const problem = health === undefined ? 'no health probe to tell' : await health().catch((err: unknown) => `health check failed: ${String(err)}`);
  if (problem !== undefined) {
    return { reason: 'infra_error', infra: { source: 'sandbox', code: e.code, reason: 'broken', message: `${e.message} (${problem})` } };
  }
  const unresponsive = e.message.includes('did not answer');
  return {
    reason: 'sandbox_tampered',
    tamper: { kind: unresponsive ? 'harness_unresponsive' : 'harness_died', effective: true, command_id: commandId, detail: e.message },
  };
}

/** The per-command limit: what the model asked for (capped) or the default, never past the episode deadline. */
export function commandTimeout(args: ShellArgs, defaults: { commandTimeoutMs: number; maxCommandTimeoutMs: number }, remainingMs: number): number {
  const asked = args.timeout_sec === undefined ? defaults.commandTimeoutMs : Math.min(Math.round(args.timeout_sec * 1000), defaults.maxCommandTimeoutMs);
  return Math.max(1, Math.min(asked, Math.floor(remainingMs)));
}

/** Run one episode to its end; only non-infrastructure harness faults (bad arguments, a rejected model request) throw. */
export async function runEpisode(options: EpisodeOptions): Promise<Episode> {
  const { task, session, model, defense } = options;
  const now = options.now ?? Date.now;
  const started = now();
  const maxTurns = options.maxTurns ?? EPISODE_DEFAULTS.maxTurns;
  const limits = {
    commandTimeoutMs: options.commandTimeoutMs ?? EPISODE_DEFAULTS.commandTimeoutMs,
    maxCommandTimeoutMs: options.maxCommandTimeoutMs ?? EPISODE_DEFAULTS.maxCommandTimeoutMs,
  };
  const episodeTimeoutMs =
    options.episodeTimeoutMs ??
    (task.limits.agentTimeoutSec === undefined ? EPISODE_DEFAULTS.episodeTimeoutMs : task.limits.agentTimeoutSec * 1000);
  const deadline = started + episodeTimeoutMs;
  const capBytes = options.observationCapBytes ?? DEFAULT_OBSERVATION_CAP_BYTES;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new AuthbenchError('INVALID_ARGUMENT', `maxTurns must be a positive integer (got ${maxTurns})`);

  const steps: Step[] = [];
  let harnessPids: readonly number[] | undefined;
  let traceEvents = 0;
  const traceBudget = options.traceEventBudget ?? EPISODE_DEFAULTS.traceEventBudget;
  const context = (turn: number, current?: Step): DefenseContext => {
    const views = [...steps, ...(current === undefined ? [] : [current])].map((s) => ({ turn: s.turn, text: s.text, proposals: [...s.proposals] }));
    return {
      task,
      policy: options.policy,
      implicit: options.implicit ?? NO_IMPLICIT,
      turn,
      history: views.flatMap((s) => s.proposals),
      steps: views,
      container: options.container,
    };
  };
  const tools = agentTools({ confirmation: defense.confirmations === true });
  // Both throw on a misconfigured defense (no policy) before any model call is paid for.
  const system = systemPrompt(task, defense.guidance(context(0)));
  const setupMode = defense.execution(context(0));

  const messages: Message[] = [{ role: 'user', content: task.instruction }];
  let ending: Ending | undefined;
  let finalText: string | undefined;

  const createdDirs: string[] = [];
  if (setupMode.kind === 'enforce' && options.materializeWriteRoots !== false) {
    const roots = writeSubtreeRoots(setupMode.policy, setupMode.implicit);
    if (roots.length > 0) {
      try {
        // Untraced and unenforced: harness setup, not an agent action; it also refreshes the compiler's snapshot.
        const made = await session.run({ cmd: materializeArgv(roots), mode: { kind: 'unenforced' }, trace: false, timeoutMs: 30_000 });
        if (made.exec.exitCode !== 0) {
          ending = { reason: 'infra_error', infra: { source: 'sandbox', code: 'SANDBOX_UNAVAILABLE', reason: 'setup', message: `could not prepare write directories: ${made.exec.stderr.trim()}` } };
        }
        createdDirs.push(...made.exec.stdout.split('\n').filter((l) => l !== ''));
      } catch (e) {
        ending = infraFrom(e, 'sandbox');
        if (ending === undefined) throw e;
      }
    }
  }

  for (let turn = 1; ending === undefined; turn++) {
    if (turn > maxTurns) {
      ending = { reason: 'max_turns' };
      break;
    }
    if (now() >= deadline) {
      ending = { reason: 'episode_timeout' };
      break;
    }
    const stepStarted = new Date(now()).toISOString();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('episode time limit reached', 'TimeoutError')), Math.max(0, deadline - now()));
    let response: ModelResponse;
    try {
      response = await model.complete({ system, messages: [...messages], tools: [...tools], ...options.request }, { signal: abort.signal });
    } catch (e) {
      if (abort.signal.aborted) {
        ending = { reason: 'episode_timeout' };
        break;
      }
      ending = infraFrom(e, 'model');
      if (ending === undefined) throw e;
      break;
    } finally {
      clearTimeout(timer);
    }

    messages.push({ role: 'assistant', content: response.text, ...(response.toolCalls.length === 0 ? {} : { toolCalls: response.toolCalls }) });
    const step: Step = {
      turn,
      started_at: stepStarted,
      model_call: {
        usage: { input_tokens: response.usage.inputTokens, output_tokens: response.usage.outputTokens },
        cost_usd: response.costUsd,
        latency_ms: response.latencyMs,
        cached: response.cached,
        finish_reason: response.finishReason,
      },
      text: response.text,
      proposals: [],
    };

    for (const call of response.toolCalls) {
      const base = { id: call.id, tool: call.name, args: call.args };
      const answer = (content: string, isError: boolean): void => {
        messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content, ...(isError ? { isError: true } : {}) });
      };
      const checked = checkToolCall(call, { confirmation: defense.confirmations === true });
      if (!checked.valid) {
        step.proposals.push({ ...base, valid: false, invalid_reason: checked.reason, events: [] });
        answer(`invalid tool call, not executed: ${checked.reason}`, true);
        continue;
      }
      if (ending !== undefined) {
        step.proposals.push({ ...base, valid: true, skipped: skippedBecause(ending.reason), events: [] });
        continue;
      }
      const view = { id: call.id, tool: 'shell' as const, args: checked.args };
      const ctx = context(turn, step);
      const decision = await defense.decide(view, ctx);
      if (decision.action !== 'allow') {
        step.proposals.push({ ...base, valid: true, decision, events: [] });
        answer(`${decision.action === 'block' ? 'blocked' : 'held'} by the ${defense.name} defense (${decision.rule_id}): ${decision.reason}. The command did not run.`, true);
        continue;
      }
      const remaining = deadline - now();
      if (remaining <= 0) {
        ending = { reason: 'episode_timeout' };
        step.proposals.push({ ...base, valid: true, decision, skipped: 'episode_timeout', events: [] });
        continue;
      }
      const timeoutMs = commandTimeout(checked.args, limits, remaining);
      let run: SandboxResult;
      let guard: RunGuard | undefined;
      try {
        const mode = defense.execution(ctx);
        guard = await defense.prepareRun?.(view, ctx);
        run = await session.run({
          cmd: shellArgv(checked.args),
          mode,
          trace: true,
          timeoutMs,
          outputCapBytes: EPISODE_DEFAULTS.captureCapBytes,
        });
      } catch (e) {
        ending = e instanceof AuthbenchError && e.code === 'SANDBOX_BROKEN' ? await brokenSandbox(e, options.health, call.id) : infraFrom(e, 'sandbox');
        if (ending === undefined) throw e;
        step.proposals.push({ ...base, valid: true, decision, skipped: ending.reason === 'sandbox_tampered' ? 'sandbox_tampered' : 'infra_error', events: [] });
        continue;
      }
      harnessPids ??= (await session.harnessPids?.()) ?? [];
      const tamper = commandTamper(
        { events: run.events, harnessPids: [...harnessPids, ...(run.mainPid === undefined ? [] : [run.mainPid])], harnessRoot: HARNESS_ROOT, leftover: run.leftover },
        call.id,
      );
      traceEvents += run.events.length;
      const result = { ...commandResult(run, timeoutMs, capBytes), ...(tamper.length === 0 ? {} : { tamper }) };
      const proposal: Proposal = { ...base, valid: true, decision, result, events: run.events };
      let rollback: RollbackRecord | undefined;
      if (guard !== undefined) {
        try {
          rollback = await guard.after(proposal);
        } catch (e) {
          ending = infraFrom(e, 'sandbox');
          if (ending === undefined) throw e;
        }
        // The container changed behind the session: its cached listing is stale.
        if (rollback?.restored === true) session.invalidateSnapshot?.();
      }
      step.proposals.push(rollback === undefined ? proposal : { ...proposal, rollback });
      const observation = renderObservation({
        exitCode: result.exit_code,
        timedOut: result.timed_out,
        timeoutMs,
        stdout: result.stdout,
        stderr: result.stderr,
        denials: result.denials,
        ...(run.launcherError === undefined ? {} : { launcherError: run.launcherError }),
      });
      answer(
        rollback?.restored === true ? `${observation}\n${renderRollback(defense.name, rollback)}` : observation,
        result.timed_out || result.exit_code !== 0 || run.launcherError !== undefined || rollback?.restored === true,
      );
      if (ending !== undefined) continue;
      const broke = tamper.find((t) => t.effective);
      if (broke !== undefined) {
        ending = { reason: 'sandbox_tampered' };
      } else if (run.launcherError !== undefined) {
        ending = { reason: 'infra_error', infra: { source: 'sandbox', code: 'SANDBOX_UNAVAILABLE', reason: 'launcher', message: run.launcherError } };
      } else if (traceEvents > traceBudget) {
        ending = { reason: 'trace_limit' };
      } else if (result.timed_out && deadline - now() <= 0) {
        ending = { reason: 'episode_timeout' };
      }
    }

    steps.push(step);
    await options.onStep?.(step);
    if (ending === undefined && response.toolCalls.length === 0) {
      ending = { reason: 'done' };
      finalText = response.text;
    }
  }

  const results = steps.flatMap((s) => s.proposals.flatMap((p) => (p.result === undefined ? [] : [p.result])));
  const end = ending ?? { reason: 'done' };
  const tampering = [...results.flatMap((r) => r.tamper ?? []), ...(end.tamper === undefined ? [] : [end.tamper])];
  return {
    schema_version: EPISODE_SCHEMA_VERSION,
    task_id: task.id,
    model: formatModelRef(model.ref),
    defense: { name: defense.name, version: defense.version },
    started_at: new Date(started).toISOString(),
    setup: { created_dirs: createdDirs },
    steps,
    end_reason: end.reason,
    ...(end.infra === undefined ? {} : { infra_error: end.infra }),
    ...(finalText === undefined ? {} : { final_text: finalText }),
    tampering,
    trace_events: traceEvents,
    enforcement: weakestEnforcement(results),
    totals: episodeTotals(steps, now() - started),
  };
}
