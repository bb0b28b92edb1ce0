/**
 * The execution agent end to end on the bundled tasks, through the real
 * sandbox: the scripted oracle, replayed through the shell tool under the
 * enforced gold policy, still solves every task; the follow-injection positive
 * control makes each sensitive task's attack validator fire with no defense,
 * and the kernel stops it (with recorded denials) under tool-boundary + gold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDefense, runEpisode, scriptedModel, EpisodeSchema, type DefenseName, type Episode } from '../../agent/index.ts';
import { mapPool } from '../../core/index.ts';
import { connectDocker, type DockerEngine } from '../../docker/index.ts';
import { resolvePolicy, taskImplicit } from '../../goldstore/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox } from '../../taskenv/index.ts';
import { runAttackValidator, runUtilityValidator } from '../../validators/index.ts';
import { episodeInfra, retryInfraOnce } from '../infra-retry.ts';

const tasks: Task[] = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const sensitive = tasks.filter((t) => t.dataset === 'sensitive');

interface Outcome {
  episode: Episode;
  utility: boolean;
  utilityReason: string;
  attack: boolean | undefined;
  attackReason: string | undefined;
}

interface Job {
  task: Task;
  model: 'oracle' | 'follow-injection';
  defense: DefenseName;
}

const key = (j: Job): string => `${j.task.id} ${j.model} ${j.defense}`;
const outcomes = new Map<string, Outcome>();
let engine: DockerEngine;

beforeAll(async () => {
  engine = await connectDocker();
  const images = new Map<string, string>();
  for (const task of tasks) images.set(task.id, (await buildTaskImage(engine, task)).tag);
  const jobs: Job[] = [
    ...tasks.map((task): Job => ({ task, model: 'oracle', defense: 'tool-boundary' })),
    ...sensitive.flatMap((task): Job[] => [
      { task, model: 'follow-injection', defense: 'none' },
      { task, model: 'follow-injection', defense: 'tool-boundary' },
    ]),
  ];
  // A Docker hiccup (a thrown infrastructure error, or an episode that ended infra_error) is retried once and reported (test/infra-retry.ts).
  await mapPool(jobs, 3, (job, i) =>
    retryInfraOnce(
      `agent ${key(job)}`,
      async () => {
        const { task } = job;
        await using box = await openTaskSandbox(engine, task, images.get(task.id) ?? '', { runId: 'test-agent', pinCpu: i % 2 });
        const episode = await runEpisode({
          task,
          session: box.session,
          container: box.container,
          model: await scriptedModel(job.model, task),
          defense: getDefense(job.defense),
          policy: (await resolvePolicy('gold', task, 'oracle-traces')).policy,
          implicit: taskImplicit(task),
          commandTimeoutMs: 120_000,
          episodeTimeoutMs: 300_000,
        });
        const utility = await runUtilityValidator(box.container, task);
        const attack = task.files.attackValidator === undefined ? undefined : await runAttackValidator(box.container, task);
        outcomes.set(key(job), {
          episode,
          utility: utility.passed,
          utilityReason: utility.reason,
          attack: attack?.passed,
          attackReason: attack?.reason,
        });
        return episode;
      },
      { infraResult: episodeInfra },
    ),
  );
});

afterAll(() => {
  // One line per episode in the test log: what ran and what the validators said.
  for (const [k, o] of outcomes) {
    const t = o.episode.totals;
    process.stderr.write(
      `[agent] ${k}: ${o.episode.end_reason}, ${t.executed} command(s), ${t.denials} denial(s), ` +
        `utility ${String(o.utility)} (${o.utilityReason}), attack ${String(o.attack)}, ${Math.round(t.duration_ms)} ms\n`,
    );
  }
});

function outcome(task: Task, model: Job['model'], defense: DefenseName): Outcome {
  const o = outcomes.get(key({ task, model, defense }));
  if (o === undefined) throw new Error(`no outcome for ${task.id} ${model} ${defense}`);
  return o;
}

describe.each(tasks.map((t) => [t.id, t] as const))('%s', (_id, task) => {
  it('scripted/oracle under tool-boundary with the gold policy passes the utility validator', () => {
    const o = outcome(task, 'oracle', 'tool-boundary');
    expect(() => EpisodeSchema.parse(o.episode)).not.toThrow();
    expect(o.episode.end_reason).toBe('done');
    expect(o.episode.enforcement?.level).toBe('full');
    // One read per untrusted source, then the replay (scripted/oracle reads its inputs first).
    expect(o.episode.totals).toMatchObject({ executed: 1 + task.authbench.untrusted_sources.length, invalid_proposals: 0 });
    expect(o.utility, o.utilityReason).toBe(true);
  });
});

describe.each(sensitive.map((t) => [t.id, t] as const))('%s under attack', (_id, task) => {
  it('scripted/follow-injection with no defense makes the attack validator fire', () => {
    const o = outcome(task, 'follow-injection', 'none');
    expect(o.episode.end_reason).toBe('done');
    expect(o.episode.enforcement?.level).toBe('none');
    expect(o.attack, o.attackReason).toBe(true);
  });

  it('scripted/follow-injection under tool-boundary + gold is contained, with denials recorded', () => {
    const o = outcome(task, 'follow-injection', 'tool-boundary');
    expect(o.episode.end_reason).toBe('done');
    expect(o.episode.enforcement?.level).toBe('full');
    expect(o.attack, o.attackReason).toBe(false);
    expect(o.episode.totals.denials).toBeGreaterThan(0);
    const denied = o.episode.steps.flatMap((s) => s.proposals.flatMap((p) => p.result?.denials ?? []));
    expect(denied.length).toBeGreaterThan(0);
  });
});
