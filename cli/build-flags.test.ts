import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { parseBuildFlags, withBuildFlags } from './build-flags.ts';

async function parse(argv: string[]): Promise<{ task: string[]; 'base-map'?: string | string[]; 'build-arg'?: string | string[] }> {
  const y = withBuildFlags(yargs(argv).strict().positional('task', { type: 'string', array: true }).command('build [task..]', 'b'));
  return (await y.parseAsync()) as never;
}

describe('build flags', () => {
  it('repeat without swallowing the positionals after them', async () => {
    const args = await parse(['build', '--base-map', 'node:*=img:1', 'task-a', '--base-map', 'ruby:*=img:2', '--build-arg', 'A=b=c', 'task-b']);
    expect(args.task).toEqual(['task-a', 'task-b']);
    expect(await parseBuildFlags(args)).toEqual({
      baseMapEntries: [
        { pattern: 'node:*', image: 'img:1' },
        { pattern: 'ruby:*', image: 'img:2' },
      ],
      buildArgs: { A: 'b=c' },
    });
  });

  it('are optional, and a malformed one is INVALID_ARGUMENT naming the flag', async () => {
    expect(await parseBuildFlags({})).toEqual({ baseMapEntries: [], buildArgs: {} });
    for (const [flags, flag] of [
      [{ 'base-map': 'node:*' }, '--base-map'],
      [{ 'build-arg': '=x' }, '--build-arg'],
    ] as const) {
      const failure = await parseBuildFlags(flags).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AuthbenchError);
      expect((failure as AuthbenchError).message).toContain(flag);
    }
  });
});
