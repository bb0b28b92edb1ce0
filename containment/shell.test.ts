import { describe, expect, it } from 'vitest';
import { parseShell, resolvePath } from './shell.ts';

const words = (cmd: string, cwd?: string) => parseShell(cmd, cwd).map((c) => c.words);

describe('parseShell', () => {
  it.each([
    ['plain words', 'ls -la /app', [['ls', '-la', '/app']]],
    ['single quotes keep everything literal', `echo 'a "b" $X'`, [['echo', 'a "b" $X']]],
    ['double quotes keep spaces, drop escapes', `echo "a \\"b\\" c"`, [['echo', 'a "b" c']]],
    ['quotes glued to words', `echo pre'fix'"ed"`, [['echo', 'prefixed']]],
    ['backslash escapes', 'echo a\\ b', [['echo', 'a b']]],
    ['pipes and lists', 'cat a | grep x && echo ok || echo no; pwd', [['cat', 'a'], ['grep', 'x'], ['echo', 'ok'], ['echo', 'no'], ['pwd']]],
    ['newlines separate commands', 'cd /app\nls', [['cd', '/app'], ['ls']]],
    ['comments are dropped', 'ls # rm -rf /', [['ls']]],
    ['subshells and command substitution', 'echo $(cat /app/x) `id`', [['echo'], ['cat', '/app/x'], ['id']]],
    ['keywords in front are dropped', 'if test -f x; then rm x; fi', [['test', '-f', 'x'], ['rm', 'x']]],
    ['parameter expansions stay in the word', 'echo ${HOME}/x $((1+2))', [['echo', '${HOME}/x', '$((1+2))']]],
  ])('%s', (_name, cmd, expected) => {
    expect(words(cmd)).toEqual(expected);
  });

  it('reads redirections with fds, and keeps dups apart from files', () => {
    const [cmd] = parseShell('grep x a.txt > out.txt 2>&1 >> log 2> err < in');
    expect(cmd?.words).toEqual(['grep', 'x', 'a.txt']);
    expect(cmd?.redirects.map((r) => [r.op, r.fd, r.target])).toEqual([
      ['>', undefined, 'out.txt'],
      ['>&', 2, '1'],
      ['>>', undefined, 'log'],
      ['>', 2, 'err'],
      ['<', undefined, 'in'],
    ]);
  });

  it('reads heredoc bodies up to the delimiter, quoted or tab-stripped', () => {
    const cmds = parseShell("cat <<'EOF' > /app/f\nline $X\nEOF\npython3 - <<-PY\n\tprint(1)\n\tPY\necho done");
    expect(cmds.map((c) => c.words)).toEqual([['cat'], ['python3', '-'], ['echo', 'done']]);
    expect(cmds[0]?.redirects).toEqual([
      { op: '<<', fd: undefined, target: 'EOF', body: 'line $X' },
      { op: '>', fd: undefined, target: '/app/f', body: undefined },
    ]);
    expect(cmds[1]?.redirects[0]?.body).toBe('print(1)');
  });

  it('records leading assignments apart from the words', () => {
    expect(parseShell('A=1 B="x y" env')[0]).toMatchObject({ assignments: ['A=1', 'B=x y'], words: ['env'] });
  });

  it('follows cd chains, scoped to subshells', () => {
    const cmds = parseShell('cd /app && cat a; cd sub; (cd deep && ls); ls; cd ~; ls', '/');
    expect(cmds.map((c) => [c.words.join(' '), c.cwd])).toEqual([
      ['cd /app', '/'],
      ['cat a', '/app'],
      ['cd sub', '/app'],
      ['cd deep', '/app/sub'],
      ['ls', '/app/sub/deep'],
      ['ls', '/app/sub'],
      ['cd ~', '/app/sub'],
      ['ls', undefined],
    ]);
  });

  it('never throws on unbalanced input', () => {
    expect(words(`echo "unterminated`)).toEqual([['echo', 'unterminated']]);
    expect(words(`cat <<EOF\nno end`)[0]).toEqual(['cat']);
    expect(words(') ) ;;')).toEqual([]);
  });
});

describe('resolvePath', () => {
  it.each([
    ['/app/../etc/x', undefined, '/etc/x'],
    ['sub/./f', '/app', '/app/sub/f'],
    ['../x/', '/app/sub', '/app/x'],
    ['rel', undefined, undefined],
    ['~/x', '/app', undefined],
    ['$HOME/x', '/app', undefined],
    ['*.txt', '/app', undefined],
  ])('%s in %s', (path, cwd, expected) => {
    expect(resolvePath(path, cwd)).toBe(expected);
  });
});
