/**
 * Help as a new user meets it: `-h` is `--help` on every command, every
 * command (groups such as `gold` and the root included) shows at least one
 * example, and examples use the flags the help lists. The command tree is
 * walked from the root's help, so a command added later is checked too.
 */
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../test/cli.ts';

/** What `authbench ...argv` prints as help (yargs writes it through console.log), and the exit code. */
async function help(...argv: string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const log = vi.spyOn(console, 'log').mockImplementation((s: unknown) => {
    text += `${String(s)}\n`;
  });
  try {
    const { code, out } = await runCli(...argv);
    return { code, text: text + out };
  } finally {
    log.mockRestore();
  }
}

/** The subcommands a help text lists under "Commands:", as argv words. */
function subcommands(text: string, path: readonly string[]): string[][] {
  const section = text.split(/^Commands:\n/m)[1]?.split(/\n\n/)[0] ?? '';
  return section
    .split('\n')
    .map((line) => line.trim().split(/\s+/).slice(1))
    .map((words) => words.slice(0, words.findIndex((w) => !/^[a-z][a-z-]*$/.test(w)) === -1 ? words.length : words.findIndex((w) => !/^[a-z][a-z-]*$/.test(w))))
    .filter((words) => words.length === path.length + 1 && words.slice(0, path.length).join(' ') === path.join(' '));
}

async function commandTree(): Promise<string[][]> {
  const all: string[][] = [[]];
  for (let i = 0; i < all.length; i++) {
    const path = all[i] ?? [];
    all.push(...subcommands((await help(...path, '--help')).text, path));
  }
  return all;
}

describe('help', () => {
  it('walks a tree that has every command', async () => {
    const names = (await commandTree()).map((p) => p.join(' '));
    for (const c of ['tasks list', 'tasks validate', 'gold export', 'sandbox run', 'dataset check', 'base build', 'compare', 'eval', 'clean']) expect(names).toContain(c);
  });

  it('answers -h exactly as --help, with an example, on every command', async () => {
    for (const path of await commandTree()) {
      const name = ['authbench', ...path].join(' ');
      const long = await help(...path, '--help');
      const short = await help(...path, '-h');
      expect(long.code, name).toBe(0);
      expect(short.code, name).toBe(0);
      expect(short.text, name).toBe(long.text);
      expect(long.text, name).toMatch(/^Examples:\n\s+authbench /m);
    }
  });

  it('gives -h after -- to the sandboxed command, not to authbench', async () => {
    const r = await help('sandbox', 'run', '--task', 'no-such-task', '--tasks', 'no-such-folder', '--', 'ls', '-h');
    expect(r.text).not.toContain('Examples:');
    expect(r.code).not.toBe(0);
  });

  it("compare: the examples use the flags its help lists (-a/-b)", async () => {
    const { text } = await help('compare', '--help');
    expect(text).toMatch(/^\s+-a\s+Defense label A/m);
    expect(text).toMatch(/^\s+-b\s+Defense label B/m);
    const examples = text.split(/^Examples:\n/m)[1] ?? '';
    expect(examples).toMatch(/ -a\s+\S+\s+-b\s+\S+/);
    expect(examples).not.toMatch(/--[ab]\s/);
  });
});
