import { describe, expect, it } from 'vitest';
import type { Container, ExecOptions, ExecResult } from '../docker/index.ts';
import { ancestorListingCommand, snapshotContainer } from './from-image.ts';

describe('ancestorListingCommand', () => {
  it('lists / and every directory above the roots one level deep', () => {
    const argv = ancestorListingCommand(['/usr/local/bin', '/app']);
    expect(argv.slice(0, 7)).toEqual(['find', '/', '/usr', '/usr/local', '-maxdepth', '1', '-xdev']);
  });
});

/** A container whose exec answers from a table keyed by argv[0] and the first find root. */
function fakeContainer(answer: (cmd: readonly string[]) => Partial<ExecResult>): Container & { calls: string[][] } {
  const calls: string[][] = [];
  const exec = (options: ExecOptions): Promise<ExecResult> => {
    calls.push([...options.cmd]);
    return Promise.resolve({
      exitCode: 0,
      timedOut: false,
      stdout: '',
      stderr: '',
      stdoutTruncated: false,
      stderrTruncated: false,
      durationMs: 1,
      ...answer(options.cmd),
    });
  };
  const unused = (): Promise<never> => Promise.reject(new Error('not used'));
  return {
    id: 'fake',
    image: 'fake:image',
    calls,
    exec,
    copyIn: unused,
    putFiles: unused,
    readFile: unused,
    copyOut: unused,
    remove: () => Promise.resolve(),
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

const records = (...r: string[]): string => r.map((x) => `${x}\0`).join('');

describe('snapshotContainer', () => {
  const tree = (cmd: readonly string[]): Partial<ExecResult> => {
    if (cmd[0] === 'realpath') return { stdout: '/usr/bin\n/app\n/nope\n' };
    if (cmd.includes('-maxdepth')) return { stdout: records('d 755 /', 'l 777 /bin', 'usr/bin', 'd 755 /usr', 'd 755 /app') };
    return {
      exitCode: 1,
      stdout: records('l 777 /bin', 'usr/bin', 'd 755 /usr/bin', 'f 755 /usr/bin/dash', 'd 755 /app', 'f 644 /app/a'),
      stderr: "find: '/nope': No such file or directory\n",
    };
  };

  it('lists the roots and their realpaths, tolerating a missing root', async () => {
    const c = fakeContainer(tree);
    const fs = await snapshotContainer(c, ['/bin', '/app', '/nope']);
    expect(c.calls[0]).toEqual(['realpath', '-m', '--', '/bin', '/app', '/nope']);
    // Roots listed: the given ones plus /usr/bin (the realpath of /bin), sorted.
    expect(c.calls[2]?.slice(0, 5)).toEqual(['find', '/app', '/bin', '/nope', '/usr/bin']);
    expect(fs.roots).toEqual(['/app', '/bin', '/nope', '/usr/bin']);
    expect(fs.entries.find((e) => e.path === '/bin')?.target).toBe('/usr/bin');
    expect(fs.entries.map((e) => e.path)).toContain('/usr/bin/dash');
  });

  it('turns any other find failure into TRACE_UNREADABLE with find\'s words', async () => {
    const c = fakeContainer((cmd) => (cmd[0] === 'find' ? { exitCode: 1, stderr: 'find: unknown predicate `-printf\'\n' } : tree(cmd)));
    await expect(snapshotContainer(c, ['/app'])).rejects.toMatchObject({
      code: 'TRACE_UNREADABLE',
      details: expect.arrayContaining(["find: unknown predicate `-printf'"]),
    });
  });

  it('refuses a truncated listing rather than scoring against half an image', async () => {
    const c = fakeContainer((cmd) => (cmd[0] === 'find' && !cmd.includes('-maxdepth') ? { stdoutTruncated: true } : tree(cmd)));
    await expect(snapshotContainer(c, ['/app'])).rejects.toMatchObject({ code: 'TRACE_UNREADABLE', message: /scored roots/ });
  });
});
