/**
 * A job's orphans: containers and sidecar networks labelled with its run id whose owning process
 * is gone (an earlier run of the job killed with SIGKILL, or a double Ctrl-C). A new run or a
 * resume of the job removes them before it starts; another process still running the job keeps
 * its own.
 */
import { assertCleanSucceeded, cleanManaged } from './clean.ts';
import type { DockerEngine } from './engine.ts';
import { LABELS, type OrphanRemoval } from './types.ts';

export async function removeRunOrphans(engine: DockerEngine, runId: string): Promise<OrphanRemoval> {
  const report = await cleanManaged(engine, { labels: { [LABELS.run]: runId }, orphansOnly: true });
  assertCleanSucceeded(report);
  return { containers: report.containers.length, networks: report.networks.length };
}
