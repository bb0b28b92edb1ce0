/**
 * Pipeline step 4: a model explores the task container read-only (the kernel
 * enforces it) and answers with an authorization policy. An unparseable or
 * invalid answer is a result (scored 0), never a crash; only infrastructure
 * failures (Docker, the model's service) throw.
 */
import { getDefense, runEpisode, type AgentModel, type CommandRunner, type Episode, type Step, type StorageWatch } from '../agent/index.ts';
import { AuthbenchError, type Problem } from '../core/index.ts';
import type { Container, Engine } from '../docker/index.ts';
import { taskImplicit } from '../goldstore/index.ts';
import type { ModelRequest } from '../models/index.ts';
import type { PatternSet } from '../sandbox/compile/index.ts';
import { extractPolicyFromModelOutput, type ExtractionStatus, type Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';
import { guardTaskStorage, openTaskSandbox, storageLimitOf, taskLimits } from '../taskenv/index.ts';
import { countWriteAttempts, readOnlyPolicy, withPrompts } from './explore.ts';
import { explorationSystemPrompt, explorationUserPrompt, tighteningSystemPrompt, tighteningUserPrompt, type PolicyStrategy } from './prompt.ts';

export const POLICY_GENERATION_DEFAULTS = { maxTurns: 20 } as const;

export interface PolicyAnswer {
  phase: 'explore' | 'tighten';
  raw: string;
}

export interface PolicyParseStatus {
  status: ExtractionStatus;
  valid: boolean;
  problems: Problem[];
}

export interface GeneratedPolicy {
  strategy: PolicyStrategy;
  /** The answer the policy was read from (phase 2's under sufficiency-tightness). */
  raw: string;
  /** Every phase's raw answer, in order. */
  answers: PolicyAnswer[];
  parse: PolicyParseStatus;
  /** Present when the answer parsed into a valid policy. */
  policy?: Policy;
  exploration: Episode;
  /** Writes the kernel refused during exploration. */
  writeAttempts: number;
  /** What writing it cost: the exploration episode plus the tightening call; null where a call did not report it. */
  usage: GenerationUsage;
}

export interface GenerationUsage {
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

const addOrNull = (a: number | null, b: number | null | undefined): number | null => (a === null || b === null || b === undefined ? null : a + b);

interface CommonOptions {
  task: Task;
  model: AgentModel;
  strategy: PolicyStrategy;
  maxTurns?: number;
  episodeTimeoutMs?: number;
  onStep?: (step: Step) => void | Promise<void>;
  request?: Pick<ModelRequest, 'maxOutputTokens' | 'temperature' | 'seed'>;
}

export interface WritePolicyOptions extends CommonOptions {
  session: CommandRunner;
  container?: Container;
  /** Runtime grants during exploration; default the task's implicit set. */
  implicit?: PatternSet;
  /** The container's storage guard: exploration ends `storage_limit` once it is over. */
  storage?: StorageWatch;
}

export interface GeneratePolicyOptions extends CommonOptions {
  engine: Engine;
  image: string;
  runId?: string;
}

/** The final answer of an episode; a model cut off by max turns may still have said something last. */
function episodeAnswer(episode: Episode): string {
  if (episode.final_text !== undefined) return episode.final_text;
  return episode.steps.at(-1)?.text ?? '';
}

function parsed(raw: string): Pick<GeneratedPolicy, 'parse' | 'policy'> {
  const x = extractPolicyFromModelOutput(raw);
  return { parse: { status: x.status, valid: x.valid, problems: x.problems }, ...(x.valid && x.policy !== undefined ? { policy: x.policy } : {}) };
}

/** Generation on an open sandbox session (what generatePolicy runs; unit tests hand it a fake session). */
export async function writePolicy(options: WritePolicyOptions): Promise<GeneratedPolicy> {
  const { task, strategy } = options;
  const explorer = withPrompts(options.model, explorationSystemPrompt(), explorationUserPrompt(task, strategy));
  const exploration = await runEpisode({
    task,
    session: options.session,
    ...(options.container === undefined ? {} : { container: options.container }),
    model: explorer,
    defense: getDefense('tool-boundary'),
    policy: readOnlyPolicy(),
    implicit: options.implicit ?? taskImplicit(task),
    maxTurns: options.maxTurns ?? POLICY_GENERATION_DEFAULTS.maxTurns,
    ...(options.episodeTimeoutMs === undefined ? {} : { episodeTimeoutMs: options.episodeTimeoutMs }),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
    ...(options.request === undefined ? {} : { request: options.request }),
    ...(options.storage === undefined ? {} : { storage: options.storage }),
  });
  if (exploration.end_reason === 'infra_error') {
    const i = exploration.infra_error;
    throw new AuthbenchError(i?.source === 'sandbox' ? 'SANDBOX_UNAVAILABLE' : 'MODEL_UNAVAILABLE', `policy exploration failed: ${i?.message ?? 'infrastructure error'}`);
  }
  const writeAttempts = countWriteAttempts(exploration);
  const first: PolicyAnswer = { phase: 'explore', raw: episodeAnswer(exploration) };
  const t = exploration.totals;
  const explored: GenerationUsage = { input_tokens: t.input_tokens, output_tokens: t.output_tokens, cost_usd: t.cost_usd };
  if (strategy === 'direct') return { strategy, raw: first.raw, answers: [first], ...parsed(first.raw), exploration, writeAttempts, usage: explored };

  const draft = parsed(first.raw);
  const response = await options.model.complete({
    system: tighteningSystemPrompt(),
    messages: [{ role: 'user', content: tighteningUserPrompt(task, { raw: first.raw, ...(draft.policy === undefined ? {} : { policy: draft.policy }) }) }],
    tools: [],
    ...options.request,
  });
  const second: PolicyAnswer = { phase: 'tighten', raw: response.text };
  const usage: GenerationUsage = {
    input_tokens: addOrNull(explored.input_tokens, response.usage.inputTokens),
    output_tokens: addOrNull(explored.output_tokens, response.usage.outputTokens),
    cost_usd: addOrNull(explored.cost_usd, response.costUsd),
  };
  return { strategy, raw: second.raw, answers: [first, second], ...parsed(second.raw), exploration, writeAttempts, usage };
}

/** One generation in a fresh container of the task image, removed afterwards. */
export async function generatePolicy(options: GeneratePolicyOptions): Promise<GeneratedPolicy> {
  const { engine, image, runId, ...rest } = options;
  // The model's exploration runs commands too: the task's storage limit holds for them as for the agent's.
  await using box = await openTaskSandbox(engine, options.task, image, { fileSizeMax: storageLimitOf(taskLimits(options.task).storageMb).bytes, ...(runId === undefined ? {} : { runId }) });
  await using storage = await guardTaskStorage(box, options.task);
  // Awaited here, not returned as a promise: `await using` would remove the container first.
  const generated = await writePolicy({ ...rest, session: box.session, container: box.container, storage });
  return generated;
}
