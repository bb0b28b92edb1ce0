/**
 * A job's orphans: containers and sidecar networks labelled with its run id whose owning process
 * is gone (an earlier run of the job killed with SIGKILL, or a double Ctrl-C). A new run or a
 * resume of the job removes them before it starts; another process still running the job keeps
 * its own.
 */
import { cleanManaged } from './clean.ts';
import type { DockerEngine } from './engine.ts';
import { LABELS, type OrphanList, type OrphanRemoval } from './types.ts';

/** Before the one retry: a daemon restarted under a running container may hold its overlay mount busy for a moment. */
const RETRY_AFTER_MS = 2_000;

/**
 * Removes them, trying a failed removal once more; what still cannot go is returned in `left`, not
 * thrown: an orphan is no part of the new run (its rollouts get containers of their own), so one the
 * daemon refuses to remove ("device or resource busy" after a restart) must not stop a resume.
 */
export async function removeRunOrphans(engine: DockerEngine, runId: string): Promise<OrphanRemoval> {
  const labels = { [LABELS.run]: runId };
  const first = await cleanManaged(engine, { labels, orphansOnly: true });
  if (first.failures.length === 0) return { containers: first.containers.length, networks: first.networks.length };
  await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
  const again = await cleanManaged(engine, { labels, orphansOnly: true });
  return {
    containers: first.containers.length + again.containers.length,
    networks: first.networks.length + again.networks.length,
    ...(again.failures.length === 0 ? {} : { left: again.failures.map((f) => ({ id: f.id.slice(0, 12), message: f.message })) }),
  };
}

/** Every run's orphans on this engine, as `clean --containers` would remove them (a dry run of it). */
export async function listOrphans(engine: DockerEngine): Promise<OrphanList> {
  const report = await cleanManaged(engine, { orphansOnly: true, containersOnly: true, dryRun: true });
  return { containers: report.containers.map((c) => c.id), networks: report.networks };
}
