import { defineConfig } from 'vitest/config';
import DockerFirstLongest from './test/docker/sequencer.ts';

/**
 * Docker test files running at once. Every file keeps its own containers, run
 * labels, job folders and temp dirs, and nothing removes what another file
 * made, so any two can run side by side; what several files would build at the
 * same moment (the harness volume, task and family images) is made once,
 * before they start, in test/docker/global-setup.ts. On the 2-core CI machine
 * two workers beat one (measured: see the README's Tests section); more
 * oversubscribe the cores the containers need.
 */
const DOCKER_WORKERS = 2;

/**
 * Docker test files that run alone, after the others: the adversarial suite
 * fork-bombs, floods and exhausts its containers on purpose, and whether the
 * harness still answers in time under that is part of what it checks — next
 * to another file's containers on two cores its fork bomb ended
 * sandbox_tampered instead of completed.
 */
const DOCKER_EXCLUSIVE = ['test/docker/adversarial.test.ts'];

const docker = {
  testTimeout: 600_000,
  hookTimeout: 1_800_000,
  globalSetup: ['test/docker/global-setup.ts'],
};

// Projects: `unit` needs nothing but Node; `package` (the packed tarball,
// installed) needs the npm registry; `docker` and `docker-exclusive` (the
// Docker tier, `--project 'docker*'`) need a running Docker engine and build
// images. `npm test` runs them all, one group after another.
export default defineConfig({
  test: {
    // test/infra-retry-reporter.ts repeats every infrastructure retry (test/infra-retry.ts) at the end.
    reporters: ['default', './test/infra-retry-reporter.ts'],
    sequence: { sequencer: DockerFirstLongest },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', 'dist/**', 'test/docker/**', 'test/package/**', 'tasks/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // `npm pack`, the tarball installed from the registry into a temp folder, its bin run: needs the network.
        test: {
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          ...docker,
          name: 'docker',
          include: ['test/docker/**/*.test.ts'],
          exclude: DOCKER_EXCLUSIVE,
          maxWorkers: DOCKER_WORKERS,
          // Groups run one after another, each with its own worker bound.
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...docker,
          name: 'docker-exclusive',
          include: DOCKER_EXCLUSIVE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
