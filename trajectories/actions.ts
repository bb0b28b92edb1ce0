/**
 * Which tool calls of another harness are shell actions, and the command each
 * one runs: a small table per known agent, and one rule for keystrokes. Pure.
 * Anything the table does not cover is unmapped, with the reason, never
 * guessed: a replay that silently dropped or invented actions would not be the
 * same trajectory.
 */

export interface ShellTool {
  /** Argument names holding the command, first match wins. */
  args: readonly string[];
  /** `command`: one command per call; `keystrokes`: typed into a persistent terminal (see keystrokeCommand). */
  kind: 'command' | 'keystrokes';
  /** Who calls it so (documentation; the README's table is this one). */
  agents: string;
}

/** function_name → how its command is found. Names are matched exactly: `Bash` and `bash` are different agents' tools. */
export const SHELL_TOOLS: Readonly<Record<string, ShellTool>> = {
  shell: { args: ['command', 'cmd'], kind: 'command', agents: 'authbench (`command`, `timeout_sec`), Codex (`command` as an argv list)' },
  bash: { args: ['command', 'cmd'], kind: 'command', agents: 'mini-swe-agent, SWE-agent, generic bash tools' },
  Bash: { args: ['command'], kind: 'command', agents: 'Claude Code' },
  execute_bash: { args: ['command'], kind: 'command', agents: 'OpenHands' },
  run_command: { args: ['command', 'cmd'], kind: 'command', agents: 'generic' },
  exec_command: { args: ['cmd', 'command'], kind: 'command', agents: 'Codex (exec tool)' },
  bash_command: { args: ['keystrokes'], kind: 'keystrokes', agents: 'Terminus (tmux keystrokes)' },
};

export type MappedAction = { command: string; timeout_sec?: number } | { command: null; unmapped: string };

/** State a persistent terminal keeps between commands: one-shot replayed commands would lose it. */
const SESSION_BUILTINS = /^(cd|pushd|popd|export|unset|source|\.|alias|unalias|set|shopt|exec|ulimit|umask)(\s|$)/;
/** Programs that take over the terminal whatever their arguments: what follows is typed into them, not the shell. */
const FULL_SCREEN = /^(vim?|nano|emacs|less|more|man|top|htop|watch|tmux|screen|ssh)$/;
/** Interpreters that read the terminal when started bare (with a script or `-c` they are one command). */
const REPL = /^(python3?|ipython|node|irb|psql|mysql|sqlite3|bash|sh)$/;

/**
 * A keystroke action as one command, when it trivially is one: a single line
 * ended by Enter, without control keys (C-c, Escape, …), that neither changes
 * the shell's own state (cd, export, …) nor starts an interactive program.
 * Anything else needs the tmux session reproduced, which replay does not do.
 */
export function keystrokeCommand(keys: string): MappedAction {
  if (!keys.endsWith('\n')) return { command: null, unmapped: 'keystrokes without a final Enter (partial input or a control key)' };
  const line = keys.slice(0, -1);
  if (line.includes('\n')) return { command: null, unmapped: 'keystrokes of several lines (typed into whatever runs in the terminal)' };
  if (/[\u0000-\u001f\u007f]/.test(line)) return { command: null, unmapped: 'keystrokes with control characters' };
  const command = line.trim();
  if (command === '') return { command: null, unmapped: 'an empty Enter' };
  if (SESSION_BUILTINS.test(command)) return { command: null, unmapped: `\`${command.split(/\s/)[0] ?? ''}\` changes the terminal's state, which one-shot commands do not keep` };
  const words = command.split(/\s+/);
  const [first = ''] = words;
  if (FULL_SCREEN.test(first) || (REPL.test(first) && words.length === 1)) return { command: null, unmapped: `\`${first}\` starts an interactive program` };
  return { command };
}

const SHELLS = new Set(['bash', 'sh', '/bin/bash', '/bin/sh', '/usr/bin/bash', 'zsh']);

/** An argv list (Codex) as one command line: `bash -lc SCRIPT` is the script itself; otherwise each word quoted. */
function argvCommand(argv: readonly string[]): string {
  const [shell, flag, script, ...rest] = argv;
  if (shell !== undefined && SHELLS.has(shell) && (flag === '-c' || flag === '-lc') && script !== undefined && rest.length === 0) return script;
  return argv.map((w) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * The shell command of one tool call, or why there is none. `keystrokesBroken`
 * says an earlier keystroke action was unmappable: the terminal's state is
 * unknown after it, so later keystrokes are too.
 */
export function mapAction(functionName: string, args: Readonly<Record<string, unknown>>, keystrokesBroken = false): MappedAction {
  const tool = Object.hasOwn(SHELL_TOOLS, functionName) ? SHELL_TOOLS[functionName] : undefined;
  if (tool === undefined) return { command: null, unmapped: `\`${functionName}\` is not a shell tool authbench knows` };
  const key = tool.args.find((a) => args[a] !== undefined);
  const value = key === undefined ? undefined : args[key];
  if (value === undefined) return { command: null, unmapped: `no ${tool.args.map((a) => `\`${a}\``).join(' or ')} argument` };
  if (tool.kind === 'keystrokes') {
    if (typeof value !== 'string') return { command: null, unmapped: `\`${key ?? ''}\` is not a string` };
    if (keystrokesBroken) return { command: null, unmapped: "after an unmappable keystroke action the terminal's state is unknown" };
    return keystrokeCommand(value);
  }
  let command: string;
  if (typeof value === 'string') command = value;
  else if (Array.isArray(value) && value.length > 0 && value.every((w): w is string => typeof w === 'string')) command = argvCommand(value);
  else return { command: null, unmapped: `\`${key ?? ''}\` is neither a string nor an argv list` };
  if (command.trim() === '') return { command: null, unmapped: 'an empty command' };
  // Only authbench's own argument: other agents' timeouts come in other units (Claude Code: ms).
  const timeout = functionName === 'shell' ? args.timeout_sec : undefined;
  return typeof timeout === 'number' && timeout > 0 ? { command, timeout_sec: timeout } : { command };
}
