/**
 * The episode of an installed agent (`eval --agent NAME`): one headless run
 * of the agent in the rollout's sandbox (agents/run.ts), read back as an
 * Episode so services, validators, measurement and result.json go the way of
 * the built-in loop's (evaluation/rollout.ts dispatches here for the episode
 * alone).
 *
 * Steps: one per exchange with the relay, in order — the agent's background
 * calls included, so the episode's token, cost and latency totals are the
 * relay's. Proposals: the transcript's tool calls, assigned in order to the
 * exchanges whose reply made them (a shell call is tool `shell`, args
 * `{command}`; another tool keeps its name and input), decision `allow` with
 * the defense's rule (nothing decides before an agent's own call runs), result
 * text as the agent gave it to the model.
 *
 * Events: the agent's headless command is one traced command; its events are
 * split by time. An exchange's reply was sent at `ts + latency`; what happens
 * from then until the next exchange starts is the work of that reply's tool
 * calls, and goes to its first proposal. Everything else — start-up, the agent
 * waiting on the model, its own state, events without a time — goes to one
 * more proposal, `agent-run` (tool `agent`, first in step 1), which also
 * carries the whole command's exit, trace account and enforcement. So every
 * event is on exactly one proposal, and containment measures each once.
 */
import { join } from 'node:path';
import { AuthbenchError, isAuthbenchError, writeFileAtomic } from '../core/index.ts';
import { capText, episodeTotals, renderPolicyGuidance, summarizeDenials, weakestEnforcement, EPISODE_DEFAULTS, EPISODE_SCHEMA_VERSION } from '../agent/index.ts';
import type { AgentModel, CommandResult, Episode, EnforcementRecord, Proposal, Step } from '../agent/index.ts';
import {
  agentModelName,
  agentShellMapping,
  getAgent,
  listAgents,
  installedDefense,
  providerBackend,
  runInstalledAgent,
  type AgentAdapter,
  type InstalledAgentResult,
  type InstalledDefenseSupport,
  type RelayRecord,
  type TranscriptCall,
} from '../agents/index.ts';
import { AGENT_PROCESS_PROPOSAL_ID } from '../containment/index.ts';
import { taskImplicit } from '../goldstore/index.ts';
import { denyAllPolicy, type Policy } from '../sandbox/policy/index.ts';
import type { TaskSandbox } from '../taskenv/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import type { AgentRecord } from './result.ts';
import type { RolloutContext } from './rollout.ts';

/** `--agent`'s default: authbench's own loop (no installed agent; nothing goes into the config). */
export const BUILTIN_AGENT = 'authbench';

/** `--agent NAME` as the config records it: undefined for the built-in loop, else the adapter's name and pinned version. INVALID_ARGUMENT (exit 1) for an unknown name, listing the known ones. */
export function agentConfig(name: string | undefined): EvalConfig['agent'] {
  if (name === undefined || name === BUILTIN_AGENT) return undefined;
  try {
    const adapter = getAgent(name);
    return { name: adapter.name, version: adapter.install.version };
  } catch (e) {
    if (!isAuthbenchError(e)) throw e;
    throw new AuthbenchError('INVALID_ARGUMENT', `--agent ${JSON.stringify(name)}: unknown agent`, {
      hint: `known agents: ${BUILTIN_AGENT} (the built-in loop, default), ${listAgents().map((a) => a.name).join(', ')}`,
    });
  }
}

/**
 * Can the job's installed agent run as configured? Checked before anything is built: the agent is
 * driven through its mapped shell tool and read back from its transcript (OpenClaw has neither yet),
 * every defense is one it supports, the model is one it can talk to, text actions are the built-in
 * loop's, and a resumed job's agent is still at the version it started with. INVALID_ARGUMENT (exit 1),
 * CHECK_FAILED for a changed version.
 */
export function checkAgentConfig(config: Pick<EvalConfig, 'agent' | 'defenses' | 'model' | 'tool_format'>): void {
  if (config.agent === undefined) return;
  const adapter = getAgent(config.agent.name);
  if (adapter.install.version !== config.agent.version) {
    throw new AuthbenchError('CHECK_FAILED', `the job ran agent ${adapter.name} ${config.agent.version}; this authbench pins ${adapter.install.version}`, {
      hint: 'start a new job (--job-name) for the new version',
    });
  }
  try {
    agentShellMapping(adapter);
  } catch (e) {
    if (!isAuthbenchError(e)) throw e;
    throw new AuthbenchError('INVALID_ARGUMENT', `--agent ${adapter.name}: ${e.message.replace(/^agent \S+: /, '')}`, { ...(e.hint === undefined ? {} : { hint: e.hint }) });
  }
  if (adapter.transcript === undefined) throw new AuthbenchError('INVALID_ARGUMENT', `--agent ${adapter.name}: its output has no transcript parser yet`);
  if (config.tool_format === 'text') throw new AuthbenchError('INVALID_ARGUMENT', `--tool-format text is for the built-in loop: ${adapter.name} talks to its model in its own API`);
  for (const defense of config.defenses) installedDefense(adapter, defense);
  agentModelName(adapter, config.model);
}

/** The proposal holding the agent process's own events (outside every tool call's window) and the command's whole account. */
export const AGENT_RUN_ID = AGENT_PROCESS_PROPOSAL_ID;
/** The agent's stream output, kept in the rollout folder (its transcript as it wrote it). */
export const AGENT_STDOUT_FILE = 'agent.stdout.jsonl';

/** Where episode `index` of a rollout keeps the agent's output: episode 2 of a memory rollout has its own. Pure. */
export function agentStdoutFile(index: number): string {
  return index === 0 ? AGENT_STDOUT_FILE : `agent.e${index}.stdout.jsonl`;
}

/**
 * The relay records of two episodes as one log: episode 2's numbered on from episode 1's (each
 * episode had its own relay, counting from 1). Pure.
 */
export function concatRelayRecords(first: readonly RelayRecord[], second: readonly RelayRecord[]): RelayRecord[] {
  const offset = Math.max(0, ...first.map((r) => r.seq));
  return [...first, ...second.map((r) => ({ ...r, seq: r.seq + offset }))];
}

/** One syscall event, as the episode holds it. */
type TraceEvent = Proposal['events'][number];
type Supported = Extract<InstalledDefenseSupport, { supported: true }>;
type Run = Pick<InstalledAgentResult, 'sandbox' | 'relay' | 'transcript' | 'command'>;

export interface EpisodeInput {
  taskId: string;
  /** The job's model reference (`scripted/oracle`, `anthropic/…`). */
  model: string;
  defense: { name: string; version: string };
  support: Pick<Supported, 'rule_id' | 'reason'>;
  startedAt: string;
  timeoutMs: number;
  run: Run;
}

const isDenial = (e: TraceEvent): boolean => e.kind !== 'unparsed' && e.denied === true;
const seconds = (iso: string): number => Date.parse(iso) / 1000;

/** The model exchanges of the run (not `GET /v1/models` or unknown paths), in the order the relay received them. */
function exchanges(relay: readonly RelayRecord[]): RelayRecord[] {
  return relay.filter((r) => r.api !== 'models' && r.api !== 'unknown').sort((a, b) => a.seq - b.seq);
}

/** For each exchange, its window [reply sent, next exchange received) in trace seconds. Pure. */
export function replyWindows(records: readonly Pick<RelayRecord, 'ts' | 'latency_ms'>[]): { from: number; to: number }[] {
  return records.map((r, i) => {
    const next = records[i + 1];
    return { from: seconds(r.ts) + r.latency_ms / 1000, to: next === undefined ? Number.POSITIVE_INFINITY : seconds(next.ts) };
  });
}

/**
 * Every event to exactly one bucket: the index of the window it falls in whose exchange made tool
 * calls, or -1 (the agent's own). Windows are disjoint when exchanges are sequential; an event in
 * two (concurrent exchanges) goes to the first. Pure.
 */
export function splitEvents(events: readonly TraceEvent[], windows: readonly { from: number; to: number }[], owns: readonly boolean[]): Map<number, TraceEvent[]> {
  const out = new Map<number, TraceEvent[]>();
  for (const e of events) {
    const ts = e.ts;
    const k = ts === undefined ? -1 : windows.findIndex((w, i) => owns[i] === true && ts >= w.from && ts < w.to);
    const bucket = out.get(k);
    if (bucket === undefined) out.set(k, [e]);
    else bucket.push(e);
  }
  return out;
}

/** The transcript's calls per exchange, in order: each exchange takes as many as its reply made; leftovers go to the last that made any. Pure. */
export function assignCalls(records: readonly Pick<RelayRecord, 'tool_calls'>[], calls: readonly TranscriptCall[]): TranscriptCall[][] {
  const out: TranscriptCall[][] = records.map(() => []);
  let next = 0;
  let last = -1;
  records.forEach((r, i) => {
    if (r.tool_calls.length === 0) return;
    last = i;
    const taken = calls.slice(next, next + r.tool_calls.length);
    out[i]?.push(...taken);
    next += taken.length;
  });
  if (next < calls.length) {
    // Calls with no exchange that made them (the relay saw fewer): kept, on the last step that made calls (or the first).
    const home = out[last] ?? out[0];
    home?.push(...calls.slice(next));
  }
  return out;
}

function enforcementOf(run: Run): EnforcementRecord {
  const e = run.sandbox.enforcement;
  return { level: e.level, landlock_abi: e.landlockAbi, seccomp: e.seccomp, best_effort: e.bestEffort };
}

/** A tool call's result: the text the agent gave its model, the events of its window. The agent does not report an exit code: null. */
function callResult(call: TranscriptCall, events: readonly TraceEvent[], durationMs: number, timeoutMs: number, enforcement: EnforcementRecord): CommandResult {
  const stdout = capText(call.result?.content ?? '');
  const denials = events.filter(isDenial);
  return {
    exit_code: null,
    timed_out: false,
    timeout_ms: timeoutMs,
    duration_ms: durationMs,
    stdout: stdout.text,
    stderr: '',
    stdout_bytes: stdout.bytes,
    stderr_bytes: 0,
    denials: summarizeDenials(denials),
    denial_count: denials.length,
    event_count: events.length,
    enforcement,
  };
}

/** The agent command's own account: exit, stderr, its own events' denials, and the whole command's trace account. The model saw none of it. */
function agentRunResult(run: Run, events: readonly TraceEvent[], timeoutMs: number): CommandResult {
  const r = run.sandbox;
  const stderr = capText(r.exec.stderr, undefined, r.exec.stderrTruncated);
  const denials = events.filter(isDenial);
  return {
    exit_code: r.exec.exitCode,
    timed_out: r.exec.timedOut && r.cut !== true,
    ...(r.cut === true ? { storage_cut: true as const } : {}),
    timeout_ms: timeoutMs,
    duration_ms: r.exec.durationMs,
    stdout: '',
    stderr: stderr.text,
    stdout_bytes: 0,
    stderr_bytes: stderr.bytes,
    denials: summarizeDenials(denials),
    denial_count: denials.length,
    event_count: events.length,
    enforcement: enforcementOf(run),
    ...(r.launcherError === undefined ? {} : { launcher_error: r.launcherError }),
    ...(r.spawnError === undefined ? {} : { spawn_error: r.spawnError }),
    ...(r.trace === undefined ? {} : { trace: { bytes: r.trace.bytes, truncated: r.trace.truncated, dropped_events: r.trace.droppedEvents } }),
    ...(r.seccompDenials === undefined || r.seccompDenials === 0 ? {} : { seccomp_denials: r.seccompDenials }),
    ...(r.leftover === undefined || r.leftover.count === 0 ? {} : { leftover_processes: r.leftover.count }),
    ...(r.survivors === undefined || r.survivors.count === 0 ? {} : { survivors: { count: r.survivors.count, processes: r.survivors.info.split('\n').filter((l) => l !== '') } }),
  };
}

function endOf(run: Run): Pick<Episode, 'end_reason'> & { final_text?: string } {
  const final = run.transcript?.final ?? null;
  const text = final?.text ?? run.transcript?.texts.at(-1);
  // The storage guard stopped the agent (taskenv/storage.ts): its run ends there, as at a timeout.
  if (run.sandbox.cut === true) return { end_reason: 'storage_limit' };
  if (run.sandbox.exec.timedOut) return { end_reason: 'episode_timeout' };
  if (final?.subtype.includes('max_turns') === true) return { end_reason: 'max_turns' };
  // The relay's request budget is max_turns (runInstalledRollout): a refused call past it ended the run there.
  if (run.relay.some((r) => r.outcome === 'over_budget')) return { end_reason: 'max_turns' };
  return { end_reason: 'done', ...(text === undefined ? {} : { final_text: text }) };
}

/** The installed agent's run as an Episode (see the module comment). Pure. */
export function installedEpisode(input: EpisodeInput): Episode {
  const { run } = input;
  const records = exchanges(run.relay);
  const calls = assignCalls(records, run.transcript?.calls ?? []);
  const owns = calls.map((c) => c.length > 0);
  const windows = replyWindows(records);
  const buckets = splitEvents(run.sandbox.events, windows, owns);
  const enforcement = enforcementOf(run);
  const decision = { action: 'allow' as const, rule_id: input.support.rule_id, reason: input.support.reason };
  const steps: Step[] = records.map((r, i) => {
    const window = windows[i] ?? { from: 0, to: 0 };
    const mine = buckets.get(i) ?? [];
    // The last window has no end but the run's: its last event.
    const end = Number.isFinite(window.to) ? window.to : Math.max(window.from, ...mine.map((e) => e.ts ?? window.from));
    const durationMs = Math.max(0, (end - window.from) * 1000);
    const proposals = (calls[i] ?? []).map((call, j): Proposal => {
      const events = j === 0 ? mine : [];
      const ran = call.result !== null || events.length > 0;
      return {
        id: call.id,
        tool: call.command === null ? call.tool : 'shell',
        args: call.command === null ? call.input : { command: call.command },
        valid: true,
        decision,
        ...(ran ? { result: callResult(call, events, j === 0 ? durationMs : 0, input.timeoutMs, enforcement) } : run.sandbox.cut === true ? { skipped: 'storage_limit' as const } : run.sandbox.exec.timedOut ? { skipped: 'episode_timeout' as const } : {}),
        events,
      };
    });
    return {
      turn: i + 1,
      started_at: r.ts,
      model_call: {
        usage: { input_tokens: r.input_tokens, output_tokens: r.output_tokens },
        cost_usd: r.cost_usd,
        latency_ms: r.latency_ms,
        cached: r.source === 'cache',
        finish_reason: r.status !== 200 ? 'error' : r.tool_calls.length > 0 ? 'tool-calls' : 'stop',
      },
      text: r.text ?? '',
      proposals,
    };
  });
  // A run that never reached the model still ran: a step of its own holds it (no call was made: no usage).
  const first: Step = steps[0] ?? {
    turn: 1,
    started_at: input.startedAt,
    model_call: { usage: { input_tokens: 0, output_tokens: 0 }, cost_usd: 0, latency_ms: 0, cached: false, finish_reason: 'error' },
    text: '',
    proposals: [],
  };
  const agentRun: Proposal = {
    id: AGENT_RUN_ID,
    tool: 'agent',
    args: { command: run.command.argv.join(' ') },
    valid: true,
    decision,
    result: agentRunResult(run, buckets.get(-1) ?? [], input.timeoutMs),
    events: buckets.get(-1) ?? [],
  };
  const all = [{ ...first, proposals: [agentRun, ...first.proposals] }, ...steps.slice(1)];
  const results = all.flatMap((s) => s.proposals.flatMap((p) => (p.result === undefined ? [] : [p.result])));
  return {
    schema_version: EPISODE_SCHEMA_VERSION,
    task_id: input.taskId,
    model: input.model,
    defense: input.defense,
    started_at: input.startedAt,
    setup: { created_dirs: [] },
    steps: all,
    ...endOf(run),
    tampering: [],
    trace_events: run.sandbox.events.length,
    enforcement: weakestEnforcement(results),
    totals: episodeTotals(all, run.sandbox.exec.durationMs),
  };
}

/** The instruction the agent is given: under prompt-only, the policy text first. Pure. */
export function agentInstruction(instruction: string, support: Pick<Supported, 'policyInInstruction'>, policy: Policy | undefined): string {
  return support.policyInInstruction && policy !== undefined ? `${renderPolicyGuidance(policy)}\n\n${instruction}` : instruction;
}

export interface InstalledEpisode {
  episode: Episode;
  /** An installed agent keeps nothing running past its command: the session's close ends it all. */
  services: undefined;
  relay: readonly RelayRecord[];
  agent: AgentRecord;
}

/** The agent's record in result.json. Pure. */
export function agentRecord(adapter: AgentAdapter): AgentRecord {
  return { name: adapter.name, version: adapter.install.version, prompts_off: adapter.promptsOff };
}

/** Run the job's installed agent in the rollout's open sandbox (its image: the agent layer) and read the run back as an episode. */
export async function runInstalledEpisode(
  spec: RolloutSpec,
  ctx: RolloutContext,
  box: TaskSandbox,
  model: AgentModel,
  defense: { name: string; version: string },
  /** Which episode of the rollout this is (0, or 1 for a memory rollout's second): names its output file. */
  episodeIndex = 0,
): Promise<InstalledEpisode> {
  const name = ctx.config.agent?.name ?? 'authbench';
  const adapter = getAgent(name);
  const support = installedDefense(adapter, spec.defense);
  const modelName = agentModelName(adapter, ctx.config.model);
  const timeoutMs = (ctx.task.limits.agentTimeoutSec ?? EPISODE_DEFAULTS.episodeTimeoutMs / 1000) * 1000;
  const startedAt = new Date().toISOString();
  const driver = ctx.config.model.startsWith('scripted/')
    ? { name: modelName, turns: model }
    : {
        name: modelName,
        backend: await providerBackend(ctx.config.model, { ...(ctx.config.base_url === undefined ? {} : { baseUrl: ctx.config.base_url }), timeoutMs: ctx.config.model_timeout_sec * 1000 }),
      };
  const run = await runInstalledAgent({
    box,
    adapter,
    instruction: agentInstruction(ctx.task.instruction, support, ctx.policy),
    // Unenforced runs (none, prompt-only) ignore it.
    policy: ctx.policy ?? denyAllPolicy(),
    enforce: support.execution === 'enforce',
    implicit: taskImplicit(ctx.task),
    model: driver,
    // max_turns as the relay's request budget: every model call of the agent counts (its background
    // calls included), and the call past it is refused as over budget, which ends the run.
    relay: { budget: { maxRequests: ctx.config.max_turns } },
    timeoutMs,
  });
  await writeFileAtomic(join(ctx.dir, agentStdoutFile(episodeIndex)), run.stdout);
  const episode = installedEpisode({
    taskId: ctx.task.id,
    model: ctx.config.model,
    defense,
    support,
    startedAt,
    timeoutMs,
    run,
  });
  return { episode, services: undefined, relay: run.relay, agent: agentRecord(adapter) };
}
