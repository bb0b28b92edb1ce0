import chalk from 'chalk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../test/cli.ts';

const level = chalk.level;
afterEach(() => {
  chalk.level = level;
  vi.unstubAllEnvs();
});

describe('NO_COLOR', () => {
  it('turns colour off when set and not empty (chalk itself does not read it)', async () => {
    chalk.level = 1;
    vi.stubEnv('NO_COLOR', '');
    await runCli('tasks', 'list', '--tasks', 'no-such-folder');
    expect(chalk.level).toBe(1);
    vi.stubEnv('NO_COLOR', '1');
    await runCli('tasks', 'list', '--tasks', 'no-such-folder');
    expect(chalk.level).toBe(0);
  });
});
