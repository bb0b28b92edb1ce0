/**
 * Test helper: a container of any image with the harness mounted read-only at
 * /opt/authbench exactly as task containers get it (launcher, agent, strace),
 * for the sandbox tests that do not start from a task.
 */
import { LABELS, type Container, type ContainerSpec, type Engine } from '../../docker/index.ts';
import { ensureHarness, harnessMount, LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';

export async function harnessContainer(engine: Engine, spec: Omit<ContainerSpec, 'volumes' | 'idleCommand'> & { run: string }): Promise<Container> {
  const harness = await ensureHarness(engine);
  const { run, ...rest } = spec;
  return engine.startContainer({
    ...rest,
    labels: { ...(rest.labels ?? {}), [LABELS.run]: run },
    volumes: [harnessMount(harness)],
    idleCommand: [LAUNCHER_PATH, '--idle'],
  });
}
