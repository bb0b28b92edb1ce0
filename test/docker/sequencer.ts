/**
 * The order the docker test files start in. They run on a bounded number of
 * workers (vitest.config.ts), so the longest should start first: left to
 * itself vitest orders files by earlier runs' timings when it has them and by
 * file size when it does not (a fresh CI checkout), which starts the two
 * longest files — small files that drive whole scripts — last. Files not
 * listed start first (unknown may be long); every other project keeps
 * vitest's own order.
 */
import { basename } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The docker project's files by wall time on the 2-core CI machine (ci tier, images built), longest first. */
export const DOCKER_LONGEST_FIRST: readonly string[] = [
  'adversarial.test.ts',
  'reproduce.test.ts',
  'eval.test.ts',
  'defenses.test.ts',
  'sandbox-run-cli.test.ts',
  // Seconds with its dataset bases built; about two minutes on a fresh machine (a Debian 13 debootstrap).
  'dataset.test.ts',
  'tasks.test.ts',
  'agent.test.ts',
  'suite.test.ts',
  'gold.test.ts',
  'sidecars.test.ts',
  // Seconds with the agent layers built; a minute or more each on a fresh machine (npm installs).
  'agents.test.ts',
  'installed-agent.test.ts',
  'eval-agent.test.ts',
  'sidecar-networks.test.ts',
  'egress-proxy.test.ts',
  'daemon-restart.test.ts',
  'validators.test.ts',
  'shards.test.ts',
  'background.test.ts',
  'controls.test.ts',
  'policy.test.ts',
  'sandbox-selftest.test.ts',
  'sandbox-agent.test.ts',
  'docker.test.ts',
  'counterfactual.test.ts',
  'orphans.test.ts',
  'trajectories.test.ts',
  'services.test.ts',
  'compile-fidelity.test.ts',
  'report-html.test.ts',
  'relay-forward.test.ts',
  'build-host.test.ts',
  'sandbox-launcher.test.ts',
  'sandbox-session.test.ts',
  'score.test.ts',
];

/** Where a docker test file goes in DOCKER_LONGEST_FIRST (-1: not listed, so first). */
export function dockerRank(file: string): number {
  return DOCKER_LONGEST_FIRST.indexOf(basename(file));
}

export default class DockerFirstLongest extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const docker = sorted.filter((s) => s.project.name.startsWith('docker'));
    // Within each docker project (vitest already grouped them), longest first.
    const ranked = docker.map((s, i) => ({ s, i, rank: dockerRank(s.moduleId) })).sort((a, b) => (a.s.project.name === b.s.project.name ? a.rank - b.rank : 0) || a.i - b.i);
    // The docker files keep the slots vitest gave them, in ranked order.
    let next = 0;
    return sorted.map((s) => (s.project.name.startsWith('docker') ? (ranked[next++]?.s ?? s) : s));
  }
}
