import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `docker` needs a running Docker
// engine (and builds images). `npm test` runs both.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', 'test/docker/**', 'tasks/**'],
        },
      },
      {
        test: {
          name: 'docker',
          include: ['test/docker/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 1_800_000,
          // One daemon, two cores: files share images, so run them one after another.
          fileParallelism: false,
          globalSetup: ['test/docker/global-setup.ts'],
        },
      },
    ],
  },
});
