import { describe, expect, it } from 'vitest';
import { keystrokeCommand, mapAction } from './actions.ts';

describe('mapAction', () => {
  it.each([
    ['shell', { command: 'ls -la' }, 'ls -la'],
    ['bash', { command: 'make test' }, 'make test'],
    ['bash', { cmd: 'echo hi' }, 'echo hi'],
    ['Bash', { command: 'grep -c ERROR log', timeout: 120000 }, 'grep -c ERROR log'],
    ['execute_bash', { command: 'pytest -q' }, 'pytest -q'],
    ['run_command', { cmd: 'cat a' }, 'cat a'],
    ['exec_command', { cmd: 'sed -i s/a/b/ f' }, 'sed -i s/a/b/ f'],
    ['shell', { command: ['bash', '-lc', 'cd /app && ls'] }, 'cd /app && ls'],
    ['shell', { command: ['grep', '-r', 'two words', '/app'] }, "grep -r 'two words' /app"],
    ['shell', { command: ['echo', "it's"] }, "echo 'it'\\''s'"],
    ['bash_command', { keystrokes: 'ls -la /app\n' }, 'ls -la /app'],
  ] as const)('%s %j → %s', (name, args, command) => {
    expect(mapAction(name, args)).toMatchObject({ command });
  });

  it("keeps authbench's own timeout_sec and no one else's (other units)", () => {
    expect(mapAction('shell', { command: 'sleep 1', timeout_sec: 30 })).toEqual({ command: 'sleep 1', timeout_sec: 30 });
    expect(mapAction('Bash', { command: 'sleep 1', timeout: 30000 })).toEqual({ command: 'sleep 1' });
  });

  it.each([
    ['Read', { file_path: '/a' }, 'not a shell tool'],
    ['BASH', { command: 'ls' }, 'not a shell tool'],
    ['bash', { script: 'ls' }, 'no `command` or `cmd` argument'],
    ['bash', { command: 42 }, 'neither a string nor an argv list'],
    ['bash', { command: '  ' }, 'an empty command'],
    ['shell', { command: [] }, 'neither a string nor an argv list'],
    ['bash_command', { keystrokes: 3 }, 'is not a string'],
  ] as const)('%s %j is unmapped (%s)', (name, args, why) => {
    const mapped = mapAction(name, args);
    expect(mapped.command).toBeNull();
    expect('unmapped' in mapped ? mapped.unmapped : '').toContain(why);
  });

  it('refuses every keystroke after an unmappable one: the terminal state is unknown', () => {
    expect(mapAction('bash_command', { keystrokes: 'ls\n' }, true)).toMatchObject({ command: null, unmapped: expect.stringContaining('state is unknown') as unknown });
  });
});

describe('keystrokeCommand', () => {
  it.each([
    ['C-c', 'without a final Enter'],
    ['ls', 'without a final Enter'],
    ['echo a\necho b\n', 'several lines'],
    ['ihello\u001b:wq\n', 'control characters'],
    ['\n', 'an empty Enter'],
    ['cd /app\n', "changes the terminal's state"],
    ['export X=1\n', "changes the terminal's state"],
    ['vim notes.txt\n', 'interactive program'],
    ['python3\n', 'interactive program'],
  ])('%j is unmappable (%s)', (keys, why) => {
    const mapped = keystrokeCommand(keys);
    expect(mapped.command).toBeNull();
    expect('unmapped' in mapped ? mapped.unmapped : '').toContain(why);
  });

  it.each([
    ['python3 solve.py\n', 'python3 solve.py'],
    ['  cat /app/a.txt  \n', 'cat /app/a.txt'],
    ['cdrecord --help\n', 'cdrecord --help'],
  ])('%j is the command %j', (keys, command) => {
    expect(keystrokeCommand(keys)).toEqual({ command });
  });
});
