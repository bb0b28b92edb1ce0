/**
 * Test helper: a container of any image with the harness mounted read-only at
 * /opt/authbench exactly as task containers get it (launcher, agent, strace),
 * for the sandbox tests that do not start from a task.
 */
import { LABELS, type Container, type ContainerSpec, type Engine } from '../../docker/index.ts';
import { ensureHarness, harnessMount, LAUNCHER_PATH, MAIN_AGENT_ARGV_TAIL } from '../../sandbox/launcher/index.ts';

/** `mainAgent`: the first session's agent below the main process, as task containers of a session get it (taskenv). */
export async function harnessContainer(
  engine: Engine,
  spec: Omit<ContainerSpec, 'volumes' | 'idleCommand' | 'attachMain'> & { run: string; mainAgent?: boolean },
): Promise<Container> {
  const harness = await ensureHarness(engine);
  const { run, mainAgent, ...rest } = spec;
  return engine.startContainer({
    ...rest,
    labels: { ...(rest.labels ?? {}), [LABELS.run]: run },
    volumes: [harnessMount(harness)],
    ...(mainAgent === true ? { idleCommand: [LAUNCHER_PATH, ...MAIN_AGENT_ARGV_TAIL], attachMain: true } : { idleCommand: [LAUNCHER_PATH, '--idle'] }),
  });
}
