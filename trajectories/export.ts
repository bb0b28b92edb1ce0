/**
 * `authbench trajectories export`: every rollout of a job as an ATIF
 * trajectory, so Harbor-compatible viewers and tools read our runs. One agent
 * step per model call, its proposals as tool calls, each one's observation the
 * text the model was shown (rebuilt from the recorded result), the model
 * call's tokens and cost as step metrics. What ATIF has no field for
 * (decisions, denials, the task and policy) goes in `extra.authbench`.
 */
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { renderObservation, type Episode, type Proposal, type Step } from '../agent/index.ts';
import { AUTHBENCH_VERSION, AuthbenchError, compareStrings, writeFileAtomic, writeJsonAtomic } from '../core/index.ts';
import { readEpisode, readResults, type RolloutResult } from '../evaluation/index.ts';
import { ATIF_EXPORT_VERSION, type AtifStep, type AtifTrajectory } from './schema.ts';

/**
 * What the model was told about one proposal, as the loop words it (agent/loop.ts). A restored
 * rollback's note and a kept background job's line are not rebuilt: the result holds their facts.
 * Null when nothing answered it.
 */
export function proposalObservation(p: Proposal, defense: string): string | null {
  if (!p.valid) return `invalid tool call, not executed: ${p.invalid_reason ?? 'invalid'}`;
  if (p.decision !== undefined && p.decision.action !== 'allow') {
    return `${p.decision.action === 'block' ? 'blocked' : 'held'} by the ${defense} defense (${p.decision.rule_id}): ${p.decision.reason}. The command did not run.`;
  }
  const r = p.result;
  if (r === undefined) return p.skipped === undefined ? null : `not run: the episode ended first (${p.skipped})`;
  return renderObservation({
    exitCode: r.exit_code,
    timedOut: r.timed_out,
    timeoutMs: r.timeout_ms,
    stdout: r.stdout,
    stderr: r.stderr,
    denials: r.denials,
    ...(r.launcher_error === undefined ? {} : { launcherError: r.launcher_error }),
    ...(r.survivors === undefined || r.background !== undefined ? {} : { survivors: r.survivors }),
  });
}

/** A JSON object for ATIF's `arguments` (a model can send anything; a non-object is wrapped, not lost). */
function argumentsOf(args: unknown): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };
}

function agentStep(step: Step, stepId: number, episode: Episode): AtifStep {
  const defense = episode.defense.name;
  const results = step.proposals.flatMap((p) => {
    const content = proposalObservation(p, defense);
    return content === null ? [] : [{ source_call_id: p.id, content }];
  });
  const { usage, cost_usd } = step.model_call;
  return {
    step_id: stepId,
    timestamp: step.started_at,
    source: 'agent',
    model_name: episode.model,
    message: step.text,
    ...(step.proposals.length === 0 ? {} : { tool_calls: step.proposals.map((p) => ({ tool_call_id: p.id, function_name: p.tool, arguments: argumentsOf(p.args) })) }),
    ...(results.length === 0 ? {} : { observation: { results } }),
    metrics: {
      ...(usage.input_tokens === null ? {} : { prompt_tokens: usage.input_tokens }),
      ...(usage.output_tokens === null ? {} : { completion_tokens: usage.output_tokens }),
      ...(cost_usd === null ? {} : { cost_usd }),
    },
    ...(step.proposals.length === 0
      ? {}
      : {
          extra: {
            authbench: {
              turn: step.turn,
              proposals: step.proposals.map((p) => ({
                call_id: p.id,
                valid: p.valid,
                ...(p.decision === undefined ? {} : { decision: p.decision.action, rule_id: p.decision.rule_id }),
                ...(p.skipped === undefined ? {} : { skipped: p.skipped }),
                ...(p.result === undefined ? {} : { exit_code: p.result.exit_code, denial_count: p.result.denial_count }),
              })),
            },
          },
        }),
  };
}

/** One rollout's episode (and result, when it has one) as an ATIF trajectory. Pure. */
export function exportRollout(job: string, rollout: string, episode: Episode, result: RolloutResult | null): AtifTrajectory {
  const t = episode.totals;
  return {
    schema_version: ATIF_EXPORT_VERSION,
    session_id: `${job}/${rollout}`,
    agent: { name: episode.model, version: AUTHBENCH_VERSION, model_name: episode.model, extra: { harness: 'authbench', defense: episode.defense.name } },
    steps: episode.steps.map((s, i) => agentStep(s, i + 1, episode)),
    final_metrics: {
      ...(t.input_tokens === null ? {} : { total_prompt_tokens: t.input_tokens }),
      ...(t.output_tokens === null ? {} : { total_completion_tokens: t.output_tokens }),
      ...(t.cost_usd === null ? {} : { total_cost_usd: t.cost_usd }),
      total_steps: episode.steps.length,
    },
    extra: {
      authbench: {
        job,
        rollout_id: rollout,
        task_id: episode.task_id,
        defense: episode.defense,
        end_reason: episode.end_reason,
        ...(result === null
          ? {}
          : { policy_source: result.policy_source, outcome: result.outcome ?? result.status, utility_success: result.utility_success, attack_success: result.attack_success }),
      },
    },
  };
}

/** The verifier's reward for a rollout (Harbor's reward.txt): its utility verdict, when it has one. Pure. */
export function rolloutReward(result: Pick<RolloutResult, 'utility_success'>): number | null {
  return result.utility_success === null ? null : result.utility_success ? 1 : 0;
}

export interface ExportedRollout {
  rollout_id: string;
  /** The trajectory written; absent when the rollout had no trace to export. */
  file?: string;
  reward: number | null;
  skipped?: string;
}

/** What a trial folder holds: the trajectory, and the reward at its root (readImport also looks under verifier/). */
export const TRAJECTORY_FILE = 'trajectory.json';
export const REWARD_FILE = 'reward.txt';

/**
 * Every rollout of the job folder `jobDir` as a trial folder: `trajectory.json`
 * and, when the rollout was validated, `reward.txt` — into the rollout's own
 * folder (which then reads as a trial folder; its `verifier/` stays the
 * validators' own record), or into `outDir/<rollout>/`. Not into a folder of
 * the job: the report would count it as an unfinished rollout. A rollout
 * without a trace (it ended before its episode) is listed as skipped.
 */
export async function exportJob(jobDir: string, outDir?: string): Promise<ExportedRollout[]> {
  const job = basename(jobDir);
  const results = await readResults(jobDir);
  if (results.size === 0) throw new AuthbenchError('INVALID_ARGUMENT', `${jobDir} holds no rollout with a result.json`, { file: jobDir, hint: 'export takes a job folder, jobs/<name>' });
  const out: ExportedRollout[] = [];
  for (const [rollout, result] of [...results.entries()].sort(([a], [b]) => compareStrings(a, b))) {
    const episode = await readEpisode(join(jobDir, rollout));
    const reward = rolloutReward(result);
    if (episode === undefined) {
      out.push({ rollout_id: rollout, reward, skipped: 'no trace (the rollout ended before its episode)' });
      continue;
    }
    const dir = join(outDir ?? jobDir, rollout);
    await mkdir(dir, { recursive: true });
    const file = join(dir, TRAJECTORY_FILE);
    await writeJsonAtomic(file, exportRollout(job, rollout, episode, result));
    if (reward !== null) await writeFileAtomic(join(dir, REWARD_FILE), `${reward}\n`);
    out.push({ rollout_id: rollout, file, reward });
  }
  return out;
}
