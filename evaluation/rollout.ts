/**
 * One rollout: a fresh container of the task's image, the policy, the agent
 * episode through the sandbox, then — after the episode, never before — the
 * tests copied in and the validators run outside enforcement. Infrastructure
 * failures (Docker, the model's service) become `status: infra_error`, never
 * an agent failure.
 */
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { AuthbenchError, hashJson, writeFileAtomic, writeJsonAtomic } from '../core/index.ts';
import type { Engine } from '../docker/index.ts';
import { createAgentModel, getDefense, runEpisode, type Episode } from '../agent/index.ts';
import { taskImplicit } from '../oracle/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import type { PolicyScore } from '../score/index.ts';
import type { Task } from '../task-format/index.ts';
import { openTaskSandbox } from '../taskenv/index.ts';
import { runAttackValidator, runUtilityValidator } from '../validators/index.ts';
import type { EvalConfig, RolloutSpec } from './config.ts';
import type { RolloutResult } from './result.ts';
import { canaryInSink, measureRollout, type Measurement } from './measure.ts';

export const TRACE_SCHEMA_VERSION = 1;

export interface GeneratedRecord {
  answers: readonly { phase: string; raw: string }[];
  status: NonNullable<RolloutResult['policy_parse_status']>;
  valid: boolean;
  usage: NonNullable<RolloutResult['policy_generation']>;
}

export interface RolloutContext {
  engine: Engine;
  config: EvalConfig;
  task: Task;
  image: string;
  /** undefined under defense none. */
  policy: Policy | undefined;
  /** The trusted ledger containment is measured against (the task's gold policy); undefined: metrics are not computed. */
  ledger: Policy | undefined;
  staticScore: PolicyScore | null;
  /** Policy source `generated`: the writer's raw answers (in phase order) and how the last one parsed. */
  generated?: GeneratedRecord;
  jobId: string;
  dir: string;
}

function base(spec: RolloutSpec, ctx: RolloutContext): Omit<RolloutResult, 'status' | 'utility_success' | 'attack_success' | 'end_reason' | 'enforcement' | 'totals' | 'duration_ms' | 'defense'> {
  return {
    schema_version: 1,
    rollout_id: spec.id,
    task_id: ctx.task.id,
    dataset: ctx.task.dataset,
    stage: ctx.task.authbench.stage,
    family: ctx.task.authbench.family ?? null,
    cluster: ctx.task.authbench.cluster,
    model: ctx.config.model,
    policy_source: spec.policy,
    policy_sha256: ctx.policy === undefined ? null : hashJson(ctx.policy),
    ...(ctx.generated === undefined ? {} : { policy_parse_status: ctx.generated.status, policy_valid: ctx.generated.valid, policy_generation: ctx.generated.usage }),
    attempt: spec.attempt,
    seed: spec.seed,
    static_score: ctx.staticScore,
    image: ctx.image,
  };
}

/** JSONL trace lines: `type` and `schema_version` on every line; syscalls join proposals by command id. */
export function traceLines(spec: RolloutSpec, episode: Episode): string[] {
  const lines: object[] = [{ type: 'rollout', rollout_id: spec.id, task_id: episode.task_id, model: episode.model, defense: episode.defense }];
  for (const step of episode.steps) {
    lines.push({ type: 'agent_step', turn: step.turn, started_at: step.started_at, model_call: step.model_call, text: step.text });
    for (const p of step.proposals) {
      const { events, ...proposal } = p;
      lines.push({ type: 'proposal', turn: step.turn, ...proposal });
      for (const event of events) lines.push({ type: 'syscall', command_id: p.id, event });
    }
  }
  lines.push({ type: 'episode_end', end_reason: episode.end_reason, infra_error: episode.infra_error, totals: episode.totals, enforcement: episode.enforcement });
  return lines.map((l) => JSON.stringify({ schema_version: TRACE_SCHEMA_VERSION, ...l }));
}

export async function runRollout(spec: RolloutSpec, ctx: RolloutContext): Promise<RolloutResult> {
  const started = performance.now();
  const defense = getDefense(spec.defense);
  const common = { ...base(spec, ctx), defense: { name: defense.name, version: defense.version } };
  const infra = (failure: { source: string; code: string; message: string }): RolloutResult => ({
    ...common,
    status: 'infra_error',
    infra_error: failure,
    utility_success: null,
    attack_success: null,
    metrics: null,
    end_reason: null,
    enforcement: null,
    totals: null,
    duration_ms: performance.now() - started,
  });

  // Kept before anything can fail: the answer is an artifact whatever happens to the execution.
  for (const [i, a] of (ctx.generated?.answers ?? []).entries()) {
    const last = i === (ctx.generated?.answers.length ?? 0) - 1;
    await writeFileAtomic(join(ctx.dir, last ? 'policy.raw.txt' : `policy.${a.phase}.raw.txt`), a.raw);
  }
  try {
    const model = await createAgentModel(ctx.config.model, ctx.task, {
      ...(ctx.config.base_url === undefined ? {} : { baseUrl: ctx.config.base_url }),
      cache: { mode: ctx.config.cache },
      timeoutMs: ctx.config.model_timeout_sec * 1000,
      retry: { maxRetries: ctx.config.model_retries },
    });
    const clock = { at: performance.now() };
    const lap = (): number => {
      const now = performance.now();
      const ms = now - clock.at;
      clock.at = now;
      return ms;
    };
    await using box = await openTaskSandbox(ctx.engine, ctx.task, ctx.image, { runId: ctx.jobId });
    const setupMs = lap();
    if (ctx.policy !== undefined) await writeJsonAtomic(join(ctx.dir, 'policy.json'), ctx.policy);
    const episode = await runEpisode({
      task: ctx.task,
      session: box.session,
      container: box.container,
      model,
      defense,
      ...(ctx.policy === undefined ? {} : { policy: ctx.policy }),
      implicit: taskImplicit(ctx.task),
      maxTurns: ctx.config.max_turns,
      request: { seed: spec.seed },
    });
    const episodeMs = lap();
    await writeFileAtomic(join(ctx.dir, 'trace.jsonl.gz'), gzipSync(`${traceLines(spec, episode).join('\n')}\n`));
    await writeJsonAtomic(join(ctx.dir, 'episode.json'), episode);
    if (episode.end_reason === 'infra_error') {
      // Keep the episode's own source and code: a launcher failure is not a model outage.
      const i = episode.infra_error;
      return infra({ source: i?.source ?? 'sandbox', code: i?.code ?? 'INTERNAL', message: i?.message ?? 'infrastructure error' });
    }
    const utility = await runUtilityValidator(box.container, ctx.task);
    const attack = ctx.task.dataset === 'sensitive' ? await runAttackValidator(box.container, ctx.task) : undefined;
    const validateMs = lap();
    let measurement: Measurement | undefined;
    if (ctx.ledger !== undefined) {
      measurement = measureRollout({ task: ctx.task, episode, ledger: ctx.ledger, utility, attack, canaryInSink: await canaryInSink(box.container, ctx.task) });
      const lines = [...traceLines(spec, episode), ...measurement.lines.map((l) => JSON.stringify({ schema_version: TRACE_SCHEMA_VERSION, ...l }))];
      await writeFileAtomic(join(ctx.dir, 'trace.jsonl.gz'), gzipSync(`${lines.join('\n')}\n`));
    }
    const t = episode.totals;
    return {
      ...common,
      status: 'completed',
      utility_success: utility.passed,
      utility_reason: utility.reason,
      attack_success: attack === undefined ? null : attack.passed,
      metrics: measurement?.metrics ?? null,
      end_reason: episode.end_reason,
      enforcement: episode.enforcement,
      totals: {
        turns: t.turns,
        proposals: t.proposals,
        valid_proposals: t.valid_proposals,
        invalid_proposals: t.invalid_proposals,
        executed: t.executed,
        blocked: t.blocked,
        held: t.held,
        rolled_back: t.rolled_back,
        denials: t.denials,
        input_tokens: t.input_tokens,
        output_tokens: t.output_tokens,
        cost_usd: t.cost_usd,
      },
      duration_ms: performance.now() - started,
      phases_ms: { setup: setupMs, episode: episodeMs, validate: validateMs, measure: lap() },
    };
  } catch (e) {
    if (e instanceof AuthbenchError && e.isInfrastructure) return infra({ source: e.code.startsWith('MODEL') ? 'model' : 'docker', code: e.code, message: e.message });
    throw e;
  }
}
