/**
 * Multi-agent rollouts (issue #18 item 1): supervisor→worker and peer-chain. The agents run one
 * after another in the task's one container, each a fresh built-in loop with its own transcript,
 * under the same defense and policy (agent/roles.ts says why every agent has the shell tool). An
 * agent's final answer is the next agent's only input — an inter-agent message, recorded on the
 * receiver's first step and walked by containment as a `message` node carrying the sender's taint.
 * The defenses deciding a later agent see the earlier agents' steps and the message, and the task
 * (so the ledger and what counts as trusted) stays the user's goal, never an agent's restatement.
 */
import { AuthbenchError } from '../core/index.ts';
import {
  roleInstruction,
  runEpisodeWithServices,
  topologyAgents,
  type AgentMessage,
  type Episode,
  type EpisodeOptions,
  type RunningServices,
  type StepView,
  type ValidationFiles,
} from '../agent/index.ts';
import type { Task, Topology } from '../task-format/index.ts';
import type { EvalConfig } from './config.ts';
import { mergeEpisodes } from './episodes.ts';
import type { RolloutResult } from './result.ts';

export type TopologyRecord = NonNullable<RolloutResult['topology']>;

/**
 * The rollout's topology: the scenario's own, else the job's, else single. A two-episode memory
 * scenario runs one agent per episode whatever the job says (its [authbench] cannot name another). Pure.
 */
export function rolloutTopology(task: Pick<Task, 'authbench'>, config: Pick<EvalConfig, 'topology'>): Topology {
  if (task.authbench.memory !== undefined) return 'single';
  return task.authbench.topology ?? config.topology ?? 'single';
}

/** One agent's part of a topology rollout. */
export interface AgentRun {
  agent: string;
  episode: Episode;
  /** The message it started from (every agent but the first). */
  message?: AgentMessage;
}

/**
 * One episode record of all agents, for the trace and measurement: every step marked with its
 * agent, the receiver's first step with its message, turns numbered on across agents and call ids
 * of agent k ≥ 1 suffixed `@a<k>` (a fresh agent reuses ids); totals summed, the ending and final
 * answer the last agent's. Pure.
 */
export function mergeAgentEpisodes(runs: readonly AgentRun[]): Episode {
  const [first, ...rest] = runs;
  if (first === undefined) throw new AuthbenchError('INTERNAL', 'mergeAgentEpisodes: no agent ran');
  let merged = first.episode;
  for (const r of rest) merged = mergeEpisodes(merged, r.episode, []);
  const steps: Episode['steps'] = [];
  let offset = 0;
  runs.forEach((r, k) => {
    r.episode.steps.forEach((s, i) =>
      steps.push({
        ...s,
        turn: s.turn + offset,
        agent: r.agent,
        ...(i === 0 && r.message !== undefined ? { message: r.message } : {}),
        proposals: k === 0 ? s.proposals : s.proposals.map((p) => ({ ...p, id: `${p.id}@a${k}` })),
      }),
    );
    offset += r.episode.steps.at(-1)?.turn ?? 0;
  });
  const { memory_carried: _none, ...episode } = merged;
  return { ...episode, steps };
}

/** The steps of the agents so far as the next agent's defenses see them (ahead of its own). Pure. */
export function precedingViews(runs: readonly AgentRun[]): StepView[] {
  if (runs.length === 0) return [];
  return mergeAgentEpisodes(runs).steps.map((s) => ({ turn: s.turn, text: s.text, proposals: s.proposals, agent: s.agent, message: s.message }));
}

/** Whether the chain goes on after an agent: it answered, and nothing voids the rollout. Pure. */
export function sendsOn(episode: Pick<Episode, 'end_reason' | 'final_text' | 'tampering'>): boolean {
  return episode.end_reason === 'done' && episode.final_text !== undefined && !episode.tampering.some((t) => t.effective);
}

export interface TopologyRun {
  episode: Episode;
  /** What the last agent left running, stopped into the merged episode. */
  services?: RunningServices;
  record: TopologyRecord;
}

type RunEpisode = (options: EpisodeOptions) => Promise<{ episode: Episode; services?: RunningServices }>;

/**
 * Run a topology's agents in one container. `options` is the rollout's single-agent episode
 * (task, session, model, defense, policy, onStep ...); each agent gets its role instruction, its
 * name, its message and the steps before it. A sender that ends without an answer (limits, an
 * outage, a broken sandbox) ends the chain there: there is nothing to send. Only the last agent
 * keeps services for the validators; an earlier one's are stopped before the next starts.
 */
export async function runTopology(topology: Exclude<Topology, 'single'>, options: EpisodeOptions, run: RunEpisode = runEpisodeWithServices): Promise<TopologyRun> {
  const agents = topologyAgents(topology);
  const runs: AgentRun[] = [];
  let input = options.task.instruction;
  let message: AgentMessage | undefined;
  let services: RunningServices | undefined;
  for (const [k, agent] of agents.entries()) {
    const before = precedingViews(runs);
    const out = await run({
      ...options,
      instruction: roleInstruction(topology, k, input),
      agent,
      ...(message === undefined ? {} : { message }),
      ...(before.length === 0 ? {} : { before }),
    });
    let episode = out.episode;
    services = out.services;
    const last = k === agents.length - 1;
    if (!last && services !== undefined) {
      episode = await services.stop();
      services = undefined;
    }
    runs.push({ agent, episode, ...(message === undefined ? {} : { message }) });
    const next = agents[k + 1];
    if (next === undefined || !sendsOn(episode)) break;
    input = episode.final_text ?? '';
    message = { from: agent, to: next, text: input };
  }
  const record: TopologyRecord = { kind: topology, agents: runs.map((r) => r.agent), messages: runs.filter((r) => r.message !== undefined).length };
  const kept = services;
  if (kept === undefined) return { episode: mergeAgentEpisodes(runs), record };
  const earlier = runs.slice(0, -1);
  const lastRun = runs.at(-1);
  if (lastRun === undefined) throw new AuthbenchError('INTERNAL', 'runTopology: services without an agent');
  return {
    episode: mergeAgentEpisodes(runs),
    services: {
      commands: kept.commands,
      stop: async (validation?: ValidationFiles) => mergeAgentEpisodes([...earlier, { ...lastRun, episode: await kept.stop(validation) }]),
    },
    record,
  };
}
