/**
 * Prepare: everything the pending rollouts run with, from the task bundles
 * (each task's stored gold read once, by goldstore): the policy of every
 * (task, source) and its static score, the ledger, and the task images.
 * Built-in policies are resolved before anything is built, so a missing gold
 * fails the job before Docker is touched. A generated policy needs the built
 * image and a model, so it is made on first use — once per (task, attempt),
 * shared by that attempt's defenses — inside the execute phase's pool.
 *
 * Failures of the infrastructure (a build, the policy writer's model or
 * sandbox) become the affected rollouts' inputs, never the job's end.
 */
import { agentPolicy, buildAgentLayer, DEFAULT_RELAY_PORT, getAgent } from '../agents/index.ts';
import { AuthbenchError } from '../core/index.ts';
import type { BuildHostAccess, Engine } from '../docker/index.ts';
import { builtinPolicy, isBuiltinPolicySource, staticScore, type TaskBundle } from '../goldstore/index.ts';
import { createPolicyWriter, generatePolicy, type GeneratedPolicy } from '../policygen/index.ts';
import type { PolicyScore } from '../score/index.ts';
import { denyAllPolicy, type Policy } from '../sandbox/policy/index.ts';
import type { Task } from '../task-format/index.ts';
import { buildTaskImage } from '../taskenv/index.ts';
import { jobBuildOptions, type EvalConfig, type RolloutSpec } from './config.ts';
import type { JobPlan } from './plan.ts';
import type { GeneratedRecord, RolloutContext } from './rollout.ts';

/** What a policy writer answered: its raw answers, how the last one parsed, the policy if valid, and its cost. */
export type WrittenPolicy = Pick<GeneratedPolicy, 'answers' | 'parse' | 'policy' | 'usage'>;

/** Writes one `generated` policy in a container of the task's image (default: policygen with the job's model). */
export type PolicyWriterFn = (request: { engine: Engine; config: EvalConfig; task: Task; image: string; seed: number; runId: string }) => Promise<WrittenPolicy>;

/** What one rollout runs with, from its task's bundle and image (the ledger is the task's gold policy, whatever policy the rollout runs under). */
export type RolloutInputs = Pick<RolloutContext, 'task' | 'image' | 'policy' | 'ledger' | 'staticScore' | 'generated'>;

/** Why a rollout cannot start: an infrastructure error while preparing it, and where. */
export interface Unstartable {
  task: Task;
  failure: AuthbenchError;
  source: 'build' | 'policy';
}

export interface PreparedJob {
  /**
   * The inputs of a pending rollout on an engine (default: the job's), or why it cannot start. The task's image is
   * built there on the first call for that engine; a generated policy is written on the first call for its (task, attempt).
   */
  inputsFor(spec: RolloutSpec, engine?: Engine): Promise<RolloutInputs | Unstartable>;
}

export interface PrepareOptions {
  config: EvalConfig;
  plan: JobPlan;
  bundles: ReadonlyMap<string, TaskBundle>;
  /** `job-<name>`: labels the containers policy generation starts. */
  runId: string;
  /** A task image starts or ends building on an engine (the job's own up front, others on their first rollout of the task). */
  onBuild?: (taskId: string, phase: 'building' | 'built', engine: Engine) => void;
  writePolicy?: PolicyWriterFn;
  /** The job's hand-written policy (config.policy_file), read and checked by the caller. */
  policyFile?: Policy;
  /** The build CA and proxies for the images' RUN steps; not in the config (they never change an image), never given to a rollout. */
  hostAccess?: BuildHostAccess;
}

/** policygen with the eval's model, in a fresh container of the task's image. */
export const writeWithJobModel: PolicyWriterFn = async ({ engine, config, task, image, seed, runId }) => {
  const model = await createPolicyWriter(config.model, task, {
    oracleTracesDir: config.oracle_traces_dir,
    client: {
      ...(config.base_url === undefined ? {} : { baseUrl: config.base_url }),
      cache: { mode: config.cache },
      timeoutMs: config.model_timeout_sec * 1000,
      retry: { maxRetries: config.model_retries },
    },
  });
  return generatePolicy({ engine, task, image, model, strategy: config.policy_strategy ?? 'direct', maxTurns: config.max_turns, request: { seed }, runId });
};

const key = (...parts: (string | number)[]): string => parts.join('\u0000');

function bundleOf(bundles: ReadonlyMap<string, TaskBundle>, taskId: string): TaskBundle {
  const bundle = bundles.get(taskId);
  if (bundle === undefined) throw new AuthbenchError('INTERNAL', `no task bundle for ${taskId}: the plan and the selected tasks disagree`);
  return bundle;
}

/**
 * Built-in policies and the job's policy file, with their static scores, once per (task, source) of the
 * pending rollouts. Pure; GOLD_MISSING for `gold` without one.
 */
export function builtinPolicies(
  pending: readonly RolloutSpec[],
  bundles: ReadonlyMap<string, TaskBundle>,
  policyFile?: Policy,
): Map<string, { policy: Policy; score: PolicyScore | null }> {
  const out = new Map<string, { policy: Policy; score: PolicyScore | null }>();
  for (const spec of pending) {
    const k = key(spec.taskId, spec.policy);
    if (spec.policy === 'none' || spec.policy === 'generated' || out.has(k)) continue;
    const bundle = bundleOf(bundles, spec.taskId);
    let policy: Policy;
    if (spec.policy === 'file') {
      if (policyFile === undefined) throw new AuthbenchError('INTERNAL', `rollout ${spec.id}: the job has no policy file`);
      policy = policyFile;
    } else if (isBuiltinPolicySource(spec.policy)) policy = builtinPolicy(spec.policy, bundle);
    else throw new AuthbenchError('INTERNAL', `rollout ${spec.id}: unknown policy source`);
    out.set(k, { policy, score: staticScore(bundle, policy) });
  }
  return out;
}

export async function prepareJob(engine: Engine, options: PrepareOptions): Promise<PreparedJob> {
  const { config, plan, bundles } = options;
  const policies = builtinPolicies(plan.pending, bundles, options.policyFile);

  // Builds one at a time per engine; a failed build is that task's rollouts' infrastructure error
  // on that engine. With --agent, the agent's layer over each task image is what the rollouts run
  // (its failed install names the agent and the step: buildAgentLayer).
  const agent = config.agent === undefined ? undefined : getAgent(config.agent.name);
  const hostAccess = options.hostAccess === undefined ? {} : { hostAccess: options.hostAccess };
  const images = new Map<Engine, Map<string, Promise<string | AuthbenchError>>>();
  const queues = new Map<Engine, Promise<unknown>>();
  /** The task's image on this engine, built (content-hash cached) the first time it is asked for there. */
  const imageOn = (on: Engine, id: string): Promise<string | AuthbenchError> => {
    const perEngine = images.get(on) ?? new Map<string, Promise<string | AuthbenchError>>();
    images.set(on, perEngine);
    const known = perEngine.get(id);
    if (known !== undefined) return known;
    const build = async (): Promise<string | AuthbenchError> => {
      const { task } = bundleOf(bundles, id);
      options.onBuild?.(id, 'building', on);
      try {
        const image = (await buildTaskImage(on, task, { ...jobBuildOptions(config), ...hostAccess })).tag;
        return agent === undefined ? image : (await buildAgentLayer(on, { taskImage: image, taskId: task.id, agent, ...hostAccess })).tag;
      } catch (e) {
        if (!(e instanceof AuthbenchError) || !e.isInfrastructure) throw e;
        return e;
      } finally {
        options.onBuild?.(id, 'built', on);
      }
    };
    // One build at a time per engine: builds of tasks sharing a base would otherwise race to make it.
    const made = (queues.get(on) ?? Promise.resolve()).then(build, build).then(async (image) => {
      // On another engine than the job's, failed because that engine went away: forgotten, so it builds again once back.
      if (typeof image !== 'string' && on !== engine && !(await on.ping().then(() => true, () => false))) perEngine.delete(id);
      return image;
    });
    queues.set(on, made.catch(() => undefined));
    perEngine.set(id, made);
    return made;
  };
  // Up front on the job's engine, so a build that fails the job does so before any rollout;
  // other engines (eval --engine) build on their first rollout of each task: one that fails never builds.
  for (const id of new Set(plan.pending.map((s) => s.taskId))) await imageOn(engine, id);

  const write = options.writePolicy ?? writeWithJobModel;
  const generations = new Map<string, Promise<{ policy: Policy; score: PolicyScore | null; generated: GeneratedRecord } | AuthbenchError>>();
  const invocation = new Date().toISOString();
  /**
   * A model-written policy for one (task, attempt). An invalid answer scores 0 and the execution
   * runs under deny-all (nothing is granted that the writer did not validly grant); only
   * infrastructure failures come back as errors, to become that attempt's rollouts' infra_error.
   */
  const generated = (spec: RolloutSpec, bundle: TaskBundle, image: string, on: Engine): Promise<{ policy: Policy; score: PolicyScore | null; generated: GeneratedRecord } | AuthbenchError> => {
    const k = key(spec.taskId, spec.attempt);
    const known = generations.get(k);
    if (known !== undefined) return known;
    // The invocation's start in the id: a resumed job that generates again spent again.
    const id = `${spec.taskId}#a${spec.attempt}@${invocation}`;
    // On the engine of the attempt's first rollout, where its image is; every defense of the attempt shares the policy.
    const made = write({ engine: on, config, task: bundle.task, image, seed: spec.seed, runId: options.runId }).then(
      (g) => ({
        policy: g.policy ?? denyAllPolicy(),
        score: staticScore(bundle, { valid: g.parse.valid, problems: g.parse.problems, ...(g.policy === undefined ? {} : { policy: g.policy }) }),
        generated: { answers: g.answers, status: g.parse.status, valid: g.parse.valid, usage: { id, ...g.usage } },
      }),
      (e: unknown) => {
        if (e instanceof AuthbenchError && e.isInfrastructure) return e;
        throw e;
      },
    );
    generations.set(k, made);
    return made;
  };

  return {
    async inputsFor(spec, on = engine) {
      const bundle = bundleOf(bundles, spec.taskId);
      const { task } = bundle;
      const image = await imageOn(on, spec.taskId);
      if (typeof image !== 'string') return { task, failure: image, source: 'build' };
      // An installed agent's own runtime (its prefix, its state, the relay port) is granted around every
      // policy it runs under: measured against the gold alone, its start-up would count as harm.
      const ledger = agent === undefined || bundle.ledger === undefined ? bundle.ledger : agentPolicy(bundle.ledger, agent, DEFAULT_RELAY_PORT);
      const common = { task, image, ledger };
      if (spec.policy === 'none') return { ...common, policy: undefined, staticScore: null };
      if (spec.policy === 'generated') {
        const g = await generated(spec, bundle, image, on);
        if (g instanceof AuthbenchError) return { task, failure: g, source: 'policy' };
        return { ...common, policy: g.policy, staticScore: g.score, generated: g.generated };
      }
      const resolved = policies.get(key(spec.taskId, spec.policy));
      if (resolved === undefined) throw new AuthbenchError('INTERNAL', `rollout ${spec.id} was not prepared`);
      return { ...common, policy: resolved.policy, staticScore: resolved.score };
    },
  };
}
